#include "graph/shape_propagation.h"

#include <algorithm>
#include <deque>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/graph.h"
#include "graph/onnx_guard.h"
#include "graph/onnx_inference.h"
#include "graph/shape_propagation_internal.h"
#include "graph/shape_rules.h"
#include "graph/shape_values.h"
#include "graph/shapes.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace autoshard {
namespace propagation_internal {
namespace {

// True when a value of this constant tensor is worth holding.
bool SmallConstant(int32_t elem_type, int64_t elements) {
  return elements >= 0 && elements <= (ShapeValue::IsFloatType(elem_type)
                                           ? kMaxFloatConstantElements
                                           : kMaxValueElements);
}

// Indices of `g`'s nodes in a topological order: file order when it is one,
// else Kahn's algorithm (ties in file order). Nodes on a cycle are left out
// (Graph::Build reports the cycle).
std::vector<int> TopologicalOrder(const onnx::GraphProto& g) {
  const int n = g.node_size();
  absl::flat_hash_map<std::string_view, int> producer;
  producer.reserve(n);
  for (int i = 0; i < n; ++i) {
    for (const auto& out : g.node(i).output()) {
      if (!out.empty()) producer.emplace(out, i);
    }
  }
  // The producers each node reads (names its bodies read included).
  auto reads_of = [&](int i, std::vector<int>* reads) {
    const onnx::NodeProto& node = g.node(i);
    auto add = [&](std::string_view name) {
      auto it = producer.find(name);
      if (it != producer.end() && it->second != i) reads->push_back(it->second);
    };
    for (const auto& in : node.input()) add(in);
    if (HasBody(node)) {
      for (const auto& in : CollectImplicitInputs(node)) add(in);
    }
  };
  std::vector<int> order;
  order.reserve(n);
  bool in_order = true;
  std::vector<int> reads;
  for (int i = 0; i < n && in_order; ++i) {
    reads.clear();
    reads_of(i, &reads);
    for (int p : reads) in_order = in_order && p < i;
  }
  if (in_order) {
    for (int i = 0; i < n; ++i) order.push_back(i);
    return order;
  }
  std::vector<std::vector<int>> consumers(n);
  std::vector<int> pending(n, 0);
  for (int i = 0; i < n; ++i) {
    reads.clear();
    reads_of(i, &reads);
    std::sort(reads.begin(), reads.end());
    reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
    pending[i] = static_cast<int>(reads.size());
    for (int p : reads) consumers[p].push_back(i);
  }
  std::vector<int> ready;  // a min-heap of node indices
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  std::make_heap(ready.begin(), ready.end(), std::greater<>());
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), std::greater<>());
    const int i = ready.back();
    ready.pop_back();
    order.push_back(i);
    for (int c : consumers[i]) {
      if (--pending[c] == 0) {
        ready.push_back(c);
        std::push_heap(ready.begin(), ready.end(), std::greater<>());
      }
    }
  }
  return order;
}

}  // namespace

Propagator::Propagator(const onnx::ModelProto& model) {
  for (const auto& opset : model.opset_import()) {
    const std::string domain =
        IsDefaultDomain(opset.domain()) ? "" : opset.domain();
    opsets_[domain] = static_cast<int>(opset.version());
  }
}

void Propagator::RunGraph(onnx::GraphProto* g, GraphScope* scope,
                          const std::string& prefix) {
  for (const auto& t : g->initializer()) {
    int64_t elements = 1;
    for (int64_t d : t.dims()) {
      // A negative dim or a product beyond int64 (a corrupt model): skipped.
      if (d < 0 || __builtin_mul_overflow(elements, d, &elements)) {
        elements = -1;
        break;
      }
    }
    if (!SmallConstant(t.data_type(), elements)) continue;
    if (auto v = ValueFromTensor(t)) scope->values[t.name()] = *std::move(v);
  }
  const std::vector<int> order = TopologicalOrder(*g);
  for (int i : order) {
    onnx::NodeProto* node = g->mutable_node(i);
    const std::string label =
        prefix + (node->name().empty() ? absl::StrCat(node->op_type(), "#", i)
                                       : node->name());
    ProcessNode(node, scope, label);
  }
}

void Propagator::Commit(onnx::GraphProto* g, GraphScope* scope,
                        ShapePropagationResult* result) {
  for (auto& a : scope->assumptions) result->assumptions.push_back(a);
  for (auto& [body, body_scope] : scope->children) {
    Commit(body, body_scope.get(), result);
  }
  if (scope->changed.empty()) return;
  absl::flat_hash_map<std::string_view, onnx::ValueInfoProto*> recorded;
  for (auto* list :
       {g->mutable_value_info(), g->mutable_output(), g->mutable_input()}) {
    for (auto& vi : *list) recorded.emplace(vi.name(), &vi);
  }
  for (const std::string& name : scope->changed) {
    auto it = recorded.find(name);
    onnx::ValueInfoProto* vi = nullptr;
    if (it != recorded.end()) {
      vi = it->second;
    } else {
      vi = g->add_value_info();
      vi->set_name(name);
    }
    SetTensorType(scope->infos.at(name), vi->mutable_type());
    ++result->tensors_refined;
  }
}

int Propagator::Opset(const std::string& domain) const {
  auto it = opsets_.find(IsDefaultDomain(domain) ? "" : domain);
  return it != opsets_.end() ? it->second : 1;
}

std::vector<int> Propagator::Merge(const std::string& name,
                                   const TensorInfo& from, GraphScope* scope) {
  TensorInfo& into = scope->infos[name];
  std::vector<int> filled;
  bool changed = false;
  if (into.elem_type == 0 && from.elem_type != 0 && !into.non_tensor) {
    into.elem_type = from.elem_type;
    changed = true;
  }
  if (from.rank_known && !into.non_tensor) {
    if (!into.rank_known) {
      into.rank_known = true;
      into.dims = from.dims;
      changed = true;
      for (size_t d = 0; d < from.dims.size(); ++d) {
        if (from.dims[d] >= 0) filled.push_back(static_cast<int>(d));
      }
    } else if (into.dims.size() == from.dims.size()) {
      for (size_t d = 0; d < from.dims.size(); ++d) {
        if (into.dims[d] < 0 && from.dims[d] >= 0) {
          into.dims[d] = from.dims[d];
          filled.push_back(static_cast<int>(d));
          changed = true;
        }
      }
    }
  }
  if (changed && scope->changed_set.insert(name).second) {
    scope->changed.push_back(name);
  }
  return filled;
}

void Propagator::MergeDerived(const onnx::NodeProto& node, int slot,
                              const DerivedOutput& out,
                              const std::string& label, GraphScope* scope) {
  const std::string& name = node.output(slot);
  if (name.empty() || !out.info.rank_known) return;
  for (int d : Merge(name, out.info, scope)) {
    if (d < static_cast<int>(out.bounds.size()) && !out.bounds[d].empty()) {
      scope->assumptions.push_back(
          {label, node.op_type(), name, d, out.info.dims[d], out.bounds[d]});
    }
  }
}

bool Propagator::NeedsShape(const onnx::NodeProto& node,
                            const GraphScope& scope) {
  for (const auto& out : node.output()) {
    if (out.empty()) continue;
    const TensorInfo* info = scope.FindInfo(out);
    if (info == nullptr || (!info->non_tensor && !info->IsStatic())) {
      return true;
    }
  }
  return false;
}

void Propagator::ProcessNode(onnx::NodeProto* node, GraphScope* scope,
                             const std::string& label) {
  for (const auto& out : *node->mutable_output()) {
    if (!out.empty()) scope->infos.try_emplace(out);
  }
  if (HasBody(*node)) {
    ProcessControlFlow(node, scope, label);
    return;
  }
  if (IsDefaultDomain(node->domain()) && ProcessSequenceOp(*node, scope) &&
      !NeedsShape(*node, *scope)) {
    return;
  }
  if (IsEvaluableOp(*node) && CanEvaluate(*node, *scope)) {
    Evaluate(*node, scope);
  }
  if (!NeedsShape(*node, *scope)) return;
  InferWithOnnx(node, scope);
  if (!NeedsShape(*node, *scope)) return;
  RuleNode rule{*node, {}, {}};
  for (const auto& in : node->input()) {
    rule.inputs.push_back(in.empty() ? nullptr : scope->FindInfo(in));
    rule.values.push_back(in.empty() ? nullptr : scope->FindValue(in));
  }
  const std::vector<DerivedOutput> derived = DeriveOutputShapes(rule);
  for (int i = 0; i < node->output_size(); ++i) {
    MergeDerived(*node, i, derived[i], label, scope);
  }
}

bool Propagator::CanEvaluate(const onnx::NodeProto& node,
                             const GraphScope& scope) {
  if (node.input_size() == 0 || node.op_type() == "Shape" ||
      node.op_type() == "Size") {
    return true;
  }
  for (const auto& in : node.input()) {
    if (!in.empty() && scope.FindValue(in) != nullptr) return true;
  }
  return false;
}

void Propagator::Evaluate(const onnx::NodeProto& node, GraphScope* scope) {
  std::vector<EvalInput> inputs(node.input_size());
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty()) continue;
    inputs[i] = {scope->FindValue(node.input(i)),
                 scope->FindInfo(node.input(i))};
  }
  std::vector<std::optional<ShapeValue>> outs =
      EvaluateNode(node, Opset(""), inputs);
  for (int i = 0; i < node.output_size(); ++i) {
    if (!outs[i] || node.output(i).empty()) continue;
    Merge(node.output(i), outs[i]->Info(), scope);
    const bool constant_float =
        node.op_type() == "Constant" &&
        !SmallConstant(outs[i]->elem_type, outs[i]->NumElements());
    if (!constant_float) scope->values[node.output(i)] = *std::move(outs[i]);
  }
}

// Whether every dim of `types` is at most kMaxDim.
static bool DimsWithinBound(const std::deque<onnx::TypeProto>& types) {
  for (const auto& t : types) {
    for (const auto& d : t.tensor_type().shape().dim()) {
      if (d.has_dim_value() && d.dim_value() > kMaxDim) return false;
    }
  }
  return true;
}

void Propagator::InferWithOnnx(onnx::NodeProto* node, GraphScope* scope) {
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(
      node->op_type(), Opset(node->domain()), node->domain());
  if (schema == nullptr || !schema->has_type_and_shape_inference_function())
    return;
  std::deque<onnx::TypeProto> types;
  std::deque<onnx::TensorProto> data;
  std::unordered_map<std::string, onnx::TypeProto*> types_by_name;
  std::unordered_map<std::string, const onnx::TensorProto*> data_by_name;
  for (const auto& in : node->input()) {
    if (in.empty()) continue;
    const TensorInfo* info = scope->FindInfo(in);
    if (info != nullptr && info->elem_type != 0 && !info->non_tensor) {
      SetTensorType(*info, &types.emplace_back());
      types_by_name[in] = &types.back();
    }
    const ShapeValue* v = scope->FindValue(in);
    // Half floats would need their bit patterns; ONNX reads shapes, sizes
    // and scales as integers and float32 anyway.
    if (v != nullptr && v->elem_type != onnx::TensorProto::FLOAT16 &&
        v->elem_type != onnx::TensorProto::BFLOAT16) {
      data.push_back(ValueToTensor(*v, in));
      data_by_name[in] = &data.back();
    }
  }
  // Note [What ONNX 1.12's shape inference trusts]: values computed here
  // (a split of 0, a dim beyond kMaxDim) are checked before it sees them.
  ConstantInput constant = [&](int i) -> const onnx::TensorProto* {
    if (i >= node->input_size()) return nullptr;
    auto it = data_by_name.find(node->input(i));
    return it == data_by_name.end() ? nullptr : it->second;
  };
  if (!CheckNodeForOnnx(*node, constant).ok() || !DimsWithinBound(types))
    return;
  onnx::shape_inference::InferenceContextImpl ctx(*node, types_by_name,
                                                  data_by_name, {});
  try {
    InferNodeWithOnnx(schema, *node, ctx);
  } catch (const std::exception&) {
    return;  // keeps what was known
  }
  for (int i = 0; i < node->output_size(); ++i) {
    if (node->output(i).empty()) continue;
    const onnx::TypeProto* t = ctx.getOutputType(i);
    if (t->has_tensor_type()) {
      Merge(node->output(i), TensorInfoFromType(*t), scope);
    }
  }
}

std::unique_ptr<GraphScope> Propagator::RunBody(
    onnx::GraphProto* body, const GraphScope* parent,
    const std::vector<TensorInfo>& inputs, bool declared,
    const std::string& label, const SequenceInputs* sequences) {
  auto scope = std::make_unique<GraphScope>(parent);
  scope->infos = CollectTensorInfo(*body);
  for (int i = 0; i < static_cast<int>(inputs.size()) && i < body->input_size();
       ++i) {
    const std::string& name = body->input(i).name();
    TensorInfo info = inputs[i];
    const TensorInfo had = scope->infos[name];
    if (info.elem_type == 0) info.elem_type = had.elem_type;
    if (declared && had.rank_known &&
        (!info.rank_known || had.dims.size() == info.dims.size())) {
      if (!info.rank_known) info = had;
      for (size_t d = 0; d < info.dims.size(); ++d) {
        if (info.dims[d] < 0) info.dims[d] = had.dims[d];
      }
    }
    if (!SameInfo(had, info) || had.elem_type != info.elem_type) {
      scope->infos[name] = info;
      scope->changed_set.insert(name);
      scope->changed.push_back(name);
    }
  }
  if (sequences != nullptr) {
    for (const auto& [name, seq] : *sequences) scope->sequences[name] = seq;
  }
  RunGraph(body, scope.get(), label + " > ");
  return scope;
}

}  // namespace propagation_internal

namespace {

// True when every node output of `g` (whose tensors are `infos`) already
// has a static shape and no node has a body: the pass would learn nothing.
// The common case of a large, fully inferred model costs one lookup a name.
bool AllStatic(const onnx::GraphProto& g, const TensorInfoMap& infos) {
  for (const auto& node : g.node()) {
    if (HasBody(node)) return false;
    for (const auto& out : node.output()) {
      if (out.empty()) continue;
      auto it = infos.find(out);
      if (it == infos.end() || !it->second.IsStatic()) return false;
    }
  }
  return true;
}

}  // namespace

using propagation_internal::GraphScope;
using propagation_internal::Propagator;

ShapePropagationResult PropagateShapes(onnx::ModelProto* model,
                                       TensorInfoMap* tensors) {
  ShapePropagationResult result;
  onnx::GraphProto* g = model->mutable_graph();
  if (AllStatic(*g, *tensors)) return result;
  Propagator propagator(*model);
  GraphScope scope(nullptr);
  scope.infos.swap(*tensors);
  propagator.RunGraph(g, &scope, "");
  propagator.Commit(g, &scope, &result);
  scope.infos.swap(*tensors);
  return result;
}

ShapePropagationResult PropagateShapes(onnx::ModelProto* model) {
  TensorInfoMap tensors = CollectTensorInfo(model->graph());
  return PropagateShapes(model, &tensors);
}

}  // namespace autoshard
