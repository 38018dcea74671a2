#include "sharder/calibrate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "costmodel/device_model.h"
#include "costmodel/device_profile.h"
#include "sharder/compile_judge.h"
#include "sharder/oracle/compile_oracle.h"
#include "sharder/plan_prepared.h"
#include "sharder/prepare.h"

namespace autoshard {
namespace {

// What the fit needs of one observation: the problem and the split.
struct Sample {
  const ShardingProblem* problem;
  std::vector<int32_t> ipu_of_node;
  int ipu;
  int64_t bytes;
};

// `base` with every class's code and codelet bytes x `scale`, and
// `fixed` bytes per tile.
proto::DeviceProfile Scaled(const proto::DeviceProfile& base, double scale,
                            int64_t fixed) {
  proto::DeviceProfile p = base;
  for (auto& c : *p.mutable_op_classes()) {
    c.set_code_bytes_per_tile(
        std::llround(static_cast<double>(c.code_bytes_per_tile()) * scale));
    c.set_codelet_bytes_per_tile(
        std::llround(static_cast<double>(c.codelet_bytes_per_tile()) * scale));
  }
  p.set_tile_fixed_bytes(fixed);
  return p;
}

// The model's fullest tile of each sample under `profile`.
std::vector<int64_t> Predict(const std::vector<Sample>& samples,
                             const proto::DeviceProfile& profile,
                             Precision precision) {
  std::vector<int64_t> out;
  for (const Sample& s : samples) {
    DeviceModel model(*s.problem, profile, precision);
    out.push_back(model.EvaluateMemory(s.ipu_of_node, s.ipu).max_tile_bytes);
  }
  return out;
}

// For code scale `s`: the best fixed bytes (mean residual, >= 0) and the
// squared error.
std::pair<int64_t, double> BestFixed(const std::vector<Sample>& samples,
                                     const proto::DeviceProfile& base,
                                     Precision precision, double s) {
  const std::vector<int64_t> p =
      Predict(samples, Scaled(base, s, 0), precision);
  double mean = 0;
  for (size_t i = 0; i < samples.size(); ++i)
    mean += static_cast<double>(samples[i].bytes - p[i]);
  mean /= static_cast<double>(samples.size());
  const int64_t fixed =
      std::clamp<int64_t>(std::llround(mean), 0, int64_t{1} << 40);
  double err = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const double r = static_cast<double>(samples[i].bytes - p[i] - fixed);
    err += r * r;
  }
  return {fixed, err};
}

double FitScale(const std::function<double(double)>& err) {
  double best = 0, best_err = INFINITY;
  for (int i = 0; i <= 80; ++i) {  // 0.05 .. 20, log spaced
    const double x =
        std::log(0.05) + i * (std::log(20.0) - std::log(0.05)) / 80;
    if (const double e = err(x); e < best_err) {
      best_err = e;
      best = x;
    }
  }
  const double step = (std::log(20.0) - std::log(0.05)) / 80;
  const double r = (std::sqrt(5.0) - 1) / 2;
  double a = best - step, b = best + step;
  for (int i = 0; i < 40; ++i) {
    const double c = b - r * (b - a), d = a + r * (b - a);
    if (err(c) < err(d)) {
      b = d;
    } else {
      a = c;
    }
  }
  return std::exp((a + b) / 2);
}

}  // namespace

namespace {

// The candidates compiled for the prepared model `p`: the whole model on
// IPU 0, then the raw split at each count of `num_ipus` above 1 that the
// model's node count allows. `counts[c]` is candidate c's IPU count.
absl::StatusOr<std::vector<std::vector<int32_t>>> CalibrationCandidates(
    const internal::Prepared& p, const Options& options,
    const std::vector<int>& num_ipus, std::vector<int>* counts) {
  const int num_nodes = p.analysis->problem.num_nodes();
  std::vector<std::vector<int32_t>> candidates = {
      std::vector<int32_t>(num_nodes, 0)};
  *counts = {1};
  for (int k : num_ipus) {
    if (k <= 1 || k > num_nodes) continue;
    Options split = options;
    split.num_ipus = k;
    split.strategy = "raw";
    split.compile_cmd.clear();
    ASSIGN_OR_RETURN(Plan plan,
                     internal::PlanPrepared(p, split, nullptr,
                                            std::chrono::steady_clock::now()));
    candidates.push_back(plan.placement.ipu);
    counts->push_back(k);
  }
  return candidates;
}

// One sample and one observation per IPU of each verdict that names a
// tile of it (the fullest tiles, and the tile that ran out of memory), the
// first figure per IPU only. `problem` must outlive the samples.
void AddSamples(const CalibrationModel& m, const ShardingProblem* problem,
                const std::vector<std::vector<int32_t>>& candidates,
                const std::vector<int>& counts,
                const std::vector<CompileVerdict>& verdicts,
                const proto::DeviceProfile& base, std::vector<Sample>* samples,
                std::vector<MemoryObservation>* observations) {
  for (size_t c = 0; c < verdicts.size(); ++c) {
    std::vector<std::pair<int64_t, int64_t>> figures =
        verdicts[c].fullest_tiles;
    if (verdicts[c].tile >= 0 && verdicts[c].bytes > 0)
      figures.emplace_back(verdicts[c].tile, verdicts[c].bytes);
    std::vector<uint8_t> seen(counts[c], 0);
    for (auto [tile, bytes] : figures) {
      const int64_t ipu = tile / base.tiles_per_ipu();
      if (ipu < 0 || ipu >= counts[c] || seen[ipu]) continue;
      seen[ipu] = 1;
      samples->push_back(
          {problem, candidates[c], static_cast<int>(ipu), bytes});
      observations->push_back(
          {m.path, counts[c], static_cast<int>(ipu), bytes, 0});
    }
  }
}

// Names the fitted profile and records where it came from and its error
// band (twice the worst residual, at least 2%).
void DescribeProfile(const proto::DeviceProfile& base, const Options& options,
                     CalibrationResult* result) {
  proto::DeviceProfile& out = result->profile;
  out.set_name(absl::StrCat(base.name(), "-calibrated"));
  out.clear_sources();
  out.add_sources(absl::StrFormat(
      "autoshard calibrate: %d compiles with '%s'; code and codelet bytes x "
      "%.3f of %s's, tile_fixed_bytes %d",
      result->compiles, options.compile_cmd, result->code_scale, base.name(),
      result->tile_fixed_bytes));
  proto::Calibration* cal = out.mutable_calibration();
  cal->set_status(absl::StrFormat(
      "%s: memory fitted by autoshard calibrate to %d figures of %d compiles "
      "(worst fullest-tile error %.1f%%); times as %s",
      out.name(), static_cast<int>(result->observations.size()),
      result->compiles, 100 * result->max_relative_error, base.name()));
  cal->set_memory_error_band(
      std::min(1.0, std::max(0.02, 2 * result->max_relative_error)));
}

}  // namespace

absl::StatusOr<CalibrationResult> CalibrateMemory(
    const std::vector<CalibrationModel>& models, const Options& options,
    const std::vector<int>& num_ipus) {
  if (options.compile_cmd.empty())
    return absl::InvalidArgumentError("calibrate needs --compile-cmd");
  if (models.empty()) return absl::InvalidArgumentError("calibrate: no model");
  std::vector<internal::Prepared> prepared;
  // Reserved: the samples point at the problems, which must not move.
  prepared.reserve(models.size());
  std::vector<Sample> samples;
  std::vector<MemoryObservation> observations;
  CalibrationResult result;
  proto::DeviceProfile base;
  for (const CalibrationModel& m : models) {
    auto p = internal::Prepare(m.model, options);
    if (!p.ok()) {
      return absl::Status(p.status().code(),
                          absl::StrCat(m.path, ": ", p.status().message()));
    }
    prepared.push_back(*std::move(p));
    base = prepared.back().analysis->device;
    std::vector<int> counts;
    ASSIGN_OR_RETURN(
        std::vector<std::vector<int32_t>> candidates,
        CalibrationCandidates(prepared.back(), options, num_ipus, &counts));
    // The candidates carry planning's names (ApplyPlan): no second naming.
    CompileOracle oracle(options.compile_cmd,
                         internal::WriteCandidateOf(
                             m.model, prepared.back().analysis->problem.names),
                         m.model_dir, m.external_files, options.jobs);
    ASSIGN_OR_RETURN(
        std::vector<CompileVerdict> verdicts,
        oracle.Compile(candidates, base.available_memory_proportion()));
    result.compiles += static_cast<int>(verdicts.size());
    AddSamples(m, &prepared.back().analysis->problem, candidates, counts,
               verdicts, base, &samples, &observations);
  }
  if (samples.empty()) {
    return absl::FailedPreconditionError(
        "calibrate: the compiles printed no fullest tile and no 'Out of "
        "memory on tile T: M bytes': nothing to fit");
  }
  const double scale = FitScale([&](double x) {
    return BestFixed(samples, base, options.precision, std::exp(x)).second;
  });
  result.code_scale = scale;
  result.tile_fixed_bytes =
      BestFixed(samples, base, options.precision, scale).first;
  result.profile = Scaled(base, scale, result.tile_fixed_bytes);
  const std::vector<int64_t> predicted =
      Predict(samples, result.profile, options.precision);
  for (size_t i = 0; i < observations.size(); ++i) {
    observations[i].predicted = predicted[i];
    result.max_relative_error = std::max(
        result.max_relative_error,
        std::abs(static_cast<double>(predicted[i] - observations[i].bytes)) /
            static_cast<double>(std::max<int64_t>(observations[i].bytes, 1)));
  }
  result.observations = std::move(observations);
  DescribeProfile(base, options, &result);
  return result;
}

}  // namespace autoshard
