// If, Loop and Scan for the shape propagation pass (Note [Shape propagation]
// in shape_propagation.h): bodies see the enclosing graph's tensors; If picks
// its branch when the condition is known; Loop and Scan bodies run again
// while the shapes of their loop-carried values settle, and scan outputs get
// the trip count or scan length.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/graph.h"
#include "graph/shape_propagation_internal.h"

namespace autoshard::propagation_internal {

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

TensorInfo CommonInfo(const TensorInfo& a, const TensorInfo& b) {
  TensorInfo c = a;
  if (c.elem_type == 0) c.elem_type = b.elem_type;
  if (!a.rank_known || !b.rank_known || a.dims.size() != b.dims.size()) {
    c.rank_known = false;
    c.dims.clear();
    return c;
  }
  for (size_t d = 0; d < c.dims.size(); ++d) {
    if (a.dims[d] != b.dims[d]) c.dims[d] = -1;
  }
  return c;
}

onnx::GraphProto* Propagator::Body(onnx::NodeProto* node,
                                   std::string_view name) {
  for (auto& attr : *node->mutable_attribute()) {
    if (attr.name() == name && attr.has_g()) return attr.mutable_g();
  }
  return nullptr;
}

void Propagator::ProcessControlFlow(onnx::NodeProto* node, GraphScope* scope,
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
          attr.mutable_g(), RunBody(attr.mutable_g(), scope, {}, true, label));
    }
  }
}

void Propagator::ProcessIf(onnx::NodeProto* node, GraphScope* scope,
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
      if (const SequenceInfo* s = scopes[chosen]->FindSequence(*names[chosen]))
        scope->sequences[node->output(i)] = *s;
      continue;
    }
    const SequenceInfo* sa = scopes[0]->FindSequence(*names[0]);
    const SequenceInfo* sb = scopes[1]->FindSequence(*names[1]);
    if (sa != nullptr && sb != nullptr) {
      scope->sequences[node->output(i)] = {
          CommonInfo(sa->elem, sb->elem),
          sa->length == sb->length ? sa->length : -1};
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

std::unique_ptr<GraphScope> Propagator::RunLoopBody(
    onnx::GraphProto* body, GraphScope* scope, std::vector<TensorInfo> inputs,
    int first, int n, int out_first, const std::string& label,
    const SequenceInputs* sequences) {
  std::unique_ptr<GraphScope> run =
      RunBody(body, scope, inputs, true, label, sequences);
  for (int rerun = 0; rerun < kMaxBodyReruns; ++rerun) {
    bool settled = true;
    for (int i = 0; i < n && out_first + i < body->output_size() &&
                    first + i < static_cast<int>(inputs.size());
         ++i) {
      const TensorInfo* in = run->FindInfo(body->input(first + i).name());
      const TensorInfo* out = run->FindInfo(body->output(out_first + i).name());
      if (in == nullptr) continue;
      TensorInfo g = Generalize(*in, out);
      if (!SameInfo(g, *in)) {
        inputs[first + i] = g;
        settled = false;
      }
    }
    if (settled) break;
    run = RunBody(body, scope, inputs, false, label, sequences);
  }
  return run;
}

bool Propagator::RunsAllTrips(const onnx::NodeProto& node,
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

namespace {

// The Loop body's inputs: the iteration count, the condition, then the
// loop-carried values as the outer scope knows them; `sequences` gets the
// loop-carried sequences.
std::vector<TensorInfo> LoopBodyInputs(const onnx::NodeProto& node,
                                       const onnx::GraphProto& body,
                                       const GraphScope& scope,
                                       SequenceInputs* sequences) {
  TensorInfo iter, cond;
  iter.elem_type = onnx::TensorProto::INT64;
  cond.elem_type = onnx::TensorProto::BOOL;
  iter.rank_known = cond.rank_known = true;
  std::vector<TensorInfo> inputs = {iter, cond};
  for (int i = 0; i + 2 < node.input_size(); ++i) {
    const TensorInfo* outer = scope.FindInfo(node.input(2 + i));
    inputs.push_back(outer != nullptr ? *outer : TensorInfo());
    if (const SequenceInfo* s = scope.FindSequence(node.input(2 + i))) {
      (*sequences)[body.input(2 + i).name()] = *s;
    }
  }
  return inputs;
}

// Loop-carried value i -> the sequence the body grows: its elements'
// common shape and its length coming in, and its growth per trip (-1:
// unknown).
using GrownSequences = std::map<int, std::pair<SequenceInfo, int64_t>>;

// The sequences among the `n` loop-carried values that the body (as `run`
// saw it) grows; `generalized` gets each one with its common shape and an
// unknown length.
GrownSequences GrowSequences(const onnx::GraphProto& body,
                             const SequenceInputs& sequences,
                             const GraphScope& run, int n,
                             SequenceInputs* generalized) {
  GrownSequences grown;
  for (int i = 0; i < n; ++i) {
    auto in = sequences.find(body.input(2 + i).name());
    const SequenceInfo* out = run.FindSequence(body.output(1 + i).name());
    if (in == sequences.end() || out == nullptr) continue;
    const SequenceInfo& s0 = in->second;
    SequenceInfo all;
    all.elem = s0.length == 0 ? out->elem : CommonInfo(s0.elem, out->elem);
    const int64_t delta =
        s0.length >= 0 && out->length >= 0 ? out->length - s0.length : -1;
    all.length = s0.length;
    grown[i] = {all, delta};
    (*generalized)[in->first] = {all.elem, -1};
  }
  return grown;
}

// The Loop's trip count M when it is a known constant in range, else -1.
int64_t TripCount(const onnx::NodeProto& node, const GraphScope& scope) {
  if (node.input(0).empty()) return -1;
  const ShapeValue* m = scope.FindValue(node.input(0));
  if (m != nullptr && m->NumElements() == 1 && !m->is_float() &&
      m->ints[0] >= 0 && m->ints[0] <= kMaxTripCount) {
    return m->ints[0];
  }
  return -1;
}

// Each grown sequence's final length: coming in + trips x growth (one trip
// when unknown), an assumption when the trips are a bound (`reason`).
void SetGrownSequences(const onnx::NodeProto& node, const GrownSequences& grown,
                       int64_t trips, const std::string& reason,
                       const std::string& label, GraphScope* scope) {
  for (const auto& [i, seq] : grown) {
    const auto& [all, delta] = seq;
    if (i >= node.output_size() || node.output(i).empty()) continue;
    SequenceInfo final_seq = all;
    int64_t growth = 0;
    if (all.length >= 0 && delta >= 0 &&
        !__builtin_mul_overflow(trips < 0 ? 1 : trips, delta, &growth) &&
        !__builtin_add_overflow(all.length, growth, &final_seq.length)) {
      if (delta > 0 && !reason.empty()) {
        scope->assumptions.push_back({label, node.op_type(), node.output(i), 0,
                                      final_seq.length,
                                      "sequence length: " + reason});
      }
    } else {
      final_seq.length = -1;
    }
    scope->sequences[node.output(i)] = final_seq;
  }
}

}  // namespace

void Propagator::ProcessLoop(onnx::NodeProto* node, GraphScope* scope,
                             const std::string& label) {
  onnx::GraphProto* body = Body(node, "body");
  const int n = node->input_size() - 2;       // loop-carried values
  const int k = body->output_size() - 1 - n;  // scan outputs
  if (n < 0 || k < 0 || body->input_size() != n + 2) {
    scope->children.emplace_back(body, RunBody(body, scope, {}, true, label));
    return;
  }
  SequenceInputs sequences;  // loop-carried sequences, as they come in
  const std::vector<TensorInfo> inputs =
      LoopBodyInputs(*node, *body, *scope, &sequences);
  std::unique_ptr<GraphScope> run =
      RunLoopBody(body, scope, inputs, 2, n, 1, label, &sequences);
  // A sequence the body grows: the body runs again seeing its elements'
  // common shape and an unknown length.
  SequenceInputs generalized;
  const GrownSequences grown =
      GrowSequences(*body, sequences, *run, n, &generalized);
  if (!generalized.empty()) {
    run = RunLoopBody(body, scope, inputs, 2, n, 1, label, &generalized);
  }
  const int64_t trips = TripCount(*node, *scope);
  std::string reason;
  if (trips < 0) {
    reason = "trip count unknown: 1 assumed";
  } else if (!RunsAllTrips(*node, *body, *scope, *run)) {
    reason = absl::StrCat("at most the trip count ", trips,
                          " (the condition may end the loop sooner)");
  }
  SetGrownSequences(*node, grown, trips, reason, label, scope);
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

void Propagator::ProcessScan(onnx::NodeProto* node, GraphScope* scope,
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

}  // namespace autoshard::propagation_internal
