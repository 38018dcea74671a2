#include "graph/onnx_guard.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "graph/onnx_guard_internal.h"
#include "graph/shapes.h"
#include "onnx/defs/schema.h"

namespace autoshard {
namespace guard_internal {

std::string NodeLabel(const onnx::NodeProto& node) {
  return absl::StrCat("node '", node.name(), "' (", node.op_type(), ")");
}

absl::Status NodeError(const onnx::NodeProto& node, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(NodeLabel(node), ": ", why));
}

const onnx::AttributeProto* FindAttr(const onnx::NodeProto& node,
                                     const char* name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

}  // namespace guard_internal

namespace {

using guard_internal::CheckConvOrPool;
using guard_internal::CheckFunctionCalls;
using guard_internal::FindAttr;
using guard_internal::IsConvOrPool;
using guard_internal::NodeError;
using guard_internal::NodeLabel;

// The integer values of a small constant (int32 or int64, at most 4096
// elements), or nullopt.
std::optional<std::vector<int64_t>> IntValues(const onnx::TensorProto& t) {
  std::vector<int64_t> values;
  const bool is64 = t.data_type() == onnx::TensorProto::INT64;
  if (!is64 && t.data_type() != onnx::TensorProto::INT32) return std::nullopt;
  if (t.has_data_location() &&
      t.data_location() == onnx::TensorProto::EXTERNAL) {
    return std::nullopt;
  }
  if (!t.raw_data().empty()) {
    const size_t width = is64 ? 8 : 4;
    const std::string& raw = t.raw_data();
    if (raw.size() % width != 0 || raw.size() / width > 4096)
      return std::nullopt;
    for (size_t i = 0; i < raw.size(); i += width) {
      if (is64) {
        int64_t v;
        std::memcpy(&v, raw.data() + i, 8);
        values.push_back(v);
      } else {
        int32_t v;
        std::memcpy(&v, raw.data() + i, 4);
        values.push_back(v);
      }
    }
    return values;
  }
  if (t.int64_data_size() + t.int32_data_size() > 4096) return std::nullopt;
  values.assign(t.int64_data().begin(), t.int64_data().end());
  values.insert(values.end(), t.int32_data().begin(), t.int32_data().end());
  return values;
}

absl::Status CheckSplit(const onnx::NodeProto& node,
                        const ConstantInput& constant) {
  if (const onnx::AttributeProto* a = FindAttr(node, "split")) {
    for (int64_t v : a->ints()) {
      if (v < 0) {
        return NodeError(node,
                         absl::StrCat("split has ", v, "; sizes must be >= 0"));
      }
    }
  }
  const onnx::TensorProto* t = constant ? constant(1) : nullptr;
  if (t == nullptr) return absl::OkStatus();
  std::optional<std::vector<int64_t>> values = IntValues(*t);
  if (!values.has_value()) return absl::OkStatus();
  for (int64_t v : *values) {
    if (v < 0 || v > kMaxDim) {
      return NodeError(node, absl::StrCat("split input has ", v,
                                          "; sizes must be 0 to ", kMaxDim));
    }
  }
  if (t->dims_size() == 0 && values->size() == 1 && (*values)[0] == 0) {
    return NodeError(node, "split is the scalar 0; a chunk size must be >= 1");
  }
  return absl::OkStatus();
}

absl::Status CheckAxes(const onnx::NodeProto& node) {
  for (const char* name : {"axis", "axes"}) {
    const onnx::AttributeProto* a = FindAttr(node, name);
    if (a == nullptr) continue;
    std::vector<int64_t> values(a->ints().begin(), a->ints().end());
    if (a->type() == onnx::AttributeProto::INT) values.push_back(a->i());
    if (values.size() > static_cast<size_t>(kMaxRank)) {
      return NodeError(node, absl::StrCat(name, " has ", values.size(),
                                          " values; at most ", kMaxRank));
    }
    for (int64_t v : values) {
      if (v < -kMaxRank || v > kMaxRank) {
        return NodeError(node, absl::StrCat(name, " is ", v,
                                            "; no tensor has that many dims"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckShape(const onnx::TensorShapeProto& shape,
                        const std::string& what) {
  if (shape.dim_size() > kMaxRank) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " has rank ", shape.dim_size(), "; at most ", kMaxRank));
  }
  std::vector<int64_t> dims;
  for (const auto& d : shape.dim()) {
    if (d.has_dim_value()) dims.push_back(d.dim_value());
  }
  int64_t elements = 1;
  for (int64_t d : dims) {
    if (d < 0 || d > kMaxDim) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " has the dim ", d, "; dims must be 0 to ", kMaxDim));
    }
  }
  for (int64_t d : dims) {
    if (d == 0) return absl::OkStatus();
    if (elements > kMaxElements / d) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " has more than 2^48 elements (", absl::StrJoin(dims, "x"),
          "): its bytes would overflow"));
    }
    elements *= d;
  }
  return absl::OkStatus();
}

// How many values of `t`'s type the tensor stores in place: raw_data's
// bytes over the element size (ElementSizeBytes), or the typed field
// onnx.proto names for the type (complex types hold two numbers a value);
// -1 when the type is not one whose count can be checked (undefined, or a
// future type); -2 when raw_data holds a part of a value.
int64_t StoredValues(const onnx::TensorProto& t) {
  using T = onnx::TensorProto;
  int64_t typed = 0;  // values in the typed field
  switch (t.data_type()) {
    case T::FLOAT:
      typed = t.float_data_size();
      break;
    case T::COMPLEX64:
      typed = t.float_data_size() / 2;
      break;
    case T::DOUBLE:
      typed = t.double_data_size();
      break;
    case T::COMPLEX128:
      typed = t.double_data_size() / 2;
      break;
    case T::INT64:
      typed = t.int64_data_size();
      break;
    case T::UINT64:
    case T::UINT32:
      typed = t.uint64_data_size();
      break;
    case T::INT32:
    case T::INT16:
    case T::UINT16:
    case T::FLOAT16:
    case T::BFLOAT16:
    case T::INT8:
    case T::UINT8:
    case T::BOOL:
      typed = t.int32_data_size();
      break;
    case T::STRING:
      return t.string_data_size();
    default:
      return -1;
  }
  if (t.has_raw_data()) {
    const int64_t bytes = ElementSizeBytes(t.data_type());
    const int64_t raw = static_cast<int64_t>(t.raw_data().size());
    return raw % bytes == 0 ? raw / bytes : -2;
  }
  return typed;
}

absl::Status CheckTensorDims(const onnx::TensorProto& t,
                             const std::string& what) {
  onnx::TensorShapeProto shape;
  for (int64_t d : t.dims()) shape.add_dim()->set_dim_value(d);
  return CheckShape(shape, what);
}

// Ops whose ONNX 1.12 shape inference reads the values of a constant input
// (the others read only its type and dims).
bool ReadsConstantValues(const std::string& op) {
  static const absl::flat_hash_set<std::string> kOps = {
      "Range",  "Reshape", "Expand",    "Tile",         "Slice",
      "Pad",    "TopK",    "Resize",    "Upsample",     "OneHot",
      "Split",  "Squeeze", "Unsqueeze", "ReduceSum",    "ConstantOfShape",
      "Gather", "Concat",  "Shape",     "CenterCropPad"};
  return kOps.contains(op);
}

// A constant input of `node` that ONNX's inference reads (an integer
// tensor, which data propagation reads whatever the op; any tensor an op of
// ReadsConstantValues gets) stores as many values as its dims say, unless
// its data is external: ONNX 1.12 reads them without checking the length (a
// Range whose scalar start stored no value read address 0; fuzz_shapes).
// Weights of other ops may carry dims only (autoshard never reads them).
absl::Status CheckConstantValues(const onnx::NodeProto& node,
                                 const ConstantInput& constant) {
  for (int i = 0; i < node.input_size(); ++i) {
    const onnx::TensorProto* t = constant(i);
    if (t == nullptr) continue;
    if (t->has_data_location() &&
        t->data_location() == onnx::TensorProto::EXTERNAL)
      continue;
    const bool integer = t->data_type() == onnx::TensorProto::INT64 ||
                         t->data_type() == onnx::TensorProto::INT32;
    if (!integer && !ReadsConstantValues(node.op_type())) continue;
    int64_t elements = 1;
    for (int64_t d : t->dims()) elements *= d;  // at most 2^48 (CheckShape)
    const int64_t stored = StoredValues(*t);
    if (stored == -1 || stored == elements) continue;
    return NodeError(
        node,
        absl::StrCat(
            "constant input '", node.input(i), "' has dims [",
            absl::StrJoin(t->dims(), ","), "] (", elements,
            elements == 1 ? " value" : " values", ") but stores ",
            stored == -2
                ? absl::StrCat(t->raw_data().size(),
                               " raw bytes, not a whole number of "
                               "values")
                : absl::StrCat(stored, stored == 1 ? " value" : " values"),
            "; ONNX's shape inference would read past them"));
  }
  return absl::OkStatus();
}

absl::Status CheckValueInfo(const onnx::ValueInfoProto& vi,
                            const std::string& where) {
  const onnx::TypeProto* type = &vi.type();
  // Sequences and optionals hold a tensor type one or two levels down.
  for (int i = 0; i < 4; ++i) {
    if (type->has_sequence_type()) {
      type = &type->sequence_type().elem_type();
    } else if (type->has_optional_type()) {
      type = &type->optional_type().elem_type();
    } else {
      break;
    }
  }
  if (!type->has_tensor_type() || !type->tensor_type().has_shape())
    return absl::OkStatus();
  return CheckShape(type->tensor_type().shape(),
                    absl::StrCat(where, "tensor '", vi.name(), "'"));
}

// A graph to check, how deep it is (the main graph is 1) and where it is
// ("node 'If_3' (If) body 'then_branch': ", empty for the main graph).
struct PendingGraph {
  const onnx::GraphProto* graph;
  int depth;
  std::string where;
  int64_t opset;          // of the default domain, for schema lookups
  bool function = false;  // a model-local function's nodes
};

// The default domain's opset in `imports` ("" or "ai.onnx"), or `fallback`.
int64_t DefaultOpset(
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports,
    int64_t fallback) {
  for (const auto& o : imports) {
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  }
  return fallback;
}

// Fewer inputs or outputs than the op's schema (at `opset`) requires: ONNX
// 1.12's inference counts on them (Split divides its axis by the number of
// outputs: SIGFPE with none, found by fuzz_shapes).
absl::Status CheckArity(const onnx::NodeProto& node, int64_t opset) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") {
    return absl::OkStatus();
  }
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(
      node.op_type(), static_cast<int>(std::min<int64_t>(opset, INT32_MAX)),
      "");
  if (schema == nullptr) return absl::OkStatus();
  if (node.input_size() < schema->min_input()) {
    return NodeError(node,
                     absl::StrCat("has ", node.input_size(), " inputs; ",
                                  node.op_type(), "-", schema->since_version(),
                                  " takes at least ", schema->min_input()));
  }
  if (node.output_size() < schema->min_output()) {
    return NodeError(node,
                     absl::StrCat("has ", node.output_size(), " outputs; ",
                                  node.op_type(), "-", schema->since_version(),
                                  " makes at least ", schema->min_output()));
  }
  return absl::OkStatus();
}

// The op schema of a default-domain node at `opset`, or null.
const onnx::OpSchema* DefaultSchema(const onnx::NodeProto& node,
                                    int64_t opset) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return nullptr;
  return onnx::OpSchemaRegistry::Schema(
      node.op_type(), static_cast<int>(std::min<int64_t>(opset, INT32_MAX)),
      "");
}

// Shape-15 (opset 15 and later): its data propagation reads input 0's type
// with no null check (Note [Shape-15 reads its input's type unchecked]).
bool IsShape15(const onnx::NodeProto& node, int64_t opset) {
  if (node.op_type() != "Shape" || node.input_size() < 1 ||
      node.input(0).empty()) {
    return false;
  }
  const onnx::OpSchema* schema = DefaultSchema(node, opset);
  return schema != nullptr && schema->since_version() >= 15;
}

// Note [Shape-15 reads its input's type unchecked]: ONNX 1.12 runs data
// propagation after each node's inference in the main graph and in function
// bodies (not in If/Loop/Scan bodies), and Shape-15's propagator reads
// `ctx.getInputType(0)->tensor_type()` without checking for null. The type
// is null when nothing typed that name before the node: a name no graph
// input, initializer or earlier node defines (SIGSEGV reading 0x28, found by
// fuzz_shapes), a graph input without a type, or the output of a node whose
// own inference failed or is unknown to ONNX (Add of [2] and [3], an
// unregistered op), or an initializer that is no graph input in a model of
// IR version 3 or less (ONNX types those from IR 4 on). The first is refused
// by CheckShapeInput; the others
// depend on ONNX's inference, so in the main graph AddShapeInputTypes gives
// each such name an empty type for ONNX to fill (or leave empty: the
// propagator then sees no tensor type and returns). A function body has no
// value_info for that, so there CheckShapeInput takes Shape-15 only of a
// function input.
absl::Status CheckShapeInput(
    const onnx::NodeProto& node, const std::set<std::string>& defined,
    const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>*
        function_inputs) {
  if (defined.contains(node.input(0)) && function_inputs != nullptr &&
      std::none_of(
          function_inputs->begin(), function_inputs->end(),
          [&](const auto& vi) { return vi.name() == node.input(0); })) {
    // A function has no value_info to give the value a type in.
    return NodeError(
        node, absl::StrCat("reads '", node.input(0),
                           "', computed inside the model-local function; "
                           "ONNX 1.12's Shape-15 data propagation would read "
                           "a null type there whenever that value's own "
                           "inference fails, so autoshard takes Shape in a "
                           "function only of a function input"));
  }
  if (defined.contains(node.input(0))) return absl::OkStatus();
  return NodeError(
      node, absl::StrCat("input '", node.input(0),
                         "' is not defined before it (no graph or function "
                         "input, initializer or earlier node makes it); "
                         "ONNX 1.12's Shape-15 data propagation would read "
                         "its missing type (a null pointer)"));
}

absl::Status CheckGraphHere(const PendingGraph& p,
                            std::vector<PendingGraph>* pending) {
  const onnx::GraphProto& g = *p.graph;
  // Names defined so far, for CheckShapeInput (the main graph and function
  // bodies only: ONNX runs no data propagation in If/Loop/Scan bodies).
  std::set<std::string> defined;
  for (const auto& vi : g.input()) defined.insert(vi.name());
  for (const auto& t : g.initializer()) defined.insert(t.name());
  for (const auto& s : g.sparse_initializer())
    defined.insert(s.values().name());
  std::map<std::string, const onnx::TensorProto*> constants;
  for (const auto& t : g.initializer()) {
    RETURN_IF_ERROR(CheckTensorDims(
        t, absl::StrCat(p.where, "initializer '", t.name(), "'")));
    constants[t.name()] = &t;
  }
  for (const auto& s : g.sparse_initializer()) {
    RETURN_IF_ERROR(CheckTensorDims(
        s.values(),
        absl::StrCat(p.where, "sparse initializer '", s.values().name(), "'")));
  }
  for (const auto* list : {&g.input(), &g.output(), &g.value_info()}) {
    for (const auto& vi : *list) RETURN_IF_ERROR(CheckValueInfo(vi, p.where));
  }
  for (const auto& node : g.node()) {
    if (node.op_type() != "Constant" || node.output_size() != 1) continue;
    if (const onnx::AttributeProto* v = FindAttr(node, "value");
        v != nullptr && v->has_t()) {
      RETURN_IF_ERROR(CheckTensorDims(
          v->t(), absl::StrCat(p.where, NodeLabel(node), " value")));
      constants[node.output(0)] = &v->t();
    }
  }
  for (const auto& node : g.node()) {
    ConstantInput constant = [&](int i) -> const onnx::TensorProto* {
      if (i >= node.input_size()) return nullptr;
      auto it = constants.find(node.input(i));
      return it == constants.end() ? nullptr : it->second;
    };
    absl::Status s = CheckArity(node, p.opset);
    if (s.ok()) s = CheckNodeForOnnx(node, constant);
    if (s.ok() && p.depth == 1 && IsShape15(node, p.opset)) {
      s = CheckShapeInput(node, defined, p.function ? &g.input() : nullptr);
    }
    for (const auto& o : node.output()) defined.insert(o);
    if (!s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(p.where, s.message()));
    }
    for (const auto& a : node.attribute()) {
      std::vector<const onnx::GraphProto*> bodies;
      if (a.has_g()) bodies.push_back(&a.g());
      for (const auto& body : a.graphs()) bodies.push_back(&body);
      for (const onnx::GraphProto* body : bodies) {
        std::string where =
            absl::StrCat(p.where, NodeLabel(node), " body '", a.name(), "': ");
        if (p.depth + 1 > kMaxGraphNesting) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, "bodies nest more than ", kMaxGraphNesting,
                           " deep, autoshard's limit"));
        }
        pending->push_back({body, p.depth + 1, std::move(where), p.opset});
      }
    }
  }
  return absl::OkStatus();
}

// Every graph of `model` (main graph, bodies, function bodies' attribute
// graphs), iteratively.
absl::Status CheckGraphs(const onnx::ModelProto& model) {
  const int64_t opset = DefaultOpset(model.opset_import(), 1);
  std::vector<PendingGraph> pending = {{&model.graph(), 1, "", opset}};
  // A function's nodes are checked as one graph of their own.
  std::vector<onnx::GraphProto> function_graphs(model.functions_size());
  for (int i = 0; i < model.functions_size(); ++i) {
    const onnx::FunctionProto& f = model.functions(i);
    *function_graphs[i].mutable_node() = f.node();
    for (const auto& in : f.input())
      function_graphs[i].add_input()->set_name(in);
    pending.push_back(
        {&function_graphs[i], 1,
         absl::StrCat("function '", f.domain(), ":", f.name(), "': "),
         DefaultOpset(f.opset_import(), opset), true});
  }
  int64_t nodes = 0;
  while (!pending.empty()) {
    PendingGraph p = std::move(pending.back());
    pending.pop_back();
    nodes += p.graph->node_size();
    if (nodes > kMaxNodes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the model has more than ", kMaxNodes,
          " nodes (counting bodies and functions), autoshard's limit"));
    }
    RETURN_IF_ERROR(CheckGraphHere(p, &pending));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckNodeForOnnx(const onnx::NodeProto& node,
                              const ConstantInput& constant) {
  // Other domains' ops have their own meanings for these attributes.
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return absl::OkStatus();
  RETURN_IF_ERROR(CheckConstantValues(node, constant));
  if (IsConvOrPool(node.op_type())) RETURN_IF_ERROR(CheckConvOrPool(node));
  if (node.op_type() == "Split" || node.op_type() == "SplitToSequence") {
    RETURN_IF_ERROR(CheckSplit(node, constant));
  }
  return CheckAxes(node);
}

absl::Status CheckModelForOnnx(const onnx::ModelProto& model) {
  RETURN_IF_ERROR(CheckGraphs(model));
  return CheckFunctionCalls(model);
}

std::vector<std::string> AddShapeInputTypes(onnx::ModelProto* model) {
  onnx::GraphProto* g = model->mutable_graph();
  const int64_t opset = DefaultOpset(model->opset_import(), 1);
  std::set<std::string> typed;
  for (const auto* list : {&g->input(), &g->output(), &g->value_info()}) {
    for (const auto& vi : *list) {
      if (vi.has_type()) typed.insert(vi.name());
    }
  }
  // ONNX 1.12 types an initializer that is no graph input only from IR
  // version 4 on (ShapeInferenceImplBase::processInitializer).
  if (model->ir_version() >= 4) {
    for (const auto& t : g->initializer()) typed.insert(t.name());
    for (const auto& s : g->sparse_initializer())
      typed.insert(s.values().name());
  }
  std::vector<std::string> added;
  for (const auto& node : g->node()) {
    if (!IsShape15(node, opset) || typed.contains(node.input(0))) continue;
    typed.insert(node.input(0));
    added.push_back(node.input(0));
  }
  if (added.empty()) return added;
  // An untyped value_info of the same name gets the empty type in place.
  std::set<std::string> pending(added.begin(), added.end());
  for (auto& vi : *g->mutable_value_info()) {
    if (pending.erase(vi.name()) > 0) vi.mutable_type();
  }
  for (const std::string& name : added) {
    if (!pending.contains(name)) continue;
    onnx::ValueInfoProto* vi = g->add_value_info();
    vi->set_name(name);
    vi->mutable_type();
  }
  return added;
}

void RemoveEmptyShapeInputTypes(onnx::ModelProto* model,
                                const std::vector<std::string>& names) {
  if (names.empty()) return;
  const std::set<std::string> added(names.begin(), names.end());
  auto* infos = model->mutable_graph()->mutable_value_info();
  int kept = 0;
  for (int i = 0; i < infos->size(); ++i) {
    onnx::ValueInfoProto* vi = infos->Mutable(i);
    if (added.contains(vi->name()) && vi->has_type() &&
        vi->type().value_case() == onnx::TypeProto::VALUE_NOT_SET) {
      continue;  // still empty: ONNX inferred nothing for it
    }
    if (kept != i) infos->SwapElements(kept, i);
    ++kept;
  }
  while (infos->size() > kept) infos->RemoveLast();
}

}  // namespace autoshard
