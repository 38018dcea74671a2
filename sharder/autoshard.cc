#include "sharder/autoshard.h"

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "costmodel/weight_location.h"
#include "graph/annotations.h"
#include "graph/model_io.h"
#include "sharder/plan_model.h"
#include "sharder/prepare.h"
#include "sharder/weight_locations.h"

namespace autoshard {

// The public API only: each call prepares the model once (prepare.h) and
// hands it to the pipeline (plan_model.h, plan_prepared.h).

absl::StatusOr<Plan> PlanModel(const onnx::ModelProto& model,
                               const Options& options) {
  const auto start = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(options.Validate());
  // auto with a given split (--keep-placement) or a problem file to write
  // is on-chip (Options::Validate refuses remote there).
  const bool planned_locations =
      options.weights_location == kWeightsRemote ||
      (options.weights_location == kWeightsAuto && !options.keep_placement &&
       !options.keep_problem);
  if (planned_locations) {
    return internal::PlanWeightLocations(model, options);
  }
  ASSIGN_OR_RETURN(internal::Prepared p, internal::Prepare(model, options));
  ASSIGN_OR_RETURN(Plan plan,
                   internal::PlanPreparedModel(p, model, options, start));
  plan.analysis = std::move(p.analysis);
  return plan;
}

absl::StatusOr<Plan> PlanFromShardingPoints(
    const onnx::ModelProto& model, const Options& options,
    const std::vector<NamedShardingPoint>& points) {
  const auto start = std::chrono::steady_clock::now();
  // auto (the default) evaluates the split with on-chip weights.
  if (options.weights_location == kWeightsRemote) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--weights-location ", options.weights_location,
        " is planned by shard; apply evaluates the given split with its "
        "weights on-chip"));
  }
  ASSIGN_OR_RETURN(internal::Prepared p, internal::Prepare(model, options));
  ASSIGN_OR_RETURN(Plan plan,
                   internal::PlanPreparedPoints(p, options, points, start));
  plan.analysis = std::move(p.analysis);
  return plan;
}

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
    SetPlacement(plan.placement.ipu[i], plan.placement.pipeline_stage[i], node);
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
