// How far to trust a plan's figures (docs/calibration.md §5): the profile's
// calibration in one line, and whether a fullest tile is within the
// profile's memory error band of the tile capacity.
#ifndef AUTOSHARD_COSTMODEL_CALIBRATION_H_
#define AUTOSHARD_COSTMODEL_CALIBRATION_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "proto/device.pb.h"

namespace autoshard {

// "<profile>: <status>; error bands: throughput +-15%, fullest tile +-15%
// of a tile", or "<profile>: not calibrated ..." when the profile has no
// calibration status.
std::string CalibrationLine(const proto::DeviceProfile& profile);

// True when |bytes_per_tile - max_tile_bytes| <= memory_error_band x
// bytes_per_tile: the model cannot tell whether that tile fits. A profile
// without a band (0) is never within it.
bool WithinMemoryBand(const proto::DeviceProfile& profile,
                      int64_t max_tile_bytes);

// The conditions of one plan that the calibration may not have checked.
struct PlanConditions {
  int64_t batch = 1;
  std::string precision;  // "fp16" or "fp32"
  int num_ipus = 1;
  // Per op class with non-constant nodes: its share of Σ node times (0..1).
  std::vector<std::pair<std::string, double>> class_time_share;
};

// Where `plan` lies outside what the profile's calibration checked
// (Calibration's min_batch..max_batch, precisions, op_classes, max_ipus),
// one phrase each, e.g. "batch 512 (the facts: 1 to 356)", "2 IPUs (the
// facts ran on 1: inter-IPU copies unchecked)", "op class control_flow
// (12% of the time; no fact has it)". An op class under 1% of the time is
// not named. Empty when inside, or when the profile states no coverage
// (each check is skipped when its field is unset).
std::vector<std::string> CoverageNotes(const proto::DeviceProfile& profile,
                                       const PlanConditions& plan);

}  // namespace autoshard

#endif  // AUTOSHARD_COSTMODEL_CALIBRATION_H_
