// Internal to sharder/: the planning of a prepared model as the public API
// (autoshard.h) runs it — the compile judge, --num-ipus auto (one
// plan_prepared.h plan per IPU count), --keep-placement, and the plan of given
// sharding points or of a given placement (`apply`, `inspect`).
#ifndef AUTOSHARD_SHARDER_PLAN_MODEL_H_
#define AUTOSHARD_SHARDER_PLAN_MODEL_H_

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"
#include "sharder/autoshard.h"
#include "sharder/carried_placement.h"
#include "sharder/prepare.h"
#include "solver/strategies/oracle.h"
#include "solver/strategies/sharding_points.h"

namespace autoshard::internal {

// PlanModel's planning of `p`, prepared from `model` (what the compile
// oracle's candidates are written from): the carried placement with
// options.keep_placement (else a warning when the model carries one), else
// options.num_ipus IPUs, or the fewest powers of two that fit with
// kAutoIpus. `start` is when planning began. Errors as PlanModel's.
absl::StatusOr<Plan> PlanPreparedModel(
    Prepared& p, const onnx::ModelProto& model, const Options& options,
    std::chrono::steady_clock::time_point start);

// One plan of `p` with options.strategy: onto options.num_ipus IPUs, or
// with kAutoIpus the fewest powers of two that fit (up to max_ipus, sharing
// max_search_s; the certified bound for the last count only); `oracle`, when
// set, judges the splits. What PlanPreparedModel does once the carried
// placement is set aside, and what `solve` does with a problem file
// (SolveProblem, sharder/problem_file.h). Errors as PlanModel's.
absl::StatusOr<Plan> PlanPreparedCount(
    const Prepared& p, const Options& options, const SearchOracle& oracle,
    std::chrono::steady_clock::time_point start);

// PlanFromShardingPoints' planning of `p`: the points resolved by node name.
// Errors as PlanFromShardingPoints'.
absl::StatusOr<Plan> PlanPreparedPoints(
    Prepared& p, const Options& options,
    const std::vector<NamedShardingPoint>& points,
    std::chrono::steady_clock::time_point start);

// The plan of a given, validated assignment `a` with its sharding `points`
// (what `apply` and --keep-placement evaluate), named `strategy`; warns
// about a pipeline stage on several IPUs.
Plan PlanOfAssignment(Prepared& p, const Options& options, const Assignment& a,
                      const std::vector<ShardingPoint>& points,
                      const std::string& strategy,
                      std::chrono::steady_clock::time_point start);

// --keep-placement: the plan of the placement `carried` read from p's
// model. InvalidArgument when no node is annotated, or carried.error.
absl::StatusOr<Plan> PlanCarriedPlacement(
    Prepared& p, const Options& options, const CarriedPlacement& carried,
    std::chrono::steady_clock::time_point start);

// The plan `--num-ipus auto` makes of p (options.num_ipus and compile_cmd
// are not used): what `inspect` reports as the fewest IPUs.
absl::StatusOr<Plan> PlanFewestIpus(const Prepared& p, const Options& options);

}  // namespace autoshard::internal

#endif  // AUTOSHARD_SHARDER_PLAN_MODEL_H_
