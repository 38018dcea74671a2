#include "sharder/autoshard.h"

#include <chrono>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/graph.h"
#include "graph/model_io.h"
#include "graph/naming.h"
#include "graph/status_macros.h"
#include "sharder/emit.h"
#include "sharder/plan.h"
#include "costmodel/problem.h"
#include "sharder/raw_strategy.h"
#include "sharder/sharding_points.h"

namespace autoshard {
namespace {

// Initializers with more elements than this are copied without their data
// into the model used for shape inference: it needs their dims only.
constexpr int64_t kMaxCopiedInitializerElements = 1024;

// What Debian 12's ONNX 1.12 knows (DESIGN.md §8).
constexpr int64_t kNewestKnownOpset = 17;
constexpr int64_t kNewestKnownIrVersion = 8;

// Everything planning derives from a model. `model` is heap-held so `graph`
// (which points into it) stays valid when a Prepared moves.
struct Prepared {
  std::unique_ptr<onnx::ModelProto> model;
  Graph graph;
  ModelCosts costs;
  ShardingProblem problem;
  NamingResult naming;
  std::vector<std::string> warnings;
};

std::unique_ptr<onnx::ModelProto> CopyWithoutLargeWeights(
    const onnx::ModelProto& in) {
  auto m = std::make_unique<onnx::ModelProto>();
  m->set_ir_version(in.ir_version());
  *m->mutable_opset_import() = in.opset_import();
  *m->mutable_functions() = in.functions();
  const onnx::GraphProto& g = in.graph();
  onnx::GraphProto* out = m->mutable_graph();
  out->set_name(g.name());
  *out->mutable_node() = g.node();
  *out->mutable_input() = g.input();
  *out->mutable_output() = g.output();
  *out->mutable_value_info() = g.value_info();
  *out->mutable_sparse_initializer() = g.sparse_initializer();
  for (const auto& t : g.initializer()) {
    int64_t elems = 1;
    for (int64_t d : t.dims()) elems = SaturatingMul(elems, d < 0 ? 0 : d);
    onnx::TensorProto* copy = out->add_initializer();
    if (elems <= kMaxCopiedInitializerElements) {
      *copy = t;
      continue;
    }
    copy->set_name(t.name());
    copy->set_data_type(t.data_type());
    *copy->mutable_dims() = t.dims();
  }
  return m;
}

std::string PrecisionName(Precision p) {
  return p == Precision::kFp16 ? "fp16" : "fp32";
}

absl::StatusOr<Prepared> Prepare(const onnx::ModelProto& model,
                                 const Options& options) {
  Prepared p;
  p.model = CopyWithoutLargeWeights(model);
  for (const auto& opset : model.opset_import()) {
    if (IsDefaultDomain(opset.domain()) &&
        opset.version() > kNewestKnownOpset) {
      p.warnings.push_back(absl::StrCat(
          "the model imports opset ", opset.version(),
          "; ONNX 1.12 knows up to ", kNewestKnownOpset,
          ", so shapes of ops changed since (ReduceSum/ReduceMean "
          "axes, Split, Resize...) may be missing or come from older schemas"));
    }
  }
  if (model.ir_version() > kNewestKnownIrVersion) {
    p.warnings.push_back(absl::StrCat(
        "the model's IR version ", model.ir_version(),
        " is newer than ONNX 1.12 knows (", kNewestKnownIrVersion, ")"));
  }
  ASSIGN_OR_RETURN(p.naming, AssignNodeNames(options.strict_names,
                                             p.model->mutable_graph()));
  if (int named = p.naming.renamed_empty + p.naming.renamed_duplicate;
      named > 0) {
    p.warnings.push_back(
        absl::StrCat("named ", named, " nodes (", p.naming.renamed_empty,
                     " without a name, ", p.naming.renamed_duplicate,
                     " with a repeated one) as <op_type>_<index>; the outputs "
                     "use these names"));
  }
  ASSIGN_OR_RETURN(const int batched,
                   ApplyInputShapes(options.shapes, p.model.get()));
  if (options.shapes.batch_size > 0 && batched == 0) {
    p.warnings.push_back(
        absl::StrCat("--batch-size ", options.shapes.batch_size,
                     " changed no input: none has a symbolic first dim"));
  }
  for (const auto& vi : p.model->graph().input()) {
    if (!vi.type().has_tensor_type()) continue;
    std::vector<std::string> unresolved;
    std::vector<std::string> example;
    const auto& dims = vi.type().tensor_type().shape().dim();
    for (int i = 0; i < dims.size(); ++i) {
      if (dims[i].has_dim_value()) {
        example.push_back(absl::StrCat(dims[i].dim_value()));
        continue;
      }
      unresolved.push_back(
          dims[i].has_dim_param()
              ? absl::StrCat("'", dims[i].dim_param(), "' (dim ", i, ")")
              : absl::StrCat("dim ", i));
      example.push_back(absl::StrCat("D", i));
    }
    if (!unresolved.empty()) {
      p.warnings.push_back(absl::StrCat(
          "input '", vi.name(), "' has unresolved ",
          absl::StrJoin(unresolved, ", "),
          ", costed as 1; set them with --input-shape ", vi.name(), ":",
          absl::StrJoin(example, ","),
          unresolved.size() == 1 && dims.size() > 0 && !dims[0].has_dim_value()
              ? " or --batch-size"
              : ""));
    }
  }
  if (absl::Status s = InferShapes(p.model.get()); !s.ok()) {
    p.warnings.push_back(
        absl::StrCat(s.message(), "; using the shapes the file records"));
  }
  ASSIGN_OR_RETURN(p.graph, Graph::Build(p.model->graph()));
  const TensorInfoMap tensors = CollectTensorInfo(p.model->graph());
  ASSIGN_OR_RETURN(p.costs, ComputeCosts(p.model->graph(), p.graph, tensors,
                                         CostOptions{options.precision}));
  if (!p.costs.ops_without_rule.empty()) {
    p.warnings.push_back(absl::StrCat(
        "no FLOPs rule for ", absl::StrJoin(p.costs.ops_without_rule, ", "),
        "; costed as their output elements"));
  }
  if (!p.costs.loops_costed_once.empty()) {
    p.warnings.push_back(absl::StrCat(
        "Loop/Scan bodies costed once (trip count not a constant): ",
        absl::StrJoin(p.costs.loops_costed_once, ", ")));
  }
  if (p.costs.nodes_with_unknown_shapes > 0) {
    p.warnings.push_back(
        absl::StrCat(p.costs.nodes_with_unknown_shapes,
                     " nodes have tensors with unresolved dims, costed as 1"));
  }
  p.problem = MakeProblem(p.graph, p.costs);
  return p;
}

Plan FinishPlan(const Prepared& p, const Options& options, const Assignment& a,
                const std::vector<ShardingPoint>& points, std::string strategy,
                std::chrono::steady_clock::time_point start) {
  Plan plan;
  proto::Plan& pp = plan.proto;
  pp.set_strategy(std::move(strategy));
  pp.set_num_ipus(a.num_ipus());
  pp.set_batch_size(static_cast<int32_t>(options.shapes.batch_size));
  pp.set_precision(PrecisionName(options.precision));
  for (const ShardingPoint& pt : points) {
    auto* out = pp.add_sharding_points();
    out->set_node(p.problem.names[pt.node]);
    out->set_ipu(pt.ipu);
    out->set_pipeline_stage(pt.pipeline_stage);
  }
  for (auto& ipu : SummarizeIpus(p.problem, a)) *pp.add_ipus() = std::move(ipu);
  const int n = p.problem.num_nodes();
  for (int32_t node = 0; node < n; ++node) {
    auto* placement = pp.add_nodes();
    placement->set_node(p.problem.names[node]);
    placement->set_ipu(a.ipu[node]);
    placement->set_pipeline_stage(a.pipeline_stage[node]);
  }
  plan.node_names = p.problem.names;
  plan.ipu.assign(a.ipu.begin(), a.ipu.end());
  plan.pipeline_stage.assign(a.pipeline_stage.begin(), a.pipeline_stage.end());
  for (const auto& w : p.warnings) pp.add_warnings(w);
  proto::ModelSummary* s = pp.mutable_summary();
  s->set_num_nodes(n);
  s->set_total_flops(p.costs.total_flops);
  s->set_total_weight_bytes(p.costs.total_weight_bytes);
  s->set_nodes_named(p.naming.renamed_empty + p.naming.renamed_duplicate);
  for (const auto& op : p.costs.ops_without_rule) s->add_ops_without_rule(op);
  s->set_nodes_with_unknown_shapes(p.costs.nodes_with_unknown_shapes);
  s->set_planning_s(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count());
  return plan;
}

}  // namespace

absl::Status Options::Validate() const {
  if (num_ipus < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("--num-ipus must be at least 2, got ", num_ipus));
  }
  if (strategy != "raw") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--strategy '", strategy, "' is unknown (available: raw)"));
  }
  if (shapes.batch_size < 0) {
    return absl::InvalidArgumentError("--batch-size must be positive");
  }
  return absl::OkStatus();
}

absl::StatusOr<Plan> PlanModel(const onnx::ModelProto& model,
                               const Options& options) {
  const auto start = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(options.Validate());
  ASSIGN_OR_RETURN(Prepared p, Prepare(model, options));
  ASSIGN_OR_RETURN(Assignment a, RawStrategy(p.problem, options.num_ipus));
  RETURN_IF_ERROR(ValidateAssignment(p.problem, a));
  ASSIGN_OR_RETURN(std::vector<ShardingPoint> points,
                   MinimalShardingPoints(p.problem, a));
  return FinishPlan(p, options, a, points, options.strategy, start);
}

absl::StatusOr<Plan> PlanFromShardingPoints(
    const onnx::ModelProto& model, const Options& options,
    const std::vector<NamedShardingPoint>& points) {
  const auto start = std::chrono::steady_clock::now();
  if (points.empty()) {
    return absl::InvalidArgumentError(
        "the sharding config has no points (expected a list of {node, device, "
        "stage})");
  }
  ASSIGN_OR_RETURN(Prepared p, Prepare(model, options));
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
  return FinishPlan(p, options, a, resolved, "apply", start);
}

absl::Status ApplyPlan(const Plan& plan, onnx::ModelProto* model) {
  onnx::GraphProto* graph = model->mutable_graph();
  if (graph->node_size() != static_cast<int>(plan.node_names.size())) {
    return absl::FailedPreconditionError(
        absl::StrCat("the plan is for a graph of ", plan.node_names.size(),
                     " nodes; this one has ", graph->node_size()));
  }
  auto named = AssignNodeNames(/*strict=*/false, graph);
  if (!named.ok()) return named.status();
  for (int i = 0; i < graph->node_size(); ++i) {
    onnx::NodeProto* node = graph->mutable_node(i);
    if (node->name() != plan.node_names[i]) {
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
