#include "costmodel/calibration.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

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

std::vector<std::string> CoverageNotes(const proto::DeviceProfile& profile,
                                       const PlanConditions& plan) {
  const proto::Calibration& c = profile.calibration();
  std::vector<std::string> notes;
  if (c.max_batch() > 0 &&
      (plan.batch < c.min_batch() || plan.batch > c.max_batch())) {
    notes.push_back(absl::StrFormat("batch %d (the facts: %d to %d)",
                                    plan.batch, c.min_batch(), c.max_batch()));
  }
  auto has = [](const auto& list, const std::string& x) {
    return std::find(list.begin(), list.end(), x) != list.end();
  };
  if (c.precisions_size() > 0 && !has(c.precisions(), plan.precision)) {
    notes.push_back(absl::StrCat(plan.precision, " (the facts: ",
                                 absl::StrJoin(c.precisions(), ", "), ")"));
  }
  if (c.max_ipus() > 0 && plan.num_ipus > c.max_ipus()) {
    notes.push_back(absl::StrFormat(
        "%d IPUs (the facts ran on %d: inter-IPU copies unchecked)",
        plan.num_ipus, c.max_ipus()));
  }
  if (c.op_classes_size() > 0) {
    for (const auto& [op_class, share] : plan.class_time_share) {
      if (share >= 0.01 && !has(c.op_classes(), op_class)) {
        notes.push_back(
            absl::StrFormat("op class %s (%.0f%% of the time; no fact has it)",
                            op_class, 100 * share));
      }
    }
  }
  return notes;
}

}  // namespace autoshard
