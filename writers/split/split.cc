#include "writers/split/split.h"

#include <algorithm>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "costmodel/cost_model.h"
#include "costmodel/model_analysis.h"
#include "graph/annotations.h"
#include "graph/graph.h"
#include "graph/model_io.h"
#include "graph/shape_analysis.h"
#include "graph/tensor_types.h"
#include "writers/split/splitter.h"

namespace autoshard {
namespace fs = std::filesystem;
namespace split_internal {

absl::StatusOr<Split> Splitter::Run(const fs::path& model_dir) {
  RETURN_IF_ERROR(placement_ == nullptr ? ReadPlacements() : TakePlacement());
  if (given_constant_mask_ != nullptr) {
    is_constant_ = given_constant_mask_;
  } else {
    found_constant_mask_ = FindConstantNodes(g_, dag_);
    is_constant_ = &found_constant_mask_;
  }
  RETURN_IF_ERROR(Validate());
  AssignNodesToStages();
  Split split;
  warnings_ = &split.warnings;
  if (given_types_ != nullptr) {
    types_ = &given_types_->types;
    split.warnings = given_types_->warnings;
  } else {
    inferred_types_ = InferTensorTypes(model_, dag_, &split.warnings);
    types_ = &inferred_types_;
  }
  for (const auto& t : g_.initializer()) initializers_[t.name()] = &t;
  for (const auto& t : g_.sparse_initializer()) {
    sparse_initializers_[t.values().name()] = &t;
  }
  for (int i = 0; i < g_.input_size(); ++i)
    input_index_[g_.input(i).name()] = i;
  for (const auto& o : g_.output()) graph_outputs_.insert(o.name());
  // Which stages read each tensor.
  for (NodeId id = 0; id < dag_.num_nodes(); ++id) {
    for (const std::string& t : Reads(id)) {
      for (int s : node_stages_[id]) readers_[t].insert(s);
    }
  }
  fs::path dir = model_dir.empty() ? fs::path(".") : model_dir;
  std::set<std::string> data_files;
  for (int s = 0; s < num_stages_; ++s) {
    SplitStageModel stage;
    proto::SplitStage* entry = split.manifest.add_stages();
    RETURN_IF_ERROR(BuildStage(s, &stage.model, entry));
    ASSIGN_OR_RETURN(stage.external_files, CheckExternalData(stage.model, dir));
    data_files.insert(stage.external_files.begin(), stage.external_files.end());
    split.stages.push_back(std::move(stage));
  }
  FillManifest(data_files, &split.manifest);
  return split;
}

absl::Status Splitter::TakePlacement() {
  const size_t n = static_cast<size_t>(dag_.num_nodes());
  if (placement_->ipu.size() != n || placement_->pipeline_stage.size() != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the placement is for ", placement_->ipu.size(), " and ",
        placement_->pipeline_stage.size(), " nodes; the model has ", n));
  }
  ipu_ = placement_->ipu;
  stage_ = placement_->pipeline_stage;
  for (NodeId id = 0; id < dag_.num_nodes(); ++id) {
    if (ipu_[id] < 0 || stage_[id] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("node ", NodeLabel(dag_.node(id), id),
                       " is placed on a negative IPU or stage"));
    }
  }
  return absl::OkStatus();
}

absl::Status Splitter::ReadPlacements() {
  const int n = dag_.num_nodes();
  ipu_.assign(n, -1);
  stage_.assign(n, -1);
  bool any = false;
  for (NodeId id = 0; id < n; ++id) {
    ASSIGN_OR_RETURN(ipu_[id], PlacementAttr(dag_.node(id), id, kIpuAttribute));
    ASSIGN_OR_RETURN(stage_[id],
                     PlacementAttr(dag_.node(id), id, kStageAttribute));
    any = any || ipu_[id] >= 0 || stage_[id] >= 0;
  }
  if (!any) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no node has ", kIpuAttribute, " or ", kStageAttribute,
        ": not an annotated model (annotate it with 'autoshard shard' or "
        "'autoshard apply', or by hand)"));
  }
  for (NodeId id = 0; id < n; ++id) {
    for (auto [value, attr] : {std::pair{ipu_[id], kIpuAttribute},
                               std::pair{stage_[id], kStageAttribute}}) {
      if (value < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("node ", NodeLabel(dag_.node(id), id), " has no ",
                         attr, " attribute; every node needs both ",
                         kIpuAttribute, " and ", kStageAttribute));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Splitter::Validate() {
  const int n = dag_.num_nodes();
  num_stages_ =
      n == 0 ? 0 : *std::max_element(stage_.begin(), stage_.end()) + 1;
  stage_ipu_.assign(num_stages_, -1);
  std::vector<NodeId> first(num_stages_, kNoNode);
  for (NodeId id : dag_.topological_order()) {
    const int s = stage_[id];
    if (first[s] == kNoNode) {
      first[s] = id;
      stage_ipu_[s] = ipu_[id];
    } else if (ipu_[id] != stage_ipu_[s]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pipeline stage ", s, " is on two IPUs: node ",
          NodeLabel(dag_.node(first[s]), first[s]), " on IPU ", stage_ipu_[s],
          " and node ", NodeLabel(dag_.node(id), id), " on IPU ", ipu_[id],
          "; a stage runs on one IPU"));
    }
  }
  for (int s = 0; s < num_stages_; ++s) {
    if (first[s] == kNoNode) {
      return absl::InvalidArgumentError(absl::StrCat(
          "no node is on pipeline stage ", s, " (stages go up to ",
          num_stages_ - 1, "); stages must be numbered from 0 without gaps"));
    }
  }
  // Edges from constant producers are exempt: constants are copied.
  for (NodeId id : dag_.topological_order()) {
    for (NodeId p : dag_.producers(id)) {
      if ((*is_constant_)[p] || stage_[p] <= stage_[id]) continue;
      std::string tensor;
      for (const std::string& t : Reads(id)) {
        if (dag_.producer_of(t) == p) tensor = t;
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "node ", NodeLabel(dag_.node(id), id), " on pipeline stage ",
          stage_[id], " (IPU ", ipu_[id], ") reads '", tensor, "' from node ",
          NodeLabel(dag_.node(p), p), " on the later stage ", stage_[p],
          " (IPU ", ipu_[p], "); edges must not go to an earlier stage"));
    }
  }
  return absl::OkStatus();
}

std::vector<std::string> Splitter::Reads(NodeId id) const {
  std::vector<std::string> reads;
  for (const auto& in : dag_.node(id).input()) {
    if (!in.empty()) reads.push_back(in);
  }
  const auto& implicit = dag_.implicit_inputs(id);
  reads.insert(reads.end(), implicit.begin(), implicit.end());
  std::sort(reads.begin(), reads.end());
  reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
  return reads;
}

void Splitter::AssignNodesToStages() {
  const int n = dag_.num_nodes();
  const auto order = dag_.topological_order();
  auto stays = [&](NodeId id) {
    return !(*is_constant_)[id] || dag_.produces_graph_output(id) ||
           dag_.consumers(id).empty();
  };
  // A copy ends at a node that stays on its stage, so a stage holds one of
  // its own nodes exactly when one stays there.
  std::vector<uint8_t> held(num_stages_, 0);
  for (NodeId id = 0; id < n; ++id) {
    if (stays(id)) held[stage_[id]] = 1;
  }
  pinned_.assign(n, 0);
  for (NodeId id = 0; id < n; ++id) pinned_[id] = !held[stage_[id]];
  std::vector<std::set<int>> stages(n);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const NodeId id = *it;
    if (stays(id) || pinned_[id]) stages[id].insert(stage_[id]);
    for (NodeId p : dag_.producers(id)) {
      if (!(*is_constant_)[p]) continue;
      for (int s : stages[id]) {
        if (!pinned_[p] || s < stage_[p]) stages[p].insert(s);
      }
    }
  }
  node_stages_.resize(n);
  stage_nodes_.assign(num_stages_, {});
  for (NodeId id : order) {
    node_stages_[id].assign(stages[id].begin(), stages[id].end());
    for (int s : stages[id]) stage_nodes_[s].push_back(id);
  }
}

}  // namespace split_internal

std::string StageFileName(int stage) {
  return absl::StrCat("stage_", stage, ".onnx");
}

namespace {

using split_internal::Splitter;

// True when `dag` (planning's) has `g`'s nodes: same count, op types and
// outputs, node by node.
bool SameNodes(const Graph& dag, const onnx::GraphProto& g) {
  if (dag.num_nodes() != g.node_size()) return false;
  for (NodeId id = 0; id < dag.num_nodes(); ++id) {
    const onnx::NodeProto& a = dag.node(id);
    const onnx::NodeProto& b = g.node(id);
    if (a.op_type() != b.op_type() || a.output_size() != b.output_size() ||
        !std::equal(a.output().begin(), a.output().end(), b.output().begin()))
      return false;
  }
  return true;
}

absl::StatusOr<Split> SplitPlaced(const onnx::ModelProto& model,
                                  const Placement* placement,
                                  const fs::path& model_dir,
                                  const ModelAnalysis* analysis) {
  if (model.training_info_size() > 0) {
    return absl::InvalidArgumentError(
        "the model has training_info, which refers to the whole graph; "
        "splitting it is not supported");
  }
  if (analysis != nullptr && !SameNodes(analysis->dag, model.graph())) {
    return absl::FailedPreconditionError(
        "the plan was made for another model (its nodes differ)");
  }
  std::optional<Graph> own;
  if (analysis == nullptr) {
    ASSIGN_OR_RETURN(own, Graph::Build(model.graph()));
  }
  const Graph& dag = analysis != nullptr ? analysis->dag : *own;
  if (dag.num_nodes() == 0) {
    return absl::InvalidArgumentError("the model has no nodes to split");
  }
  std::optional<InterfaceTypes> from_declared;
  if (analysis != nullptr && !analysis->interface_types &&
      analysis->declared != nullptr) {
    from_declared =
        InterfaceTypesOf(*analysis->declared, analysis->declared_recorded, dag);
  }
  const InterfaceTypes* types = analysis != nullptr && analysis->interface_types
                                    ? &*analysis->interface_types
                                : from_declared ? &*from_declared
                                                : nullptr;
  return Splitter(
             model, dag, placement, types,
             analysis != nullptr ? &analysis->problem.is_constant : nullptr)
      .Run(model_dir);
}

}  // namespace

absl::StatusOr<Split> SplitStreamed(
    onnx::ModelProto* model, const StreamedWeights& streamed,
    absl::FunctionRef<absl::StatusOr<Split>(const onnx::ModelProto&)>
        split_model) {
  if (streamed.empty()) return split_model(*model);
  // Inline tensors without data while the stages are built, so that their
  // external-data check does not take them for references.
  MarkStreamed(streamed, onnx::TensorProto::DEFAULT, model);
  absl::StatusOr<Split> split = split_model(*model);
  MarkStreamed(streamed, onnx::TensorProto::EXTERNAL, model);
  if (!split.ok()) return split;
  for (SplitStageModel& stage : split->stages) {
    stage.streamed = StreamedSubset(*model, streamed, stage.model);
  }
  return split;
}

absl::StatusOr<Split> SplitModel(const onnx::ModelProto& annotated,
                                 const fs::path& model_dir) {
  return SplitPlaced(annotated, nullptr, model_dir, nullptr);
}

absl::StatusOr<Split> SplitModel(const onnx::ModelProto& model,
                                 const Placement& placement,
                                 const fs::path& model_dir,
                                 const ModelAnalysis* analysis) {
  return SplitPlaced(model, &placement, model_dir, analysis);
}

}  // namespace autoshard
