// The calibration cases: each published fact of
// costmodel/calibration/facts.textproto rebuilt (tests/calibration_models.h)
// and predicted with a device profile on one IPU. Shared by the calibration
// test (tests/calibration_test.cc) and the fitter (bench/calibration_fit.cc).
#ifndef AUTOSHARD_TESTS_CALIBRATION_CASES_H_
#define AUTOSHARD_TESTS_CALIBRATION_CASES_H_

#include <string>

#include "absl/status/statusor.h"
#include "proto/calibration.pb.h"
#include "proto/device.pb.h"
#include "sharder/autoshard.h"

namespace autoshard::testing {

// Parses the facts file. Errors: NotFound, InvalidArgument (parse).
absl::StatusOr<proto::CalibrationFacts> LoadCalibrationFacts(
    const std::string& path);

// `profile` as the fact's run used the chip: with fact.io_tiles() of its
// tiles_per_ipu set aside for host I/O, the model runs on the others at
// their share of the peak (e.g. 64 of 1,472: 1,408 tiles, 280 x 1,408 /
// 1,472 = 267.8 TFLOP/s fp16). Unchanged when io_tiles is 0. Errors:
// io_tiles negative or not below tiles_per_ipu (InvalidArgument).
absl::StatusOr<proto::DeviceProfile> RunProfile(
    const proto::CalibrationFact& fact, const proto::DeviceProfile& profile);

// The 1-IPU plan of `fact`'s model under RunProfile(fact, profile) (the
// fact's precision, available memory proportion and I/O tiles; raw
// strategy: one IPU has one split).
absl::StatusOr<Plan> PlanFact(const proto::CalibrationFact& fact,
                              const proto::DeviceProfile& profile);

// The fact's figure as the plan predicts it: throughput (samples/s),
// latency (one batch through every stage plus the step's fixed time, s), fits
// (1 or 0), memory (the total bytes of IPU 0).
double PredictedFigure(const proto::CalibrationFact& fact, const Plan& plan);

// The memory figure of `fact` named `category`, 0 when absent.
int64_t MemoryFigure(const proto::CalibrationFact& fact,
                     const std::string& category);

}  // namespace autoshard::testing

#endif  // AUTOSHARD_TESTS_CALIBRATION_CASES_H_
