// Internal to sharder/: one IPU count's plan from a prepared model — the
// strategy the options name (solver/strategies/registry.h), the sharding
// points and the plan's figures (FinishPlan). plan_model.h runs it per IPU
// count and plans given splits.
#ifndef AUTOSHARD_SHARDER_PLAN_PREPARED_H_
#define AUTOSHARD_SHARDER_PLAN_PREPARED_H_

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "costmodel/plan_evaluation.h"
#include "sharder/autoshard.h"
#include "sharder/prepare.h"
#include "solver/strategies/oracle.h"
#include "solver/strategies/sharding_points.h"

namespace autoshard::internal {

// Sets the plan's certified bound (solver/bound/certify.h) for its split,
// within options.bound_s seconds; nothing when that is 0 (the cheap bound
// stays).
void Certify(const Prepared& p, const Options& options, Plan* plan);

// Plans `p` onto options.num_ipus (>= 1) IPUs with options.strategy;
// `oracle`, when set, is the compiler that judges the search's candidates;
// `start` is when planning began (the plan's planning_s). Errors as
// PlanModel's.
absl::StatusOr<Plan> PlanPrepared(const Prepared& p, const Options& options,
                                  const SearchOracle& oracle,
                                  std::chrono::steady_clock::time_point start);

// The plan of assignment `a` (validated) with its sharding `points`, named
// `strategy`, evaluated as `evaluation` with available memory proportion
// `proportion`; `warnings` follow p's.
Plan FinishPlan(const Prepared& p, const Options& options, const Assignment& a,
                const std::vector<ShardingPoint>& points, std::string strategy,
                const std::vector<std::string>& warnings,
                PlanEvaluation evaluation, double proportion,
                std::chrono::steady_clock::time_point start);

// EvaluatePlan of `a` on p's device with `proportion`.
PlanEvaluation EvaluateAssignment(const Prepared& p, const Options& options,
                                  const Assignment& a, double proportion);

}  // namespace autoshard::internal

#endif  // AUTOSHARD_SHARDER_PLAN_PREPARED_H_
