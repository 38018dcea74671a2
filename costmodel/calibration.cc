#include "costmodel/calibration.h"

#include <cmath>

#include "absl/strings/str_format.h"

namespace autoshard {

std::string CalibrationLine(const proto::DeviceProfile& profile) {
  const proto::Calibration& c = profile.calibration();
  if (c.status().empty()) {
    return absl::StrFormat(
        "%s: not calibrated (the profile states no calibration; "
        "`autoshard calibrate --compile-cmd` fits one)",
        profile.name());
  }
  return absl::StrFormat(
      "%s; error bands: throughput +-%.0f%%, fullest tile +-%.0f%% of a tile",
      c.status(), 100 * c.throughput_error_band(), 100 * c.memory_error_band());
}

bool WithinMemoryBand(const proto::DeviceProfile& profile,
                      int64_t max_tile_bytes) {
  const double band = profile.calibration().memory_error_band() *
                      static_cast<double>(profile.bytes_per_tile());
  return band > 0 && std::abs(static_cast<double>(profile.bytes_per_tile()) -
                              static_cast<double>(max_tile_bytes)) <= band;
}

}  // namespace autoshard
