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
#include "graph/shape_rules.h"
#include "graph/shape_values.h"
#include "graph/shapes.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace autoshard {
namespace {

// Float constants (initializers, Constant values) are kept as values up to
// this many elements: shape arithmetic uses float scalars and short vectors
// (scales), never float tensors of thousands of elements (weights).
constexpr int64_t kMaxFloatConstantElements = 64;

// Trip counts from 2^31 on are exporters' "until the condition is false"
// (as for the Loop FLOPs rule, flops_rules.h).
constexpr int64_t kMaxTripCount = (int64_t{1} << 31) - 1;

// Loop and Scan bodies are run again at most this many times while the
// shapes of their loop-carried values settle.
constexpr int kMaxBodyReruns = 3;

// One graph's tables: what is known of the names it defines, with a pointer
// to the enclosing graph's tables (lookups walk outwards, as in
// costmodel's Note [Scopes]). A body's scope and its own bodies' scopes are
// kept until the whole pass commits, so a Loop body run again simply drops
// the first run's scope.
struct GraphScope {
  explicit GraphScope(const GraphScope* parent) : parent(parent) {}

  const TensorInfo* FindInfo(const std::string& name) const {
    for (const GraphScope* s = this; s != nullptr; s = s->parent) {
      auto it = s->infos.find(name);
      if (it != s->infos.end()) return &it->second;
    }
    return nullptr;
  }
  const ShapeValue* FindValue(const std::string& name) const {
    for (const GraphScope* s = this; s != nullptr; s = s->parent) {
      auto it = s->values.find(name);
      if (it != s->values.end()) return &it->second;
      if (s->infos.contains(name)) return nullptr;  // defined here, no value
    }
    return nullptr;
  }

  const GraphScope* parent;
  TensorInfoMap infos;
  absl::flat_hash_map<std::string, ShapeValue> values;
  // Names whose info became more complete, in the order they did.
  std::vector<std::string> changed;
  absl::flat_hash_set<std::string> changed_set;
  std::vector<ShapeAssumption> assumptions;
  // Bodies of this graph's nodes, committed with it.
  std::vector<std::pair<onnx::GraphProto*, std::unique_ptr<GraphScope>>>
      children;
};

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

// `in` with every dim that `out` does not share with it unknown (the rank
// unknown when the ranks differ): the shape of a loop-carried value that
// holds in every iteration.
TensorInfo Generalize(const TensorInfo& in, const TensorInfo* out) {
  TensorInfo g = in;
  if (out == nullptr || !out->rank_known || !in.rank_known ||
      out->dims.size() != in.dims.size()) {
    g.rank_known = false;
    g.dims.clear();
    return g;
  }
  for (size_t d = 0; d < g.dims.size(); ++d) {
    if (out->dims[d] != in.dims[d]) g.dims[d] = -1;
  }
  return g;
}

bool SameInfo(const TensorInfo& a, const TensorInfo& b) {
  return a.rank_known == b.rank_known && a.dims == b.dims;
}

class Propagator {
 public:
  explicit Propagator(const onnx::ModelProto& model) {
    for (const auto& opset : model.opset_import()) {
      const std::string domain =
          IsDefaultDomain(opset.domain()) ? "" : opset.domain();
      opsets_[domain] = static_cast<int>(opset.version());
    }
  }

  // Visits `g`'s nodes (the scope holds its names' infos already).
  void RunGraph(onnx::GraphProto* g, GraphScope* scope,
                const std::string& prefix) {
    for (const auto& t : g->initializer()) {
      int64_t elements = 1;
      for (int64_t d : t.dims()) elements = d < 0 ? -1 : elements * d;
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

  // Writes what `scope` (and its bodies) learnt into `g`'s value_info.
  void Commit(onnx::GraphProto* g, GraphScope* scope,
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

 private:
  int Opset(const std::string& domain) const {
    auto it = opsets_.find(IsDefaultDomain(domain) ? "" : domain);
    return it != opsets_.end() ? it->second : 1;
  }

  // Makes `name`'s info (a name this scope defines) more complete with
  // `from`; returns the dims it filled in (all of them when the rank became
  // known).
  std::vector<int> Merge(const std::string& name, const TensorInfo& from,
                         GraphScope* scope) {
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

  // Merge, recording an assumption for each filled dim `out` bounds.
  void MergeDerived(const onnx::NodeProto& node, int slot,
                    const DerivedOutput& out, const std::string& label,
                    GraphScope* scope) {
    const std::string& name = node.output(slot);
    if (name.empty() || !out.info.rank_known) return;
    for (int d : Merge(name, out.info, scope)) {
      if (d < static_cast<int>(out.bounds.size()) && !out.bounds[d].empty()) {
        scope->assumptions.push_back(
            {label, node.op_type(), name, d, out.info.dims[d], out.bounds[d]});
      }
    }
  }

  // True when an output of `node` is a tensor without a static shape.
  static bool NeedsShape(const onnx::NodeProto& node, const GraphScope& scope) {
    for (const auto& out : node.output()) {
      if (out.empty()) continue;
      const TensorInfo* info = scope.FindInfo(out);
      if (info == nullptr || (!info->non_tensor && !info->IsStatic())) {
        return true;
      }
    }
    return false;
  }

  void ProcessNode(onnx::NodeProto* node, GraphScope* scope,
                   const std::string& label) {
    for (const auto& out : *node->mutable_output()) {
      if (!out.empty()) scope->infos.try_emplace(out);
    }
    if (HasBody(*node)) {
      ProcessControlFlow(node, scope, label);
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

  // False when evaluating `node` cannot give anything: it has inputs, none
  // with a known value, and it is not Shape or Size (which read shapes).
  static bool CanEvaluate(const onnx::NodeProto& node,
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

  void Evaluate(const onnx::NodeProto& node, GraphScope* scope) {
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

  // Runs the op's ONNX inference function with the inputs' current shapes
  // and known values.
  void InferWithOnnx(onnx::NodeProto* node, GraphScope* scope) {
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
      if (const ShapeValue* v = scope->FindValue(in)) {
        data.push_back(ValueToTensor(*v, in));
        data_by_name[in] = &data.back();
      }
    }
    onnx::shape_inference::InferenceContextImpl ctx(*node, types_by_name,
                                                    data_by_name, {});
    try {
      schema->GetTypeAndShapeInferenceFunction()(ctx);
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

  // A scope for `body` whose inputs are `inputs` (as many as given), run.
  // `declared`: a dim `inputs` does not know takes the body's declared one.
  std::unique_ptr<GraphScope> RunBody(onnx::GraphProto* body,
                                      const GraphScope* parent,
                                      const std::vector<TensorInfo>& inputs,
                                      bool declared, const std::string& label) {
    auto scope = std::make_unique<GraphScope>(parent);
    scope->infos = CollectTensorInfo(*body);
    for (int i = 0;
         i < static_cast<int>(inputs.size()) && i < body->input_size(); ++i) {
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
    RunGraph(body, scope.get(), label + " > ");
    return scope;
  }

  onnx::GraphProto* Body(onnx::NodeProto* node, std::string_view name) {
    for (auto& attr : *node->mutable_attribute()) {
      if (attr.name() == name && attr.has_g()) return attr.mutable_g();
    }
    return nullptr;
  }

  void ProcessControlFlow(onnx::NodeProto* node, GraphScope* scope,
                          const std::string& label) {
    const bool onnx_op = IsDefaultDomain(node->domain());
    if (onnx_op && node->op_type() == "If" && Body(node, "then_branch") &&
        Body(node, "else_branch")) {
      ProcessIf(node, scope, label);
    } else if (onnx_op && node->op_type() == "Loop" && Body(node, "body")) {
      ProcessLoop(node, scope, label);
    } else if (onnx_op && node->op_type() == "Scan" && Body(node, "body") &&
               Opset("") >= 9) {
      ProcessScan(node, scope, label);
    } else {
      for (auto& attr : *node->mutable_attribute()) {
        if (!attr.has_g()) continue;
        scope->children.emplace_back(
            attr.mutable_g(),
            RunBody(attr.mutable_g(), scope, {}, true, label));
      }
    }
  }

  void ProcessIf(onnx::NodeProto* node, GraphScope* scope,
                 const std::string& label) {
    onnx::GraphProto* branch[2] = {Body(node, "then_branch"),
                                   Body(node, "else_branch")};
    std::unique_ptr<GraphScope> scopes[2];
    for (int b = 0; b < 2; ++b) {
      scopes[b] = RunBody(branch[b], scope, {}, true, label);
    }
    const ShapeValue* cond =
        node->input_size() > 0 ? scope->FindValue(node->input(0)) : nullptr;
    const int chosen = cond == nullptr || cond->NumElements() != 1
                           ? -1
                           : (cond->AsDouble(0) != 0 ? 0 : 1);
    for (int i = 0; i < node->output_size(); ++i) {
      if (node->output(i).empty() || i >= branch[0]->output_size() ||
          i >= branch[1]->output_size()) {
        continue;
      }
      const std::string* names[2] = {&branch[0]->output(i).name(),
                                     &branch[1]->output(i).name()};
      if (chosen >= 0) {
        if (const TensorInfo* info = scopes[chosen]->FindInfo(*names[chosen]))
          Merge(node->output(i), *info, scope);
        if (const ShapeValue* v = scopes[chosen]->FindValue(*names[chosen]))
          scope->values[node->output(i)] = *v;
        continue;
      }
      const TensorInfo* a = scopes[0]->FindInfo(*names[0]);
      const TensorInfo* b = scopes[1]->FindInfo(*names[1]);
      if (a == nullptr || b == nullptr || !a->rank_known || !b->rank_known ||
          a->dims.size() != b->dims.size()) {
        continue;
      }
      DerivedOutput out;
      out.info = *a;
      if (out.info.elem_type == 0) out.info.elem_type = b->elem_type;
      out.bounds.assign(a->dims.size(), "");
      for (size_t d = 0; d < a->dims.size(); ++d) {
        const int64_t x = a->dims[d], y = b->dims[d];
        out.info.dims[d] = x < 0 || y < 0 ? -1 : std::max(x, y);
        if (x >= 0 && y >= 0 && x != y) {
          out.bounds[d] = absl::StrCat(
              "condition unknown: the larger of the branches' ", x, " and ", y);
        }
      }
      MergeDerived(*node, i, out, label, scope);
    }
    for (int b = 0; b < 2; ++b) {
      scope->children.emplace_back(branch[b], std::move(scopes[b]));
    }
  }

  // Runs a Loop or Scan `body` whose inputs are `inputs`; inputs
  // [first, first + n) are loop-carried and become body outputs
  // [out_first, out_first + n). Runs again while their shapes change.
  std::unique_ptr<GraphScope> RunLoopBody(onnx::GraphProto* body,
                                          GraphScope* scope,
                                          std::vector<TensorInfo> inputs,
                                          int first, int n, int out_first,
                                          const std::string& label) {
    std::unique_ptr<GraphScope> run = RunBody(body, scope, inputs, true, label);
    for (int rerun = 0; rerun < kMaxBodyReruns; ++rerun) {
      bool settled = true;
      for (int i = 0; i < n && out_first + i < body->output_size() &&
                      first + i < static_cast<int>(inputs.size());
           ++i) {
        const TensorInfo* in = run->FindInfo(body->input(first + i).name());
        const TensorInfo* out =
            run->FindInfo(body->output(out_first + i).name());
        if (in == nullptr) continue;
        TensorInfo g = Generalize(*in, out);
        if (!SameInfo(g, *in)) {
          inputs[first + i] = g;
          settled = false;
        }
      }
      if (settled) break;
      run = RunBody(body, scope, inputs, false, label);
    }
    return run;
  }

  // True when the Loop runs all its M trips: no condition, or a known-true
  // initial condition that the body passes on unchanged (or sets true).
  static bool RunsAllTrips(const onnx::NodeProto& node,
                           const onnx::GraphProto& body,
                           const GraphScope& outer, const GraphScope& run) {
    if (node.input_size() > 1 && !node.input(1).empty()) {
      const ShapeValue* c = outer.FindValue(node.input(1));
      if (c == nullptr || c->NumElements() != 1 || c->AsDouble(0) == 0) {
        return false;
      }
    }
    if (body.output_size() == 0 || body.input_size() < 2) return false;
    std::string cond = body.output(0).name();
    const ShapeValue* v = run.FindValue(cond);
    if (v != nullptr) return v->NumElements() == 1 && v->AsDouble(0) != 0;
    for (int hops = 0; hops < 4 && cond != body.input(1).name(); ++hops) {
      const onnx::NodeProto* from = nullptr;
      for (const auto& n : body.node()) {
        for (const auto& out : n.output()) {
          if (out == cond) from = &n;
        }
      }
      if (from == nullptr || from->op_type() != "Identity" ||
          from->input_size() != 1) {
        return false;
      }
      cond = from->input(0);
    }
    return cond == body.input(1).name();
  }

  void ProcessLoop(onnx::NodeProto* node, GraphScope* scope,
                   const std::string& label) {
    onnx::GraphProto* body = Body(node, "body");
    const int n = node->input_size() - 2;       // loop-carried values
    const int k = body->output_size() - 1 - n;  // scan outputs
    if (n < 0 || k < 0 || body->input_size() != n + 2) {
      scope->children.emplace_back(body, RunBody(body, scope, {}, true, label));
      return;
    }
    TensorInfo iter, cond;
    iter.elem_type = onnx::TensorProto::INT64;
    cond.elem_type = onnx::TensorProto::BOOL;
    iter.rank_known = cond.rank_known = true;
    std::vector<TensorInfo> inputs = {iter, cond};
    for (int i = 0; i < n; ++i) {
      const TensorInfo* outer = scope->FindInfo(node->input(2 + i));
      inputs.push_back(outer != nullptr ? *outer : TensorInfo());
    }
    std::unique_ptr<GraphScope> run =
        RunLoopBody(body, scope, inputs, 2, n, 1, label);
    int64_t trips = -1;
    if (!node->input(0).empty()) {
      const ShapeValue* m = scope->FindValue(node->input(0));
      if (m != nullptr && m->NumElements() == 1 && !m->is_float() &&
          m->ints[0] >= 0 && m->ints[0] <= kMaxTripCount) {
        trips = m->ints[0];
      }
    }
    std::string reason;
    if (trips < 0) {
      reason = "trip count unknown: 1 assumed";
    } else if (!RunsAllTrips(*node, *body, *scope, *run)) {
      reason = absl::StrCat("at most the trip count ", trips,
                            " (the condition may end the loop sooner)");
    }
    for (int i = 0; i < n + k && i < node->output_size(); ++i) {
      const TensorInfo* b = run->FindInfo(body->output(1 + i).name());
      if (b == nullptr || node->output(i).empty()) continue;
      DerivedOutput out;
      out.info = *b;
      if (i >= n && b->rank_known) {  // a scan output: one slice per trip
        out.info.dims.insert(out.info.dims.begin(), trips < 0 ? 1 : trips);
        out.bounds.assign(out.info.dims.size(), "");
        out.bounds[0] = reason;
      }
      MergeDerived(*node, i, out, label, scope);
    }
    scope->children.emplace_back(body, std::move(run));
  }

  void ProcessScan(onnx::NodeProto* node, GraphScope* scope,
                   const std::string& label) {
    onnx::GraphProto* body = Body(node, "body");
    int64_t m = 0;
    std::vector<int64_t> in_axes, out_axes;
    for (const auto& attr : node->attribute()) {
      if (attr.name() == "num_scan_inputs") m = attr.i();
      if (attr.name() == "scan_input_axes")
        in_axes.assign(attr.ints().begin(), attr.ints().end());
      if (attr.name() == "scan_output_axes")
        out_axes.assign(attr.ints().begin(), attr.ints().end());
    }
    const int n = node->input_size() - static_cast<int>(m);  // states
    const int k = body->output_size() - n;                   // scan outputs
    if (m <= 0 || n < 0 || k < 0 || body->input_size() != n + m) {
      scope->children.emplace_back(body, RunBody(body, scope, {}, true, label));
      return;
    }
    std::vector<TensorInfo> inputs;
    int64_t seq_len = -1;
    for (int i = 0; i < node->input_size(); ++i) {
      const TensorInfo* outer = scope->FindInfo(node->input(i));
      TensorInfo info = outer != nullptr ? *outer : TensorInfo();
      if (i >= n && info.rank_known) {  // a scan input: one slice per step
        const int j = i - n;
        int64_t axis = j < static_cast<int>(in_axes.size()) ? in_axes[j] : 0;
        const int64_t rank = static_cast<int64_t>(info.dims.size());
        if (axis < 0) axis += rank;
        if (axis < 0 || axis >= rank) {
          info = TensorInfo();
        } else {
          if (j == 0) seq_len = info.dims[axis];
          info.dims.erase(info.dims.begin() + axis);
        }
      }
      inputs.push_back(info);
    }
    std::unique_ptr<GraphScope> run =
        RunLoopBody(body, scope, inputs, 0, n, 0, label);
    for (int i = 0; i < n + k && i < node->output_size(); ++i) {
      const TensorInfo* b = run->FindInfo(body->output(i).name());
      if (b == nullptr || node->output(i).empty()) continue;
      TensorInfo info = *b;
      if (i >= n) {
        if (!info.rank_known) continue;
        const int j = i - n;
        int64_t axis = j < static_cast<int>(out_axes.size()) ? out_axes[j] : 0;
        const int64_t rank = static_cast<int64_t>(info.dims.size()) + 1;
        if (axis < 0) axis += rank;
        if (axis < 0 || axis >= rank) continue;
        info.dims.insert(info.dims.begin() + axis, seq_len);
      }
      Merge(node->output(i), info, scope);
    }
    scope->children.emplace_back(body, std::move(run));
  }

  absl::flat_hash_map<std::string, int> opsets_;
};

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
