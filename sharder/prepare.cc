#include "sharder/prepare.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/plural.h"
#include "base/status_macros.h"
#include "costmodel/device_profile.h"
#include "costmodel/weight_location.h"
#include "graph/dim_conflicts.h"
#include "graph/model_io.h"
#include "graph/onnx_guard.h"
#include "graph/shape_analysis.h"
#include "graph/shape_conflicts.h"
#include "sharder/assumptions.h"
#include "solver/strategies/constraints.h"

namespace autoshard::internal {
namespace {

// The options' device profile, the built-in default when none was given,
// with the available memory proportion override applied.
absl::StatusOr<proto::DeviceProfile> ResolveDevice(const Options& options) {
  proto::DeviceProfile device = options.device;
  if (device.tiles_per_ipu() == 0) {
    ASSIGN_OR_RETURN(device, LoadDeviceProfile("ipu2"));
  }
  if (options.available_memory_proportion) {
    device.set_available_memory_proportion(
        *options.available_memory_proportion);
  }
  RETURN_IF_ERROR(ValidateDeviceProfile(device));
  return device;
}

// The model being prepared, which Prepare made (not const) and nothing else
// reads until Prepare returns: then it is the analysis's, only read.
onnx::ModelProto* MutableModel(Prepared* p) {
  return const_cast<onnx::ModelProto*>(p->analysis->model.get());
}

// "a, b, c, d, e and 3 more".
std::string SomeNames(const std::vector<std::string>& names) {
  constexpr size_t kNamed = 5;
  const size_t shown = std::min(names.size(), kNamed);
  return absl::StrCat(absl::StrJoin(names.begin(), names.begin() + shown, ", "),
                      names.size() > shown
                          ? absl::StrCat(" and ", names.size() - shown, " more")
                          : "");
}

// Warns about the Conv/MatMul/Gemm-class nodes whose FLOPs are wrong: those
// without a static output shape, and those whose output is empty (a dim 0:
// the inputs are too small for the model, e.g. an unresolved sequence
// length taken as 1 under a convolution longer than that).
void WarnAboutHeavyNodes(const TensorInfoMap& tensors, Prepared* p) {
  std::vector<std::string> unknown, empty;
  for (NodeId id = 0; id < p->analysis->dag.num_nodes(); ++id) {
    const NodeCost& c = p->analysis->costs.nodes[id];
    if (!IsHeavyOpClass(c.op_class)) continue;
    if (!c.output_shapes_static) {
      unknown.push_back(p->analysis->dag.name(id));
      continue;
    }
    const onnx::NodeProto& node = p->analysis->dag.node(id);
    auto it =
        node.output_size() > 0 ? tensors.find(node.output(0)) : tensors.end();
    if (it != tensors.end() && it->second.IsStatic() &&
        std::find(it->second.dims.begin(), it->second.dims.end(), 0) !=
            it->second.dims.end()) {
      empty.push_back(p->analysis->dag.name(id));
    }
  }
  if (!unknown.empty()) {
    p->warnings.push_back(absl::StrCat(
        unknown.size(),
        " Conv/MatMul/Gemm-class nodes have no static output shape, so their "
        "FLOPs are wrong: ",
        SomeNames(unknown)));
  }
  if (!empty.empty()) {
    p->warnings.push_back(absl::StrCat(
        empty.size(),
        " Conv/MatMul/Gemm-class nodes have an empty output (a dim is 0), so "
        "the inputs are too small for the model: ",
        SomeNames(empty),
        p->unresolved_dims.empty()
            ? ""
            : "; its unresolved input dims were taken as 1, set them with "
              "--input-shape"));
  }
}

// Warns when the model is newer than ONNX 1.12 knows.
void WarnAboutVersions(const onnx::ModelProto& model, Prepared* p) {
  for (const auto& opset : model.opset_import()) {
    if (IsDefaultDomain(opset.domain()) &&
        opset.version() > kNewestKnownOpset) {
      p->warnings.push_back(absl::StrCat(
          "the model imports opset ", opset.version(),
          "; ONNX 1.12 knows up to ", kNewestKnownOpset,
          ", so shapes of ops changed since (ReduceSum/ReduceMean "
          "axes, Split, Resize...) may be missing or come from older schemas"));
    }
  }
  if (model.ir_version() > kNewestKnownIrVersion) {
    p->warnings.push_back(absl::StrCat(
        "the model's IR version ", model.ir_version(),
        " is newer than ONNX 1.12 knows (", kNewestKnownIrVersion, ")"));
  }
}

absl::Status NameNodes(const Options& options, Prepared* p) {
  ASSIGN_OR_RETURN(
      p->naming,
      AssignNodeNames(options.strict_names, MutableModel(p)->mutable_graph()));
  if (int named = p->naming.renamed_empty + p->naming.renamed_duplicate;
      named > 0) {
    p->warnings.push_back(absl::StrCat(
        "named ", Plural(named, "node"), " (", p->naming.renamed_empty,
        " without a name, ", p->naming.renamed_duplicate,
        " with a repeated one) as <op_type>_<index>; the outputs "
        "use these names"));
  }
  return absl::OkStatus();
}

// Applies the options' input shapes, with their warnings.
absl::StatusOr<InputShapeChanges> ApplyOptionShapes(const Options& options,
                                                    Prepared* p) {
  ASSIGN_OR_RETURN(InputShapeChanges changes,
                   ApplyInputShapes(options.shapes, MutableModel(p)));
  if (!changes.overridden.empty()) {
    p->warnings.push_back(
        absl::StrCat("the options replace static dims of the model (",
                     SomeNames(changes.overridden),
                     "); the shapes of the other tensors are inferred again"));
  }
  if (options.shapes.batch_size > 0 && changes.batched == 0 &&
      options.shapes.input_shapes.empty() &&
      changes.without_batch_axis.empty()) {
    p->warnings.push_back(
        absl::StrCat("--batch-size ", options.shapes.batch_size,
                     " changed no input: none has a symbolic first dim"));
  }
  return changes;
}

// The batch the pipeline figures use (samples per step): the first tensor
// input's first dim (inputs that are initializers, as old exporters list
// them, do not count), or 1 when that input has no batch axis
// (graph/batch_axis.h: the graph adds one). InvalidArgument when that dim
// is 0 (--dim allows 0, for an empty KV cache; a step of no samples would
// plan 0 FLOPs and an endless throughput).
absl::Status FindBatch(const Options& options, const InputShapeChanges& changes,
                       Prepared* p) {
  std::set<std::string> initializer_names;
  for (const auto& t : p->analysis->model->graph().initializer())
    initializer_names.insert(t.name());
  for (const auto& vi : p->analysis->model->graph().input()) {
    if (!vi.type().has_tensor_type() ||
        vi.type().tensor_type().shape().dim_size() == 0 ||
        initializer_names.count(vi.name()) > 0) {
      continue;
    }
    const auto& d0 = vi.type().tensor_type().shape().dim(0);
    if (d0.has_dim_value() && d0.dim_value() == 0 &&
        !changes.without_batch_axis.contains(vi.name())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", vi.name(),
          "' has batch 0: a step of no samples (0 suits a dim such as an "
          "empty KV cache's past length, not the batch)"));
    }
    p->analysis->batch =
        d0.has_dim_value() && d0.dim_value() > 0 ? d0.dim_value() : 1;
    if (changes.without_batch_axis.contains(vi.name())) p->analysis->batch = 1;
    if (options.shapes.batch_size > 0 &&
        p->analysis->batch != options.shapes.batch_size &&
        options.shapes.input_shapes.contains(vi.name())) {
      p->warnings.push_back(absl::StrCat(
          "--input-shape ", vi.name(), " sets batch ", p->analysis->batch,
          ", which wins over --batch-size ", options.shapes.batch_size));
    }
    break;
  }
  return absl::OkStatus();
}

// Sets every input dim still unknown to 1, listing it in unresolved_dims
// with a warning per input.
void FixUnresolvedDims(Prepared* p) {
  for (auto& vi : *MutableModel(p)->mutable_graph()->mutable_input()) {
    if (!vi.type().has_tensor_type()) continue;
    std::vector<std::string> unresolved;
    std::vector<std::string> example;
    auto& dims = *vi.mutable_type()
                      ->mutable_tensor_type()
                      ->mutable_shape()
                      ->mutable_dim();
    for (int i = 0; i < dims.size(); ++i) {
      if (dims[i].has_dim_value()) {
        example.push_back(absl::StrCat(dims[i].dim_value()));
        continue;
      }
      p->unresolved_dims.push_back({vi.name(), i, dims[i].dim_param()});
      unresolved.push_back(
          dims[i].has_dim_param()
              ? absl::StrCat("'", dims[i].dim_param(), "' (dim ", i, ")")
              : absl::StrCat("dim ", i));
      example.push_back(absl::StrCat("D", i));
    }
    if (!unresolved.empty()) {
      p->warnings.push_back(absl::StrCat(
          "input '", vi.name(), "' has unresolved ",
          absl::StrJoin(unresolved, ", "),
          ", costed as 1; set them with --input-shape ", vi.name(), ":",
          absl::StrJoin(example, ","),
          unresolved.size() == 1 && dims.size() > 0 && !dims[0].has_dim_value()
              ? " or --batch-size"
              : ""));
    }
    // Costed as 1 (DESIGN.md §3.1), so inferred as 1: the shapes computed
    // from the dim then agree with its cost.
    for (auto& d : dims) {
      if (!d.has_dim_value()) d.set_dim_value(1);
    }
  }
}

using Inputs = google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>;

// The graph inputs' bytes, to tell whether planning changed them.
std::string InputsBytes(const Inputs& inputs) {
  std::string bytes;
  for (const auto& vi : inputs) bytes += vi.SerializeAsString();
  return bytes;
}

// Runs AnalyzeShapes (the run's one ONNX inference for planning), with the
// per-stage interface types when the inputs are the model's own (as
// `declared`: no option and no unresolved dim changed them).
absl::StatusOr<TensorInfoMap> AnalyzePreparedShapes(
    const InputShapeChanges& changes, const Inputs& declared, Prepared* p) {
  const bool as_declared =
      InputsBytes(p->analysis->model->graph().input()) == InputsBytes(declared);
  // The model as declared, when only free input dims were fixed (a replaced
  // static dim drops the file's value_info: the split infers then). Its
  // inference is the run's one; planning's shapes are derived from it.
  std::unique_ptr<onnx::ModelProto> declared_model;
  if (!as_declared && changes.overridden.empty()) {
    declared_model = std::make_unique<onnx::ModelProto>(*MutableModel(p));
    *declared_model->mutable_graph()->mutable_input() = declared;
  }
  ModelShapes shapes =
      AnalyzeShapes(MutableModel(p),
                    p->unresolved_dims.empty()
                        ? ""
                        : "; its unresolved input dims were taken as 1, set "
                          "them with --input-shape",
                    as_declared || declared_model ? &p->analysis->dag : nullptr,
                    declared_model.get());
  for (auto& w : shapes.warnings) p->warnings.push_back(std::move(w));
  p->analysis->interface_types = std::move(shapes.interface_types);
  if (shapes.declared_inferred) {
    p->analysis->declared = std::move(declared_model);
    p->analysis->declared_recorded = std::move(shapes.declared_recorded);
  }
  if (!changes.overridden.empty()) {
    RETURN_IF_ERROR(
        CheckReshapeConstants(p->analysis->model->graph(), shapes.tensors));
  }
  p->shape_assumptions = std::move(shapes.assumptions);
  if (!p->shape_assumptions.empty()) {
    std::map<std::string, int> by_op;
    for (const auto& a : p->shape_assumptions) ++by_op[a.op_type];
    std::vector<std::string> parts;
    for (const auto& [op, count] : by_op) {
      parts.push_back(absl::StrCat(op, " ", count));
    }
    p->warnings.push_back(absl::StrCat(
        Plural(p->shape_assumptions.size(), "data-dependent dim",
               "data-dependent dims"),
        " set to the bound the graph implies (", absl::StrJoin(parts, ", "),
        "); `autoshard inspect --json` lists them"));
  }
  return std::move(shapes.tensors);
}

// The options that set input dims, as typed ("--batch-size 4, --dim
// seq=128"), or "" when none did.
std::string ShapeOptionsText(const ShapeOptions& o) {
  std::vector<std::string> parts;
  if (o.batch_size > 0)
    parts.push_back(absl::StrCat("--batch-size ", o.batch_size));
  for (const auto& [name, dims] : o.input_shapes) {
    parts.push_back(
        absl::StrCat("--input-shape ", name, ":", absl::StrJoin(dims, ",")));
  }
  for (const auto& [name, value] : o.dims) {
    parts.push_back(absl::StrCat("--dim ", name, "=", value));
  }
  return absl::StrJoin(parts, ", ");
}

// Costs every node, with the cost model's warnings.
absl::Status CostNodes(const Options& options, const TensorInfoMap& tensors,
                       Prepared* p) {
  ASSIGN_OR_RETURN(p->analysis->costs,
                   ComputeCosts(p->analysis->model->graph(), p->analysis->dag,
                                tensors, CostOptions{options.precision}));
  if (!p->analysis->costs.ops_without_rule.empty()) {
    p->warnings.push_back(
        absl::StrCat("no FLOPs rule for ",
                     absl::StrJoin(p->analysis->costs.ops_without_rule, ", "),
                     "; costed as their output elements"));
  }
  if (!p->analysis->costs.loops_costed_once.empty()) {
    p->warnings.push_back(absl::StrCat(
        "Loop/Scan bodies costed once (trip count not a constant): ",
        absl::StrJoin(p->analysis->costs.loops_costed_once, ", ")));
  }
  WarnAboutHeavyNodes(tensors, p);
  if (p->analysis->costs.nodes_with_unknown_shapes > 0) {
    p->warnings.push_back(
        absl::StrCat(Plural(p->analysis->costs.nodes_with_unknown_shapes,
                            "node has", "nodes have"),
                     " tensors with unresolved dims, costed as 1"));
  }
  return absl::OkStatus();
}

// Op classes the model uses that the device profile does not describe.
void WarnAboutMissingOpClasses(Prepared* p) {
  std::set<std::string> missing;
  for (int32_t node = 0; node < p->analysis->problem.num_nodes(); ++node) {
    if (p->analysis->problem.is_constant[node]) continue;
    const std::string& c = p->analysis->problem.op_class[node];
    bool known = false;
    for (const auto& oc : p->analysis->device.op_classes())
      known |= oc.op_class() == c;
    if (!known) missing.insert(c);
  }
  if (missing.empty()) return;
  bool has_other = false;
  for (const auto& oc : p->analysis->device.op_classes())
    has_other |= oc.op_class() == "other";
  p->warnings.push_back(absl::StrCat(
      "device profile '", p->analysis->device.name(),
      "' has no op_classes entry for ", absl::StrJoin(missing, ", "),
      has_other ? "; those ops use its 'other' entry"
                : "; those ops cost no code and run at the peak FLOP/s"));
}

}  // namespace

absl::StatusOr<Prepared> Prepare(const onnx::ModelProto& model,
                                 const Options& options) {
  Prepared p;
  ModelAnalysis& a = *p.analysis;
  // What ONNX's inference trusts, and the model's size, are checked first
  // (Note [What ONNX 1.12's shape inference trusts]).
  RETURN_IF_ERROR(CheckModelForOnnx(model));
  ASSIGN_OR_RETURN(a.device, ResolveDevice(options));
  a.precision = options.precision;
  a.model = CopyWithoutLargeWeights(model);
  WarnAboutVersions(model, &p);
  RETURN_IF_ERROR(NameNodes(options, &p));
  const Inputs declared_inputs = a.model->graph().input();
  ASSIGN_OR_RETURN(const InputShapeChanges changes,
                   ApplyOptionShapes(options, &p));
  RETURN_IF_ERROR(FindBatch(options, changes, &p));
  FixUnresolvedDims(&p);
  // The DAG does not depend on shapes: built once, before the inference,
  // it also types the per-stage interfaces.
  ASSIGN_OR_RETURN(a.dag, Graph::Build(a.model->graph()));
  ASSIGN_OR_RETURN(TensorInfoMap tensors,
                   AnalyzePreparedShapes(changes, declared_inputs, &p));
  // Note [One check where dims meet] (graph/dim_conflicts.h).
  if (const std::string cause = ShapeOptionsText(options.shapes);
      !cause.empty() &&
      InputsBytes(a.model->graph().input()) != InputsBytes(declared_inputs)) {
    RETURN_IF_ERROR(CheckOptionDims(*a.model, declared_inputs, cause));
  }
  RETURN_IF_ERROR(CostNodes(options, tensors, &p));
  a.problem = MakeProblem(a.dag, a.costs);
  RETURN_IF_ERROR(ApplyPins(options.pins, &a.problem));
  if (options.weights_location == kWeightsRemote) {
    RETURN_IF_ERROR(
        MakeWeightsRemote(a.device, options.shard_over, &a.problem));
  }
  WarnAboutMissingOpClasses(&p);
  a.tensors = std::move(tensors);
  if (options.strict) {
    RETURN_IF_ERROR(CheckStrictShapes(MakeShapesVerdict(p), p));
  }
  return p;
}

std::string PrecisionName(Precision p) {
  return p == Precision::kFp16 ? "fp16" : "fp32";
}

}  // namespace autoshard::internal
