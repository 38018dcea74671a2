// Internal to sharder/: the plan's pipeline stages when they outnumber its
// IPUs (Plan.stages, proto/plan.proto), and --weights variable's rule
// (Note [Last stage on IPU 0], solver/strategies/revisit.h).
#ifndef AUTOSHARD_SHARDER_STAGE_LAYOUT_H_
#define AUTOSHARD_SHARDER_STAGE_LAYOUT_H_

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "costmodel/plan_evaluation.h"
#include "proto/plan.pb.h"
#include "sharder/options.h"
#include "sharder/prepare.h"
#include "solver/strategies/sharding_points.h"

namespace autoshard::internal {

// With options.weights == "variable": InvalidArgument when a weight's
// readers run on two or more IPUs of `a` (PopART: "Can not copy variable
// tensor ... between virtual graphs when pipelining"), naming the largest
// such weight, its IPUs and a reader on each; OK otherwise (and always with
// "constant").
absl::Status CheckVariableWeights(const Prepared& p, const Options& options,
                                  const Assignment& a);

// Sets plan->stages when `a` revisits an IPU or `shared_weight` >= 0 (auto
// weighed a last stage on IPU 0 for it): the stages and their IPUs, the
// weight, options.weights, the choice ("revisit" or "duplicate"), and
// against `other` (the evaluation of the plan not chosen, if any) its
// bottleneck and the weight bytes the chosen plan saves: Σ over IPUs of the
// tile-memory model's weight bytes, other's minus chosen's.
void SetStageLayout(const Prepared& p, const Options& options,
                    const Assignment& a, const PlanEvaluation& chosen,
                    int32_t shared_weight,
                    const std::optional<PlanEvaluation>& other,
                    proto::Plan* plan);

}  // namespace autoshard::internal

#endif  // AUTOSHARD_SHARDER_STAGE_LAYOUT_H_
