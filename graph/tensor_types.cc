#include "graph/tensor_types.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "graph/shape_analysis.h"
#include "graph/shapes.h"

namespace autoshard {
namespace {

using T = onnx::TensorProto;

// ONNX's inference is retried this many times, each time without the node it
// threw on.
constexpr int kMaxInferenceRetries = 8;

void CollectTypes(const onnx::GraphProto& g, TypeMap* types) {
  auto add = [types](const onnx::ValueInfoProto& vi) {
    if (!vi.has_type()) return;
    auto it = types->find(vi.name());
    if (it == types->end() ||
        (!IsCompleteType(it->second) && IsCompleteType(vi.type()))) {
      (*types)[vi.name()] = vi.type();
    }
  };
  for (const auto& vi : g.input()) add(vi);
  for (const auto& vi : g.output()) add(vi);
  for (const auto& vi : g.value_info()) add(vi);
}

// The node name in an ONNX inference error ("... node name: NAME): ...").
std::string FailingNodeName(absl::string_view message) {
  const absl::string_view key = "node name: ";
  const size_t at = message.find(key);
  if (at == absl::string_view::npos) return "";
  const size_t start = at + key.size();
  const size_t end = message.find(')', start);
  if (end == absl::string_view::npos) return "";
  return std::string(message.substr(start, end - start));
}

// The default domain's opset `model` imports (0 when none).
int64_t DefaultOpsetOf(const onnx::ModelProto& model) {
  int64_t opset = 0;
  for (const auto& o : model.opset_import()) {
    if (IsDefaultDomain(o.domain())) opset = o.version();
  }
  return opset;
}

}  // namespace

bool IsCompleteType(const onnx::TypeProto& type) {
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType:
      return type.tensor_type().elem_type() != 0 &&
             type.tensor_type().has_shape();
    case onnx::TypeProto::kSequenceType:
      return type.sequence_type().has_elem_type() &&
             (type.sequence_type().elem_type().has_map_type() ||
              (type.sequence_type().elem_type().has_tensor_type() &&
               type.sequence_type().elem_type().tensor_type().elem_type() !=
                   0));
    case onnx::TypeProto::kMapType:
      return type.map_type().key_type() != 0 &&
             type.map_type().has_value_type();
    case onnx::TypeProto::kOptionalType:
      return type.optional_type().has_elem_type() &&
             IsCompleteType(type.optional_type().elem_type());
    default:
      return false;
  }
}

namespace {

// InferTensorTypes; `first`, when not null, is what InferShapes on
// CopyWithoutLargeWeights(model) returned, so that it is not run again.
InterfaceTypes InferWithRetries(const onnx::ModelProto& model,
                                const Graph& graph, const absl::Status* first) {
  InterfaceTypes out;
  std::vector<std::string>* warnings = &out.warnings;
  std::unique_ptr<onnx::ModelProto> copy = CopyWithoutLargeWeights(model);
  // copy's node i is the model's node index[i] (failing nodes are dropped).
  std::vector<int> index(copy->graph().node_size());
  for (size_t i = 0; i < index.size(); ++i) index[i] = static_cast<int>(i);
  onnx::ModelProto inferred;
  for (int attempt = 0;; ++attempt) {
    inferred = *copy;
    absl::Status s =
        attempt == 0 && first != nullptr ? *first : InferShapes(&inferred);
    if (s.ok()) break;
    const std::string failing = FailingNodeName(s.message());
    auto* nodes = copy->mutable_graph()->mutable_node();
    auto it = std::find_if(nodes->begin(), nodes->end(),
                           [&](const onnx::NodeProto& n) {
                             return !failing.empty() && n.name() == failing;
                           });
    if (it == nodes->end() || attempt == kMaxInferenceRetries) {
      warnings->push_back(absl::StrCat(
          s.message(), "; stage interfaces use the types the file records"));
      inferred = *copy;
      break;
    }
    warnings->push_back(absl::StrCat(
        "ONNX's shape inference fails at node '", failing, "' (", it->op_type(),
        "), so it ran without that node; its outputs' types "
        "come from autoshard's rules"));
    index.erase(index.begin() + (it - nodes->begin()));
    nodes->erase(it);
  }
  std::vector<const onnx::NodeProto*> twin(graph.num_nodes(), nullptr);
  for (size_t i = 0; i < index.size(); ++i) {
    twin[index[i]] = &inferred.graph().node(static_cast<int>(i));
  }
  InterfaceTypes typed = TypesAfterInference(
      model, RecordedTypes(model), inferred.graph(), graph, std::move(twin));
  for (auto& w : typed.warnings) warnings->push_back(std::move(w));
  out.types = std::move(typed.types);
  return out;
}

}  // namespace

TypeMap InferTensorTypes(const onnx::ModelProto& model, const Graph& graph,
                         std::vector<std::string>* warnings) {
  InterfaceTypes out = InferWithRetries(model, graph, nullptr);
  for (auto& w : out.warnings) warnings->push_back(std::move(w));
  return std::move(out.types);
}

InterfaceTypes InferTensorTypesAfterFailure(const onnx::ModelProto& model,
                                            const Graph& graph,
                                            const absl::Status& first) {
  return InferWithRetries(model, graph, &first);
}

TypeMap RecordedTypes(const onnx::ModelProto& model) {
  TypeMap recorded;
  if (DefaultOpsetOf(model) > kNewestKnownOpset) {
    CollectTypes(model.graph(), &recorded);
  }
  return recorded;
}

InterfaceTypes TypesAfterInference(const onnx::ModelProto& model,
                                   const TypeMap& recorded,
                                   const onnx::GraphProto& inferred,
                                   const Graph& graph,
                                   std::vector<const onnx::NodeProto*> twin) {
  InterfaceTypes out;
  TypeMap& types = out.types;
  CollectTypes(inferred, &types);
  // DESIGN.md §8: for opsets newer than ONNX 1.12 knows, its inference uses
  // older schemas (ReduceMean's axes input is ignored...), so its shapes are
  // not trusted: what the file records stays, inferred tensors keep their
  // element type and the rules, which read the inputs the new opsets added,
  // give the rank.
  if (const int64_t opset = DefaultOpsetOf(model); opset > kNewestKnownOpset) {
    for (auto& [name, type] : types) {
      if (!recorded.contains(name) && type.has_tensor_type()) {
        type.mutable_tensor_type()->clear_shape();
      }
    }
    twin.assign(twin.size(), nullptr);
    out.warnings.push_back(absl::StrCat(
        "the model imports opset ", opset, ", newer than ONNX 1.12 knows (",
        kNewestKnownOpset,
        "): cut tensors take their rank from the file's records and "
        "autoshard's rules, not from ONNX's inference"));
  }
  ApplyTypeRules(model.graph(), graph, &types, twin);
  return out;
}

std::string TypeName(const onnx::TypeProto& type) {
  auto elem_name = [](int32_t elem) -> std::string {
    switch (elem) {
      case T::FLOAT:
        return "float32";
      case T::UINT8:
        return "uint8";
      case T::INT8:
        return "int8";
      case T::UINT16:
        return "uint16";
      case T::INT16:
        return "int16";
      case T::INT32:
        return "int32";
      case T::INT64:
        return "int64";
      case T::STRING:
        return "string";
      case T::BOOL:
        return "bool";
      case T::FLOAT16:
        return "float16";
      case T::DOUBLE:
        return "float64";
      case T::UINT32:
        return "uint32";
      case T::UINT64:
        return "uint64";
      case T::COMPLEX64:
        return "complex64";
      case T::COMPLEX128:
        return "complex128";
      case T::BFLOAT16:
        return "bfloat16";
      case 0:
        return "unknown";
      default:
        return absl::StrCat("onnx_type_", elem);
    }
  };
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType:
      return elem_name(type.tensor_type().elem_type());
    case onnx::TypeProto::kSequenceType:
      return absl::StrCat("sequence(",
                          TypeName(type.sequence_type().elem_type()), ")");
    case onnx::TypeProto::kMapType:
      return absl::StrCat("map(", elem_name(type.map_type().key_type()), ",",
                          TypeName(type.map_type().value_type()), ")");
    case onnx::TypeProto::kOptionalType:
      return absl::StrCat("optional(",
                          TypeName(type.optional_type().elem_type()), ")");
    default:
      return "unknown";
  }
}

}  // namespace autoshard