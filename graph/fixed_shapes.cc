#include "graph/fixed_shapes.h"

#include <list>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/step_counts.h"
#include "graph/onnx_guard.h"
#include "graph/onnx_inference.h"
#include "onnx/shape_inference/implementation.h"

namespace autoshard {
namespace {

namespace si = onnx::shape_inference;

// Note [Fixing the declared inference]
// ONNX's inference on the fixed model and on the declared one differ only
// where a dim depends on a fixed input dim. Where the declared result names
// that dim by its symbol (`batch`, which ONNX copies through elementwise ops,
// Conv, Reshape of propagated data...), substituting the value gives what the
// fixed inference computes. Where it does not (an unknown dim, "unk__N", a
// rule that needs values: Concat of batch and 3, a Slice whose ends are
// propagated from Shape), ONNX's own function for that node runs on the fixed
// inputs. The substitution is trusted only for values ONNX inferred: a
// recorded value_info that mentions a fixed symbol stays a symbol in the
// fixed model unless ONNX infers the node, so such a node runs too; so does
// one with a recorded type and an input that holds a fixed symbol, whose
// value may contradict the record (y recorded [5,3] from x [batch,3]: with
// batch = 1 ONNX's inference throws).

// Input symbol -> the value the fixed model gives it; a symbol given two
// values is not substituted.
struct Symbols {
  absl::flat_hash_map<std::string, int64_t> value;
  absl::flat_hash_set<std::string> ambiguous;
};

// What substituting the symbols did to a type or a propagated value.
struct Substitution {
  bool touched = false;  // a fixed symbol was replaced
  bool resolved = true;  // every dim is a value, the type complete
};

void SubstituteDims(const Symbols& symbols, onnx::TensorShapeProto* shape,
                    Substitution* s) {
  for (auto& d : *shape->mutable_dim()) {
    if (d.has_dim_value()) continue;
    if (d.has_dim_param()) {
      auto it = symbols.value.find(d.dim_param());
      if (it != symbols.value.end()) {
        d.set_dim_value(it->second);
        s->touched = true;
        continue;
      }
    }
    s->resolved = false;
  }
}

void SubstituteType(const Symbols& symbols, onnx::TypeProto* type,
                    Substitution* s) {
  switch (type->value_case()) {
    case onnx::TypeProto::kTensorType: {
      auto* t = type->mutable_tensor_type();
      if (t->elem_type() == 0 || !t->has_shape()) s->resolved = false;
      if (t->has_shape()) SubstituteDims(symbols, t->mutable_shape(), s);
      return;
    }
    case onnx::TypeProto::kSparseTensorType: {
      auto* t = type->mutable_sparse_tensor_type();
      if (t->elem_type() == 0 || !t->has_shape()) s->resolved = false;
      if (t->has_shape()) SubstituteDims(symbols, t->mutable_shape(), s);
      return;
    }
    case onnx::TypeProto::kSequenceType:
      if (!type->sequence_type().has_elem_type()) break;
      SubstituteType(symbols,
                     type->mutable_sequence_type()->mutable_elem_type(), s);
      return;
    case onnx::TypeProto::kOptionalType:
      if (!type->optional_type().has_elem_type()) break;
      SubstituteType(symbols,
                     type->mutable_optional_type()->mutable_elem_type(), s);
      return;
    case onnx::TypeProto::kMapType:
      if (!type->map_type().has_value_type()) break;
      SubstituteType(symbols, type->mutable_map_type()->mutable_value_type(),
                     s);
      return;
    default:
      break;
  }
  s->resolved = false;
}

// Whether two shapes agree on what is known: the same rank, the same values
// where either has one (a symbol counts as unknown, whatever ONNX named it).
bool SameKnown(const onnx::TensorShapeProto* a,
               const onnx::TensorShapeProto* b) {
  if (a == nullptr || b == nullptr) return a == b;
  if (a->dim_size() != b->dim_size()) return false;
  for (int i = 0; i < a->dim_size(); ++i) {
    const auto& x = a->dim(i);
    const auto& y = b->dim(i);
    if (x.has_dim_value() != y.has_dim_value() ||
        (x.has_dim_value() && x.dim_value() != y.dim_value())) {
      return false;
    }
  }
  return true;
}

bool SameKnown(const onnx::TypeProto* a, const onnx::TypeProto* b) {
  if (a == nullptr || b == nullptr) return a == b;
  if (a->value_case() != b->value_case()) return false;
  switch (a->value_case()) {
    case onnx::TypeProto::kTensorType: {
      const auto& x = a->tensor_type();
      const auto& y = b->tensor_type();
      return x.elem_type() == y.elem_type() && x.has_shape() == y.has_shape() &&
             SameKnown(&x.shape(), &y.shape());
    }
    case onnx::TypeProto::kSequenceType:
      return SameKnown(&a->sequence_type().elem_type(),
                       &b->sequence_type().elem_type());
    case onnx::TypeProto::kOptionalType:
      return SameKnown(&a->optional_type().elem_type(),
                       &b->optional_type().elem_type());
    default:  // maps and sparse tensors: byte for byte
      return a->SerializeAsString() == b->SerializeAsString();
  }
}

// The symbols the fixed inputs give values to. FailedPrecondition when an
// input differs otherwise (name, element type, rank, a static dim).
absl::StatusOr<Symbols> FixedSymbols(const onnx::GraphProto& declared,
                                     const onnx::GraphProto& fixed) {
  auto mismatch = [](const std::string& name) {
    return absl::FailedPreconditionError(absl::StrCat(
        "input '", name, "' differs from the model's beyond its free dims"));
  };
  if (declared.input_size() != fixed.input_size()) return mismatch("");
  Symbols symbols;
  for (int i = 0; i < declared.input_size(); ++i) {
    const onnx::ValueInfoProto& d = declared.input(i);
    const onnx::ValueInfoProto& f = fixed.input(i);
    if (d.name() != f.name()) return mismatch(d.name());
    if (!d.type().has_tensor_type() || !f.type().has_tensor_type()) {
      if (d.SerializeAsString() != f.SerializeAsString()) {
        return mismatch(d.name());
      }
      continue;
    }
    const auto& dt = d.type().tensor_type();
    const auto& ft = f.type().tensor_type();
    if (dt.elem_type() != ft.elem_type() || dt.has_shape() != ft.has_shape() ||
        dt.shape().dim_size() != ft.shape().dim_size()) {
      return mismatch(d.name());
    }
    for (int k = 0; k < dt.shape().dim_size(); ++k) {
      const auto& dd = dt.shape().dim(k);
      const auto& fd = ft.shape().dim(k);
      if (dd.has_dim_value()) {
        if (!fd.has_dim_value() || fd.dim_value() != dd.dim_value()) {
          return mismatch(d.name());
        }
        continue;
      }
      if (!dd.has_dim_param() || !fd.has_dim_value()) continue;
      auto [it, added] = symbols.value.emplace(dd.dim_param(), fd.dim_value());
      if (!added && it->second != fd.dim_value()) {
        symbols.ambiguous.insert(dd.dim_param());
      }
    }
  }
  for (const std::string& name : symbols.ambiguous) symbols.value.erase(name);
  return symbols;
}

// The type table ONNX's inference starts from and ends with: value_info,
// then inputs, then outputs (a later record of a name wins).
std::unordered_map<std::string, const onnx::TypeProto*> FinalTypes(
    const onnx::GraphProto& g) {
  std::unordered_map<std::string, const onnx::TypeProto*> types;
  for (const auto* list : {&g.value_info(), &g.input(), &g.output()}) {
    for (const auto& vi : *list) {
      if (vi.has_type()) types[vi.name()] = &vi.type();
    }
  }
  return types;
}

bool HasSubgraph(const onnx::NodeProto& node) {
  for (const auto& a : node.attribute()) {
    if (a.has_g() || a.graphs_size() > 0) return true;
  }
  return false;
}

// ShapeInferenceImplBase of onnx/shape_inference/implementation.cc (ONNX
// 1.12) for a main graph, with the declared model's results reused where
// Note [Fixing the declared inference] allows.
class FixedInference {
 public:
  FixedInference(const onnx::ModelProto& declared,
                 const ShapeDataMap& declared_data, Symbols symbols,
                 onnx::ModelProto* fixed)
      : declared_types_(FinalTypes(declared.graph())),
        declared_data_(declared_data),
        symbols_(std::move(symbols)),
        model_(fixed),
        g_(*fixed->mutable_graph()),
        options_(InferenceOptions()),
        graph_context_(types_, Opsets(*fixed), &symbol_table_, functions_,
                       onnx::OpSchemaRegistry::Instance(), &data_,
                       static_cast<int>(fixed->ir_version())) {
    for (const auto& f : fixed->functions()) {
      functions_[absl::StrCat(f.domain(), ":", f.name())] = &f;
    }
  }

  // Infers every node; an exception ONNX's InferShapes would let out becomes
  // InvalidArgument.
  absl::Status Run() {
    try {
      RegisterGraph();
      for (auto& node : *g_.mutable_node()) {
        if (IsDirty(node)) {
          ++ThreadStepCounts().node_reinferences;
          Infer(node);
          NoteChanges(node);
        } else {
          Reuse(node);
        }
      }
    } catch (const std::exception& e) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape inference failed: ", e.what()));
    }
    return absl::OkStatus();
  }

 private:
  static std::unordered_map<std::string, int> Opsets(
      const onnx::ModelProto& m) {
    std::unordered_map<std::string, int> opsets;
    for (const auto& o : m.opset_import()) {
      opsets[o.domain()] = static_cast<int>(o.version());
    }
    return opsets;
  }

  // ShapeInferenceImplBase::process(GraphProto&) up to the node loop.
  void RegisterGraph() {
    si::TraverseGraphsToAddExistingSymbols(g_, symbol_table_);
    for (auto* list :
         {g_.mutable_value_info(), g_.mutable_input(), g_.mutable_output()}) {
      for (auto& vi : *list) {
        if (vi.has_type()) {
          types_[vi.name()] = vi.mutable_type();
        } else {
          undefined_[vi.name()] = vi.mutable_type();
        }
      }
    }
    for (const auto& t : g_.initializer()) {
      onnx::TypeProto type;
      type.mutable_tensor_type()->set_elem_type(t.data_type());
      auto* shape = type.mutable_tensor_type()->mutable_shape();
      for (int64_t d : t.dims()) shape->add_dim()->set_dim_value(d);
      RegisterInitializer(t.name(), std::move(type));
      input_data_[t.name()] = &t;
    }
    for (const auto& t : g_.sparse_initializer()) {
      onnx::TypeProto type;
      type.mutable_sparse_tensor_type()->set_elem_type(t.values().data_type());
      auto* shape = type.mutable_sparse_tensor_type()->mutable_shape();
      for (int64_t d : t.dims()) shape->add_dim()->set_dim_value(d);
      RegisterInitializer(t.values().name(), std::move(type));
      sparse_data_[t.values().name()] = &t;
    }
    for (const auto& n : g_.node()) {
      if (n.op_type() != "Constant" || n.output_size() != 1) continue;
      for (const auto& a : n.attribute()) {
        if (a.name() != "value") continue;
        if (a.type() == onnx::AttributeProto::TENSOR && a.has_t()) {
          input_data_[n.output(0)] = &a.t();
        } else if (a.type() == onnx::AttributeProto::SPARSE_TENSOR &&
                   a.has_sparse_tensor()) {
          sparse_data_[n.output(0)] = &a.sparse_tensor();
        }
      }
    }
  }

  void RegisterInitializer(const std::string& name, onnx::TypeProto type) {
    auto it = types_.find(name);
    if (it != types_.end()) {
      si::checkShapesAndTypes(type, *it->second);
    } else if (model_->ir_version() >= 4) {
      initializer_types_.push_back(std::move(type));
      types_[name] = &initializer_types_.back();
    }
  }

  // The declared result for a node output, with the fixed symbols
  // substituted (computed once).
  struct Declared {
    bool has_type = false;
    onnx::TypeProto type;
    bool has_data = false;
    onnx::TensorShapeProto data;
    Substitution substitution;
  };

  const Declared& DeclaredOf(const std::string& name) {
    auto [it, added] = declared_.try_emplace(name);
    Declared& d = it->second;
    if (!added) return d;
    if (auto t = declared_types_.find(name); t != declared_types_.end()) {
      d.has_type = true;
      d.type = *t->second;
      SubstituteType(symbols_, &d.type, &d.substitution);
    } else {
      d.substitution.resolved = false;
    }
    if (auto v = declared_data_.find(name); v != declared_data_.end()) {
      d.has_data = true;
      d.data = v->second;
      SubstituteDims(symbols_, &d.data, &d.substitution);
    }
    return d;
  }

  // Whether `name` holds a value data propagation can read: propagated data,
  // or an int32/int64 initializer or Constant of rank 0 or 1
  // (DataPropagationContextImpl::getInputData).
  bool HasData(const std::string& name) const {
    if (data_.count(name) > 0) return true;
    auto it = input_data_.find(name);
    if (it == input_data_.end()) return false;
    const onnx::TensorProto& t = *it->second;
    return t.dims_size() <= 1 && (t.data_type() == onnx::TensorProto::INT64 ||
                                  t.data_type() == onnx::TensorProto::INT32);
  }

  bool IsDirty(const onnx::NodeProto& node) {
    if (HasSubgraph(node)) return true;
    bool input_has_data = false;
    bool input_touched = false;
    for (const std::string& in : node.input()) {
      if (in.empty()) continue;
      if (changed_.count(in) > 0) return true;
      input_has_data |= HasData(in);
      input_touched |= DeclaredOf(in).substitution.touched;
    }
    bool output_without_data = false;
    for (const std::string& out : node.output()) {
      if (out.empty()) continue;
      const Declared& d = DeclaredOf(out);
      if (!d.substitution.resolved) return true;
      output_without_data |= !d.has_data;
      // A record of the file that names a fixed symbol, or that the fixed
      // inputs may contradict (the Note).
      if (auto it = types_.find(out); it != types_.end()) {
        if (input_touched) return true;
        Substitution recorded;
        onnx::TypeProto copy = *it->second;
        SubstituteType(symbols_, &copy, &recorded);
        if (recorded.touched) return true;
      }
    }
    return output_without_data && input_has_data && PropagatesData(node);
  }

  const onnx::OpSchema* Schema(const onnx::NodeProto& node) const {
    auto it = graph_context_.opset_imports.find(node.domain());
    if (it == graph_context_.opset_imports.end() && node.domain().empty()) {
      it = graph_context_.opset_imports.find("ai.onnx");
    }
    if (it == graph_context_.opset_imports.end()) return nullptr;
    return onnx::OpSchemaRegistry::Instance()->GetSchema(
        node.op_type(), it->second, node.domain());
  }

  bool PropagatesData(const onnx::NodeProto& node) const {
    const onnx::OpSchema* schema = Schema(node);
    return schema != nullptr && schema->has_data_propagation_function();
  }

  // ShapeInferenceImplBase::updateType.
  void UpdateType(const std::string& name, onnx::TypeProto* inferred) {
    if (inferred->value_case() == onnx::TypeProto::VALUE_NOT_SET) return;
    si::MaterializeSymbolicShape(inferred, symbol_table_);
    onnx::TypeProto* existing = nullptr;
    if (auto it = types_.find(name); it != types_.end()) {
      existing = it->second;
    } else {
      onnx::ValueInfoProto* vi = g_.add_value_info();
      vi->set_name(name);
      existing = vi->mutable_type();
      if (auto u = undefined_.find(name); u != undefined_.end()) {
        *u->second = *inferred;
      }
    }
    si::mergeShapesAndTypes(*inferred, existing);
    types_[name] = existing;
  }

  // ShapeInferenceImplBase::process(NodeProto&), options as InferShapes's.
  void Infer(onnx::NodeProto& node) {
    auto it = graph_context_.opset_imports.find(node.domain());
    if (it == graph_context_.opset_imports.end() && node.domain().empty()) {
      it = graph_context_.opset_imports.find("ai.onnx");
    }
    if (it == graph_context_.opset_imports.end()) {
      throw std::runtime_error(absl::StrCat("no opset import for domain ",
                                            node.domain(), " of node ",
                                            node.name()));
    }
    const onnx::OpSchema* schema = Schema(node);
    si::InferenceContextImpl ctx(node, types_, input_data_, sparse_data_,
                                 &data_, &graph_context_);
    try {
      if (!RunInferenceFunction(schema, node, ctx)) return;
    } catch (const onnx::InferenceError&) {
      return;  // error_mode 0: the node's outputs stay as they are
    }
    try {
      for (int i = 0; i < node.output_size(); ++i) {
        if (!node.output(i).empty()) {
          UpdateType(node.output(i), ctx.getOutputType(i));
        }
      }
      if (schema != nullptr && schema->has_data_propagation_function()) {
        si::DataPropagationContextImpl data_ctx(node, types_, input_data_,
                                                data_);
        PropagateNodeDataWithOnnx(schema, data_ctx);
      }
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(si::GetErrorWithNodeInfo(node, e));
    }
  }

  // False when ONNX has no inference for the node (it is left as it is).
  bool RunInferenceFunction(const onnx::OpSchema* schema,
                            const onnx::NodeProto& node,
                            si::InferenceContextImpl& ctx) {
    NodeFunctionContext functions;
    functions.functions = &functions_;
    functions.options = &options_;
    functions.symbol_table = &symbol_table_;
    functions.data = &data_;
    return InferNodeWithOnnx(schema, node, ctx, functions);
  }

  // A node the Note lets take its declared results, substituted.
  void Reuse(const onnx::NodeProto& node) {
    for (const std::string& out : node.output()) {
      if (out.empty()) continue;
      Declared& d = declared_[out];  // IsDirty made it
      if (d.has_type) UpdateType(out, &d.type);
      if (d.has_data) data_[out] = d.data;
    }
  }

  // After a node ran: its outputs that differ from the declared ones,
  // substituted, so that their readers run too.
  void NoteChanges(const onnx::NodeProto& node) {
    for (const std::string& out : node.output()) {
      if (out.empty()) continue;
      const Declared& d = DeclaredOf(out);
      auto t = types_.find(out);
      auto v = data_.find(out);
      if (!SameKnown(d.has_type ? &d.type : nullptr,
                     t == types_.end() ? nullptr : t->second) ||
          !SameKnown(d.has_data ? &d.data : nullptr,
                     v == data_.end() ? nullptr : &v->second)) {
        changed_.insert(out);
      }
    }
  }

  const std::unordered_map<std::string, const onnx::TypeProto*> declared_types_;
  const ShapeDataMap& declared_data_;
  const Symbols symbols_;
  onnx::ModelProto* model_;
  onnx::GraphProto& g_;
  const onnx::ShapeInferenceOptions options_;
  si::ModelLocalFunctionsMap functions_;
  si::SymbolTableImpl symbol_table_;
  ShapeDataMap data_;
  std::unordered_map<std::string, onnx::TypeProto*> types_;
  std::unordered_map<std::string, onnx::TypeProto*> undefined_;
  std::unordered_map<std::string, const onnx::TensorProto*> input_data_;
  std::unordered_map<std::string, const onnx::SparseTensorProto*> sparse_data_;
  std::list<onnx::TypeProto> initializer_types_;
  si::GraphInferenceContext graph_context_;
  std::unordered_set<std::string> changed_;
  std::unordered_map<std::string, Declared> declared_;
};

}  // namespace

absl::Status InferFixedShapes(const onnx::ModelProto& declared,
                              const ShapeDataMap& declared_data,
                              onnx::ModelProto* fixed) {
  ASSIGN_OR_RETURN(Symbols symbols,
                   FixedSymbols(declared.graph(), fixed->graph()));
  // What InferShapes does around ONNX's call (graph/shapes.cc). `declared`
  // passed CheckModelForOnnx and differs only in its inputs' dims, so only
  // those are checked again (the same message, naming the input).
  onnx::ModelProto inputs_only;
  inputs_only.set_ir_version(fixed->ir_version());
  *inputs_only.mutable_opset_import() = fixed->opset_import();
  *inputs_only.mutable_graph()->mutable_input() = fixed->graph().input();
  RETURN_IF_ERROR(CheckModelForOnnx(inputs_only));
  // Inferred in place (a DAG may point at `fixed`'s nodes): what inference
  // writes is kept, to be put back on failure.
  onnx::GraphProto* g = fixed->mutable_graph();
  const auto value_info = g->value_info();
  const auto outputs = g->output();
  std::vector<std::pair<int, onnx::NodeProto>> bodies;
  for (int i = 0; i < g->node_size(); ++i) {
    if (HasSubgraph(g->node(i))) bodies.emplace_back(i, g->node(i));
  }
  const std::vector<std::string> placeholders = AddShapeInputTypes(fixed);
  absl::Status s =
      FixedInference(declared, declared_data, std::move(symbols), fixed).Run();
  if (!s.ok()) {
    *g->mutable_value_info() = value_info;
    *g->mutable_output() = outputs;
    for (const auto& [i, node] : bodies) *g->mutable_node(i) = node;
    return s;
  }
  RemoveEmptyShapeInputTypes(fixed, placeholders);
  return absl::OkStatus();
}

}  // namespace autoshard
