#include "sharder/autoshard.h"

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "costmodel/device_model.h"
#include "graph/annotations.h"
#include "graph/graph.h"
#include "graph/model_io.h"
#include "graph/naming.h"
#include "graph/status_macros.h"
#include "sharder/carried_placement.h"
#include "sharder/oracle/compile_oracle.h"
#include "sharder/outputs/emit.h"
#include "sharder/planner.h"
#include "sharder/pod/node_bound.h"
#include "sharder/prepare.h"
#include "sharder/strategies/registry.h"
#include "sharder/strategies/search_strategy.h"
#include "sharder/strategies/sharding_points.h"

namespace autoshard {
namespace {

using internal::Certify;
using internal::EvaluateAssignment;
using internal::FinishPlan;
using internal::PlanPrepared;
using internal::Prepare;
using internal::Prepared;

// The compiler that judges the search's candidates (options.compile_cmd),
// on the model named as the plan names it; null without a command.
absl::StatusOr<std::unique_ptr<CompileOracle>> MakeCompiler(
    const onnx::ModelProto& model, const Options& options,
    onnx::ModelProto* named_model) {
  if (options.compile_cmd.empty()) return nullptr;
  *named_model = model;
  ASSIGN_OR_RETURN(
      NamingResult ignored,
      AssignNodeNames(options.strict_names, named_model->mutable_graph()));
  (void)ignored;
  return std::make_unique<CompileOracle>(
      options.compile_cmd, *named_model, options.model_dir,
      options.external_files, options.jobs, options.compile_timeout_s,
      std::chrono::steady_clock::now() +
          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
              std::chrono::duration<double>(options.max_search_s)));
}

SearchOracle OracleOf(const CompileOracle* compiler) {
  if (compiler == nullptr) return nullptr;
  return [compiler](const std::vector<std::vector<int32_t>>& candidates,
                    double amp) -> absl::StatusOr<std::vector<OracleVerdict>> {
    ASSIGN_OR_RETURN(std::vector<CompileVerdict> verdicts,
                     compiler->Compile(candidates, amp));
    std::vector<OracleVerdict> out;
    for (const CompileVerdict& v : verdicts) {
      out.push_back({v.fits, v.tile, v.bytes, v.unparsable});
    }
    return out;
  };
}

// --num-ipus auto: powers of two until a split fits.
absl::StatusOr<Plan> PlanAutoIpus(const Prepared& p, const Options& options,
                                  const SearchOracle& oracle,
                                  std::chrono::steady_clock::time_point start) {
  const int most = std::min(options.max_ipus, p.problem.num_nodes());
  if (most < 1) {
    return absl::InvalidArgumentError("the model's main graph has no nodes");
  }
  std::vector<int> tried, skipped;
  std::optional<Plan> plan;
  const auto loop_start = std::chrono::steady_clock::now();
  // Every weight is stored on some IPU: counts whose memory the weights alone
  // exceed never fit and are skipped unplanned (all but the last).
  const double ipu_bytes = static_cast<double>(p.device.tiles_per_ipu()) *
                           static_cast<double>(p.device.bytes_per_tile());
  // So are all when a node alone overflows an IPU (sharder/pod/node_bound.h).
  const std::optional<pod::OverflowingNode> too_big = pod::NodeThatNoIpuHolds(
      p.problem, DeviceModel(p.problem, p.device, options.precision));
  const auto too_small = [&](int k) {
    return 2 * k <= most &&
           (too_big ||
            static_cast<double>(p.costs.total_weight_bytes) > k * ipu_bytes);
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

// PlanModel's planning of the prepared `p`.
absl::StatusOr<Plan> PlanPreparedModel(
    Prepared& p, const onnx::ModelProto& model, const Options& options,
    std::chrono::steady_clock::time_point start) {
  const internal::CarriedPlacement carried = internal::ReadCarriedPlacement(p);
  if (options.keep_placement) {
    return internal::PlanCarriedPlacement(p, options, carried, start);
  }
  if (carried.annotated_nodes > 0) {
    p.warnings.push_back(absl::StrCat(
        internal::CarriedPlacementText(carried, p.graph.num_nodes()),
        ": planned again; --keep-placement evaluates it instead"));
  }
  onnx::ModelProto named_model;
  ASSIGN_OR_RETURN(std::unique_ptr<CompileOracle> compiler,
                   MakeCompiler(model, options, &named_model));
  const SearchOracle oracle = OracleOf(compiler.get());
  if (options.num_ipus == kAutoIpus) {
    return PlanAutoIpus(p, options, oracle, start);
  }
  return PlanPrepared(p, options, oracle, start);
}

// PlanFromShardingPoints' planning of the prepared `p`.
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
    NodeId id = p.graph.FindNode(named.node);
    if (id == kNoNode) {
      return absl::InvalidArgumentError(
          absl::StrCat("sharding point names node '", named.node,
                       "', which the model does not have"));
    }
    resolved.push_back({id, named.ipu, named.pipeline_stage});
  }
  ASSIGN_OR_RETURN(Assignment a, ApplyShardingPoints(p.problem, resolved));
  RETURN_IF_ERROR(ValidateAssignment(p.problem, a));
  return internal::PlanOfAssignment(p, options, a, resolved, "apply", start);
}

}  // namespace

absl::StatusOr<Plan> PlanModel(const onnx::ModelProto& model,
                               const Options& options) {
  const auto start = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(options.Validate());
  ASSIGN_OR_RETURN(Prepared p, Prepare(model, options));
  ASSIGN_OR_RETURN(Plan plan, PlanPreparedModel(p, model, options, start));
  plan.planned = internal::TakePlannedModel(std::move(p));
  return plan;
}

absl::StatusOr<Plan> PlanFromShardingPoints(
    const onnx::ModelProto& model, const Options& options,
    const std::vector<NamedShardingPoint>& points) {
  const auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(Prepared p, Prepare(model, options));
  ASSIGN_OR_RETURN(Plan plan, PlanPreparedPoints(p, options, points, start));
  plan.planned = internal::TakePlannedModel(std::move(p));
  return plan;
}

namespace internal {

Plan PlanOfAssignment(Prepared& p, const Options& options, const Assignment& a,
                      const std::vector<ShardingPoint>& points,
                      const std::string& strategy,
                      std::chrono::steady_clock::time_point start) {
  // PopART runs a pipeline stage on one IPU (and `split` needs that).
  std::map<int32_t, std::set<int32_t>> ipus_of_stage;
  for (int32_t node = 0; node < p.problem.num_nodes(); ++node)
    ipus_of_stage[a.pipeline_stage[node]].insert(a.ipu[node]);
  for (const auto& [stage, ipus] : ipus_of_stage) {
    if (ipus.size() < 2) continue;
    p.warnings.push_back(absl::StrCat(
        "pipeline stage ", stage, " runs on IPUs ", absl::StrJoin(ipus, ", "),
        ": PopART pipelines need one IPU per stage (and `split` refuses "
        "such a plan)"));
  }
  const double amp = p.device.available_memory_proportion();
  return FinishPlan(p, options, a, points, strategy, {},
                    EvaluateAssignment(p, options, a, amp), amp, start);
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
  ASSIGN_OR_RETURN(std::vector<ShardingPoint> points,
                   MinimalShardingPoints(p.problem, carried.assignment));
  return PlanOfAssignment(p, options, carried.assignment, points,
                          "keep-placement", start);
}

absl::StatusOr<Plan> PlanFewestIpus(const Prepared& p, const Options& options) {
  Options auto_ipus = options;
  auto_ipus.num_ipus = kAutoIpus;
  auto_ipus.compile_cmd.clear();
  return PlanAutoIpus(p, auto_ipus, nullptr, std::chrono::steady_clock::now());
}

}  // namespace internal

absl::Status ApplyPlan(const Plan& plan, onnx::ModelProto* model) {
  onnx::GraphProto* graph = model->mutable_graph();
  if (graph->node_size() != static_cast<int>(plan.node_names.size())) {
    return absl::FailedPreconditionError(
        absl::StrCat("the plan is for a graph of ", plan.node_names.size(),
                     " nodes; this one has ", graph->node_size()));
  }
  // The plan's names, not a second naming: a node keeps its own name unless
  // AssignNodeNames (graph/naming.h) renames it, that is when it has none or
  // an earlier node has it; those take the name the plan gave them.
  absl::flat_hash_set<std::string> taken;
  for (int i = 0; i < graph->node_size(); ++i) {
    onnx::NodeProto* node = graph->mutable_node(i);
    const bool renamed =
        node->name().empty() || !taken.insert(node->name()).second;
    if (renamed) {
      node->set_name(plan.node_names[i]);
    } else if (node->name() != plan.node_names[i]) {
      return absl::FailedPreconditionError(absl::StrCat(
          "node #", i, " is '", node->name(), "' but the plan has '",
          plan.node_names[i], "': not the model that was planned"));
    }
    SetPlacement(plan.ipu[i], plan.pipeline_stage[i], node);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ShardModelBytes(absl::string_view model_bytes,
                                            const Options& options,
                                            Plan* plan_out) {
  ASSIGN_OR_RETURN(onnx::ModelProto model,
                   ParseModelBytes(model_bytes, "model bytes"));
  ASSIGN_OR_RETURN(Plan plan, PlanModel(model, options));
  RETURN_IF_ERROR(ApplyPlan(plan, &model));
  std::string out;
  if (!model.SerializeToString(&out)) {
    return absl::InternalError("cannot serialize the annotated model");
  }
  if (plan_out != nullptr) *plan_out = std::move(plan);
  return out;
}

}  // namespace autoshard
