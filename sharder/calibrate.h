// `autoshard calibrate` (docs/calibration.md §6): learns a profile's memory
// constants from a real compiler. A few candidate splits of each model are
// compiled with the user's command; each "Out of memory on tile T: M bytes"
// line, and each "fullest tile T: M bytes" line a compile wrapper prints per
// IPU, is one observation of IPU T / tiles' fullest tile. The fit finds the
// scale s of every op class's code and codelet bytes and the per-tile fixed
// bytes F that make the tile-memory model's fullest tile match them: F is
// uniform (it never changes which tile is fullest), so for each s the best
// F is the mean residual (floored at 0), and s is searched on a log grid
// (0.05 .. 20) then refined by golden section on the squared residuals.
#ifndef AUTOSHARD_SHARDER_CALIBRATE_H_
#define AUTOSHARD_SHARDER_CALIBRATE_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"
#include "proto/device.pb.h"
#include "sharder/autoshard.h"

namespace autoshard {

// One model to compile, with where its external data is.
struct CalibrationModel {
  std::string path;  // for messages
  onnx::ModelProto model;
  std::filesystem::path model_dir;
  std::vector<std::string> external_files;  // relative to model_dir
};

// One compile's figure for one IPU.
struct MemoryObservation {
  std::string model;
  int num_ipus = 1;  // of the candidate split
  int ipu = 0;
  int64_t bytes = 0;      // the compiler's fullest tile of that IPU
  int64_t predicted = 0;  // the calibrated model's
};

struct CalibrationResult {
  proto::DeviceProfile profile;  // the base with the fitted constants
  double code_scale = 1;         // s
  int64_t tile_fixed_bytes = 0;  // F
  int compiles = 0;
  std::vector<MemoryObservation> observations;
  double max_relative_error = 0;  // |predicted - bytes| / bytes, worst
};

// Compiles, for each model, the whole model on one IPU and the raw splits
// onto each count of `num_ipus` (>1), with `options.compile_cmd` and
// `options.jobs`; `options` also gives the base profile, precision and
// shapes. Errors: no compile command or model; a model that cannot be
// planned; a compile command that cannot run; FailedPrecondition when the
// compiles gave no figure to fit (every candidate fitted without printing
// a fullest tile, or failed without naming one).
absl::StatusOr<CalibrationResult> CalibrateMemory(
    const std::vector<CalibrationModel>& models, const Options& options,
    const std::vector<int>& num_ipus);

}  // namespace autoshard

#endif  // AUTOSHARD_SHARDER_CALIBRATE_H_
