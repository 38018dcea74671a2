// FLOPs rules of the control-flow ops If, Loop and Scan (DESIGN.md §3.1), and
// the integer scalar constants a Loop's trip count is read from.
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "costmodel/flops_rules.h"
#include "costmodel/flops_rules_internal.h"
#include "graph/graph.h"
#include "graph/shapes.h"

namespace autoshard {
namespace {

using onnx::AttributeProto;
using onnx::NodeProto;
using onnx::TensorProto;

// The value of `t` when it is an INT64 or INT32 tensor of one element whose
// data is in the file (raw_data little-endian, or the typed field).
std::optional<int64_t> ScalarValue(const TensorProto& t) {
  if (t.data_type() != TensorProto::INT64 &&
      t.data_type() != TensorProto::INT32) {
    return std::nullopt;
  }
  if (t.data_location() == TensorProto::EXTERNAL) return std::nullopt;
  for (int64_t d : t.dims()) {
    if (d != 1) return std::nullopt;
  }
  if (t.data_type() == TensorProto::INT64) {
    if (t.int64_data_size() == 1) return t.int64_data(0);
    int64_t v = 0;
    if (t.raw_data().size() != sizeof(v)) return std::nullopt;
    std::memcpy(&v, t.raw_data().data(), sizeof(v));
    return v;
  }
  if (t.int32_data_size() == 1) return t.int32_data(0);
  int32_t v = 0;
  if (t.raw_data().size() != sizeof(v)) return std::nullopt;
  std::memcpy(&v, t.raw_data().data(), sizeof(v));
  return v;
}

}  // namespace

ScalarConstants CollectScalarConstants(const onnx::GraphProto& graph) {
  ScalarConstants scalars;
  for (const TensorProto& t : graph.initializer()) {
    if (std::optional<int64_t> v = ScalarValue(t)) scalars[t.name()] = *v;
  }
  for (const NodeProto& node : graph.node()) {
    if (node.op_type() != "Constant" || !IsDefaultDomain(node.domain()) ||
        node.output_size() != 1) {
      continue;
    }
    for (const AttributeProto& attr : node.attribute()) {
      std::optional<int64_t> v;
      if (attr.name() == "value" && attr.has_t()) v = ScalarValue(attr.t());
      if (attr.name() == "value_int") v = attr.i();
      if (v) scalars[node.output(0)] = *v;
    }
  }
  return scalars;
}

namespace internal {
namespace {

// A trip count above this is not used: exporters write INT64_MAX as Loop's M
// for "until the condition is false".
constexpr int64_t kMaxTripCount = std::numeric_limits<int32_t>::max();

// The label of the `index`-th node of a body in loops_costed_once.
std::string BodyNodeLabel(const NodeProto& node, int index) {
  if (!node.name().empty()) return node.name();
  return absl::StrCat(node.op_type(), "#", index);
}

// Sum of the FLOPs of `body`'s nodes, with names looked up in the body's own
// tables first, then in `outer` (Note [Scopes],
// graph/shape_propagation_internal.h).
FlopsEstimate EstimateBody(const onnx::GraphProto& body, const Scope& outer) {
  const TensorInfoMap tensors = CollectTensorInfo(body);
  const ScalarConstants scalars = CollectScalarConstants(body);
  const Scope scope(tensors, scalars, &outer);
  FlopsEstimate total;
  for (int i = 0; i < body.node_size(); ++i) {
    const NodeProto& node = body.node(i);
    FlopsEstimate e = EstimateNode(node, scope, BodyNodeLabel(node, i));
    total.flops += e.flops;
    total.macs += e.macs;
    total.shapes_known = total.shapes_known && e.shapes_known;
    total.ops_without_rule.insert(total.ops_without_rule.end(),
                                  e.ops_without_rule.begin(),
                                  e.ops_without_rule.end());
    total.loops_costed_once.insert(total.loops_costed_once.end(),
                                   e.loops_costed_once.begin(),
                                   e.loops_costed_once.end());
  }
  return total;
}

// How many times a Loop or Scan runs `body`, when known:
// - Loop (M, cond, v_initial...): the value of M when it is an integer scalar
//   constant (initializer or Constant node) of 0..kMaxTripCount. With a
//   condition the loop may stop earlier: M is then an upper bound.
// - Scan, opset 9+ (initial states..., scan inputs...): the length of the
//   first scan input along its scan axis (scan_input_axes[0], default 0).
//   Opset 8's Scan (sequence_lens, states..., scan inputs...; one node input
//   more than its body has inputs) loops per batch entry: not used.
std::optional<double> TripCount(NodeShapes& s, const onnx::GraphProto& body) {
  const NodeProto& node = s.node();
  if (node.op_type() == "Loop") {
    if (!s.has_input(0)) return std::nullopt;
    const int64_t* m = s.scope().FindScalar(node.input(0));
    if (m == nullptr || *m < 0 || *m > kMaxTripCount) return std::nullopt;
    return static_cast<double>(*m);
  }
  const int64_t num_scan_inputs = AttrInt(node, "num_scan_inputs", 0);
  if (num_scan_inputs <= 0 || num_scan_inputs > node.input_size() ||
      node.input_size() != body.input_size()) {
    return std::nullopt;
  }
  const int first = node.input_size() - static_cast<int>(num_scan_inputs);
  const std::vector<int64_t> axes = AttrInts(node, "scan_input_axes");
  const int axis = axes.empty() ? 0 : static_cast<int>(axes[0]);
  const TensorInfo* x = s.in(first);
  if (!NodeShapes::Knows(x, axis)) return std::nullopt;
  return s.Dim(x, axis);
}

}  // namespace

// If: the costlier branch (sum of its nodes' FLOPs); both branches' unknown
// shapes, ops without a rule and loops costed once are reported.
// Loop/Scan: flops = body x TripCount(); when the trip count is unknown the
// body once, and the node is listed in loops_costed_once (DESIGN.md §3.1
// asks for a warning). Nested entries are prefixed with "<this node> > ".
void ControlFlowRule(NodeShapes& s, FlopsEstimate* e) {
  const bool is_if = s.node().op_type() == "If";
  const onnx::GraphProto* loop_body = nullptr;
  std::vector<std::string> nested;
  bool first = true;
  for (const AttributeProto& attr : s.node().attribute()) {
    if (attr.type() != AttributeProto::GRAPH || !attr.has_g()) continue;
    FlopsEstimate body = EstimateBody(attr.g(), s.scope());
    if (first || body.flops > e->flops) {
      e->flops = body.flops;
      e->macs = body.macs;
      loop_body = &attr.g();
    }
    first = false;
    if (!body.shapes_known) s.MarkUnknown();
    e->ops_without_rule.insert(e->ops_without_rule.end(),
                               body.ops_without_rule.begin(),
                               body.ops_without_rule.end());
    nested.insert(nested.end(), body.loops_costed_once.begin(),
                  body.loops_costed_once.end());
  }
  if (!is_if && loop_body != nullptr) {
    if (std::optional<double> trips = TripCount(s, *loop_body)) {
      e->flops *= *trips;
      e->macs *= *trips;
    } else {
      e->loops_costed_once.push_back(s.label());
    }
  }
  for (const std::string& path : nested) {
    e->loops_costed_once.push_back(absl::StrCat(s.label(), " > ", path));
  }
}

}  // namespace internal
}  // namespace autoshard
