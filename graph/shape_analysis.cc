#include "graph/shape_analysis.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/fixed_shapes.h"

namespace autoshard {
namespace {

// Initializers with more elements than this are copied without their data
// into the model used for shape inference: it needs their dims only.
constexpr int64_t kMaxCopiedInitializerElements = 1024;

// The first tensor of `graph` whose inferred shape has a negative dim (as
// ONNX's inference computes for a Conv longer than its input), written
// "name [d0,d1,...]" with a count of the others, or "".
std::string NegativeDims(const onnx::GraphProto& graph) {
  std::string first;
  int count = 0;
  auto check = [&](const onnx::ValueInfoProto& vi) {
    const auto& dims = vi.type().tensor_type().shape().dim();
    bool negative = false;
    for (const auto& d : dims) {
      negative |= d.has_dim_value() && d.dim_value() < 0;
    }
    if (!negative || count++ > 0) return;
    std::vector<std::string> text;
    for (const auto& d : dims) {
      text.push_back(d.has_dim_value() ? absl::StrCat(d.dim_value()) : "?");
    }
    first = absl::StrCat("'", vi.name(), "' [", absl::StrJoin(text, ","), "]");
  };
  for (const auto& vi : graph.value_info()) check(vi);
  for (const auto& vi : graph.output()) check(vi);
  if (count > 1) absl::StrAppend(&first, " and ", count - 1, " more");
  return first;
}

// Node i of `model`'s graph, for every i.
std::vector<const onnx::NodeProto*> Twins(const onnx::ModelProto& model) {
  std::vector<const onnx::NodeProto*> twin;
  for (const auto& node : model.graph().node()) twin.push_back(&node);
  return twin;
}

}  // namespace

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
    // Note [A stripped weight is marked external] (shape_analysis.h).
    copy->set_data_location(onnx::TensorProto::EXTERNAL);
  }
  return m;
}

InterfaceTypes InterfaceTypesOf(const onnx::ModelProto& inferred,
                                const TypeMap& recorded, const Graph& graph) {
  return TypesAfterInference(inferred, recorded, inferred.graph(), graph,
                             Twins(inferred));
}

ModelShapes AnalyzeShapes(onnx::ModelProto* model, const std::string& hint,
                          const Graph* interface_graph,
                          onnx::ModelProto* declared) {
  ModelShapes out;
  absl::Status inferred = absl::UnknownError("not inferred");
  if (interface_graph != nullptr && declared != nullptr) {
    // The one whole-model inference, on the model as declared: it types the
    // interfaces, and planning's fixed shapes are derived from it.
    const TypeMap recorded = RecordedTypes(*declared);
    ShapeDataMap data;
    if (absl::Status s = InferShapes(declared, &data); s.ok()) {
      // The interfaces are typed when a split asks (InterfaceTypesOf).
      out.declared_inferred = true;
      out.declared_recorded = recorded;
      inferred = InferFixedShapes(*declared, data, model);
    } else {
      // The split's retries without the failing node, from this failure:
      // `model` is still `declared` as it was, but for its inputs.
      onnx::ModelProto as_declared = *model;
      *as_declared.mutable_graph()->mutable_input() = declared->graph().input();
      out.interface_types =
          InferTensorTypesAfterFailure(as_declared, *interface_graph, s);
    }
  }
  if (!inferred.ok()) {
    TypeMap recorded;
    if (interface_graph != nullptr && declared == nullptr) {
      recorded = RecordedTypes(*model);
    }
    inferred = InferShapes(model);
    if (!inferred.ok()) {
      out.warnings.push_back(absl::StrCat(
          inferred.message(), "; using the shapes the file records"));
    } else if (interface_graph != nullptr && declared == nullptr) {
      // Before the propagation pass writes its shapes into value_info: the
      // interfaces are typed from ONNX's inference and the rules alone.
      out.interface_types =
          InterfaceTypesOf(*model, recorded, *interface_graph);
    }
  }
  if (std::string bad = NegativeDims(model->graph()); !bad.empty()) {
    out.warnings.push_back(absl::StrCat("shape inference gives negative dims (",
                                        bad, "): the inputs are ",
                                        "too small for the model", hint));
  }
  out.tensors = CollectTensorInfo(model->graph());
  ShapePropagationResult propagated = PropagateShapes(model, &out.tensors);
  out.assumptions = std::move(propagated.assumptions);
  return out;
}

}  // namespace autoshard
