// SolveProblem (sharder/problem_file.h): a problem file through shard's
// planner. The problem becomes a model analysis without a model (Note [One
// analysis per model]): its ShardingProblem, device, precision and batch,
// and the totals the planner reports; the DAG and the ONNX model stay empty.
#include <chrono>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/saturating.h"
#include "base/status_macros.h"
#include "costmodel/model_analysis.h"
#include "sharder/plan_model.h"
#include "sharder/prepare.h"
#include "sharder/problem_file.h"
#include "sharder/solve_host.h"
#include "solver/strategies/constraints.h"

namespace autoshard {

absl::StatusOr<Plan> SolveProblem(const LoadedProblem& loaded,
                                  const Options& given) {
  const auto start = std::chrono::steady_clock::now();
  Options options = given;
  options.precision = loaded.precision;
  RETURN_IF_ERROR(options.Validate());
  if (!options.compile_cmd.empty()) {
    return absl::InvalidArgumentError(
        "--compile-cmd needs a model to compile; a problem file has none");
  }
  internal::Prepared p;
  ModelAnalysis& a = *p.analysis;
  a.model = std::make_shared<const onnx::ModelProto>();
  a.problem = loaded.problem;
  RETURN_IF_ERROR(ApplyPins(options.pins, &a.problem));
  a.device = loaded.device;
  a.precision = loaded.precision;
  a.batch = loaded.batch;
  for (double f : a.problem.flops) a.costs.total_flops += f;
  for (int64_t w : a.problem.weight_size_bytes)
    a.costs.total_weight_bytes = SaturatingAdd(a.costs.total_weight_bytes, w);
  if (a.problem.HasHost()) {
    ASSIGN_OR_RETURN(Plan plan, internal::SolveWithHost(p, options, start));
    plan.proto.clear_poprt_flags();
    if (plan.analysis == nullptr) plan.analysis = std::move(p.analysis);
    return plan;
  }
  ASSIGN_OR_RETURN(Plan plan,
                   internal::PlanPreparedCount(p, options, nullptr, start));
  // PopRT compiles models; a problem's plan has no inputs to name.
  plan.proto.clear_poprt_flags();
  plan.analysis = std::move(p.analysis);
  return plan;
}

}  // namespace autoshard
