#include "sharder/plan_model.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "costmodel/device_model.h"
#include "costmodel/node_bound.h"
#include "costmodel/weight_location.h"
#include "graph/annotations.h"
#include "sharder/compile_judge.h"
#include "sharder/plan_prepared.h"
#include "sharder/stage_layout.h"
#include "solver/strategies/constraints.h"
#include "solver/strategies/strategy.h"

namespace autoshard::internal {
namespace {

// --num-ipus auto: powers of two until a split fits.
absl::StatusOr<Plan> PlanAutoIpus(const Prepared& p, const Options& options,
                                  const SearchOracle& oracle,
                                  std::chrono::steady_clock::time_point start) {
  const int most = std::min(options.max_ipus, p.analysis->problem.num_nodes());
  if (most < 1) {
    return absl::InvalidArgumentError("the model's main graph has no nodes");
  }
  std::vector<int> tried, skipped;
  std::optional<Plan> plan;
  const auto loop_start = std::chrono::steady_clock::now();
  // Every weight is stored on some IPU: counts whose memory the weights alone
  // exceed never fit and are skipped unplanned (all but the last).
  const double ipu_bytes =
      static_cast<double>(p.analysis->device.tiles_per_ipu()) *
      static_cast<double>(p.analysis->device.bytes_per_tile());
  // So are all when a node alone overflows an IPU (costmodel/node_bound.h).
  const std::optional<OverflowingNode> too_big =
      NodeThatNoIpuHolds(p.analysis->problem, p.analysis->device_model());
  const auto too_small = [&](int k) {
    return 2 * k <= most &&
           (too_big ||
            !CheckConstraints(p.analysis->problem, k, nullptr).ok() ||
            static_cast<double>(ResidentWeightBytes(p.analysis->problem)) >
                k * ipu_bytes);
  };
  for (int k = 1; k <= most; k *= 2) {
    if (too_small(k)) {
      skipped.push_back(k);
      continue;
    }
    if (options.trying_num_ipus) options.trying_num_ipus(k);
    Options for_k = options;
    for_k.num_ipus = k;
    // The time limits are shared over the counts still to try, so a model
    // that fits nowhere costs about what one count would (at least 1 s each).
    int counts_left = 0;
    for (int c = k; c <= most; c *= 2) counts_left += too_small(c) ? 0 : 1;
    for_k.max_search_s = std::max(
        1.0, (options.max_search_s - SecondsSince(loop_start)) / counts_left);
    for_k.bound_s = 0;  // the certified bound: the last count's only
    ASSIGN_OR_RETURN(plan, PlanPrepared(p, for_k, oracle, start));
    tried.push_back(k);
    if (plan->proto.fits()) break;
  }
  for (int k : tried) plan->proto.add_num_ipus_tried(k);
  for (int k : skipped) plan->proto.add_num_ipus_skipped(k);
  Certify(p, options, &*plan);
  if (!plan->proto.fits()) {
    plan->proto.add_warnings(absl::StrCat(
        "--num-ipus auto: no power-of-two IPU count up to ", tried.back(),
        " fits; the plan is for ", tried.back(), " IPUs",
        too_big ? absl::StrCat(" (", too_big->message, ")") : ""));
  }
  return std::move(*plan);
}

}  // namespace

absl::StatusOr<Plan> PlanPreparedModel(
    Prepared& p, const onnx::ModelProto& model, const Options& options,
    std::chrono::steady_clock::time_point start) {
  const CarriedPlacement carried = ReadCarriedPlacement(p);
  if (options.keep_placement) {
    return PlanCarriedPlacement(p, options, carried, start);
  }
  if (carried.annotated_nodes > 0) {
    p.warnings.push_back(
        absl::StrCat(CarriedPlacementText(carried, p.analysis->dag.num_nodes()),
                     ": planned again; --keep-placement evaluates it instead"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<CompileOracle> compiler,
                   MakeCompiler(model, p, options));
  return PlanPreparedCount(p, options, OracleOf(compiler.get()), start);
}

absl::StatusOr<Plan> PlanPreparedCount(
    const Prepared& p, const Options& options, const SearchOracle& oracle,
    std::chrono::steady_clock::time_point start) {
  if (options.num_ipus == kAutoIpus) {
    return PlanAutoIpus(p, options, oracle, start);
  }
  return PlanPrepared(p, options, oracle, start);
}

absl::StatusOr<Plan> PlanPreparedPoints(
    Prepared& p, const Options& options,
    const std::vector<NamedShardingPoint>& points,
    std::chrono::steady_clock::time_point start) {
  if (points.empty()) {
    // PopRT's rule sends unclaimed nodes to the last device: here device 0.
    // autoshard writes such a config for a 1-IPU plan.
    p.warnings.push_back(
        "the sharding config has no points: every node runs on IPU 0, "
        "pipeline stage 0");
  }
  std::vector<ShardingPoint> resolved;
  for (const NamedShardingPoint& named : points) {
    NodeId id = p.analysis->dag.FindNode(named.node);
    if (id == kNoNode) {
      return absl::InvalidArgumentError(
          absl::StrCat("sharding point names node '", named.node,
                       "', which the model does not have"));
    }
    resolved.push_back({id, named.ipu, named.pipeline_stage});
  }
  ASSIGN_OR_RETURN(Assignment a,
                   ApplyShardingPoints(p.analysis->problem, resolved));
  RETURN_IF_ERROR(ValidateAssignment(p.analysis->problem, a));
  RETURN_IF_ERROR(CheckVariableWeights(p, options, a));
  return PlanOfAssignment(p, options, a, resolved, "apply", start);
}

Plan PlanOfAssignment(Prepared& p, const Options& options, const Assignment& a,
                      const std::vector<ShardingPoint>& points,
                      const std::string& strategy,
                      std::chrono::steady_clock::time_point start) {
  // PopART runs a pipeline stage on one IPU (and `split` needs that).
  std::map<int32_t, std::set<int32_t>> ipus_of_stage;
  for (int32_t node = 0; node < p.analysis->problem.num_nodes(); ++node)
    ipus_of_stage[a.pipeline_stage[node]].insert(a.ipu[node]);
  for (const auto& [stage, ipus] : ipus_of_stage) {
    if (ipus.size() < 2) continue;
    p.warnings.push_back(absl::StrCat(
        "pipeline stage ", stage, " runs on IPUs ", absl::StrJoin(ipus, ", "),
        ": PopART pipelines need one IPU per stage (and `split` refuses "
        "such a plan)"));
  }
  const double amp = p.analysis->device.available_memory_proportion();
  const PlanEvaluation evaluation = EvaluateAssignment(p, options, a, amp);
  Plan plan =
      FinishPlan(p, options, a, points, strategy, {}, evaluation, amp, start);
  SetStageLayout(p, options, a, evaluation, /*shared_weight=*/-1, std::nullopt,
                 &plan.proto);
  return plan;
}

absl::StatusOr<Plan> PlanCarriedPlacement(
    Prepared& p, const Options& options, const CarriedPlacement& carried,
    std::chrono::steady_clock::time_point start) {
  if (carried.annotated_nodes == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--keep-placement: no node has ", kIpuAttribute,
                     " (plan it without --keep-placement)"));
  }
  RETURN_IF_ERROR(carried.error);
  ASSIGN_OR_RETURN(
      std::vector<ShardingPoint> points,
      MinimalShardingPoints(p.analysis->problem, carried.assignment));
  RETURN_IF_ERROR(CheckVariableWeights(p, options, carried.assignment));
  return PlanOfAssignment(p, options, carried.assignment, points,
                          "keep-placement", start);
}

absl::StatusOr<Plan> PlanFewestIpus(const Prepared& p, const Options& options) {
  Options auto_ipus = options;
  auto_ipus.num_ipus = kAutoIpus;
  auto_ipus.compile_cmd.clear();
  return PlanAutoIpus(p, auto_ipus, nullptr, std::chrono::steady_clock::now());
}

}  // namespace autoshard::internal
