// The calibration table (docs/calibration.md §4): every throughput and
// latency fact of costmodel/calibration/facts.textproto predicted with the
// built-in profile it names, by model and batch, and the held-out facts'
// error band. The fitter prints it (bench/calibration_fit.cc --markdown) and
// the calibration test checks the doc shows it as the code computes it.
#ifndef AUTOSHARD_TESTS_CALIBRATION_TABLE_H_
#define AUTOSHARD_TESTS_CALIBRATION_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/calibration.pb.h"

namespace autoshard::testing {

// The hold-out rule, written before any fit (issue 33; facts.textproto's
// header): of the throughput and latency facts of `fact`'s model, sorted
// by batch ascending (then id), the 2nd, 5th, 8th, ... are held out. False
// for other kinds.
bool HeldOutByRule(const proto::CalibrationFacts& facts,
                   const proto::CalibrationFact& fact);

// One throughput or latency fact against the built-in profile's prediction.
struct TimeError {
  std::string id, model, kind;
  int64_t batch = 0;
  bool fitted = false;
  double published = 0;  // samples/s (throughput) or s per batch (latency)
  double predicted = 0;
  // predicted / published - 1: + is a throughput too high (too fast) or a
  // latency too long (too slow).
  double error = 0;
  // The op classes of the model's non-constant nodes, sorted.
  std::vector<std::string> op_classes;
};

// Every throughput and latency fact of `facts`, sorted by model then batch,
// predicted by PlanFact with its built-in profile. Errors: a fact whose
// model or profile cannot be built or planned.
absl::StatusOr<std::vector<TimeError>> TimeErrors(
    const proto::CalibrationFacts& facts);

// The 90th percentile of |error| over `rows` with fitted == `fitted`,
// nearest rank: the ceil(0.9 n)-th smallest (n = 4: the largest). 0 when
// none.
double AbsErrorP90(const std::vector<TimeError>& rows, bool fitted);

// The largest |error| over `rows` with fitted == `fitted`.
double AbsErrorMax(const std::vector<TimeError>& rows, bool fitted);

// The Markdown table of `rows` (model, batch, kind, fitted or held out,
// published, predicted, error) and a line of the held-out band.
std::string CalibrationTableMarkdown(const std::vector<TimeError>& rows);

}  // namespace autoshard::testing

#endif  // AUTOSHARD_TESTS_CALIBRATION_TABLE_H_
