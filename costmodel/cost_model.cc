#include "costmodel/cost_model.h"

#include <algorithm>
#include <exception>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/step_counts.h"
#include "costmodel/flops_rules.h"

// Note [Constants and weights]
// A tensor is constant when it is a graph initializer (dense or sparse), the
// output of a Constant node, or the output of a constant-foldable node: a
// default-domain node without bodies, not a random op, not a
// DequantizeLinear, all of whose inputs are constant (e.g. ConstantOfShape of
// a constant shape, as the ONNX "light" zoo models hold their weights).
// DequantizeLinear never folds: a quantized model stores its weights as 8-bit
// tensors plus scales and zero points, which the DequantizeLinear node reads
// as weights at their stored size (int8: 1 byte), not as the float tensor
// it computes (4x larger). Nodes are visited in topological order, so
// a chain folds from its start. Constant nodes cost nothing: no FLOPs, no
// activation bytes.
// A weight is a constant tensor that a non-constant node reads, directly or
// from an If/Loop/Scan body (implicit input). Intermediate constants of a
// chain that only constant nodes read are not weights. Sizes never read the
// data (it may live in an external file): initializers and Constant values
// use their dims, folded outputs the inferred shape (unknown: 0 bytes, and
// the node counts as one with unknown shapes).
// The constants that an If/Loop/Scan node's bodies define themselves
// (initializers and Constant nodes, at any depth) are one more weight of that
// node, named "<node name>/body_constants": the device stores every branch.

namespace autoshard {
namespace {

// A constant tensor's element type and element count.
struct ConstantTensor {
  int32_t elem_type = 0;
  int64_t elements = 0;
  bool shape_known = true;
};

template <typename Dims>
ConstantTensor FromDims(int32_t elem_type, const Dims& dims) {
  ConstantTensor c{elem_type, 1, true};
  for (int64_t d : dims) {
    if (d < 0) return {elem_type, 0, false};  // invalid in a TensorProto
    c.elements = SaturatingMul(c.elements, d);
  }
  return c;
}

int64_t Bytes(const ConstantTensor& c, Precision precision) {
  return SaturatingMul(c.elements, ElementSizeBytesAt(c.elem_type, precision));
}

// The value of a Constant node, from its attribute's dims.
ConstantTensor ConstantNodeValue(const onnx::NodeProto& node) {
  using T = onnx::TensorProto;
  for (const auto& attr : node.attribute()) {
    const std::string& name = attr.name();
    if (name == "value") return FromDims(attr.t().data_type(), attr.t().dims());
    if (name == "sparse_value") {
      return FromDims(attr.sparse_tensor().values().data_type(),
                      attr.sparse_tensor().dims());
    }
    if (name == "value_float") return {T::FLOAT, 1, true};
    if (name == "value_int") return {T::INT64, 1, true};
    if (name == "value_string") return {T::STRING, 1, true};
    if (name == "value_floats") return {T::FLOAT, attr.floats_size(), true};
    if (name == "value_ints") return {T::INT64, attr.ints_size(), true};
    if (name == "value_strings") return {T::STRING, attr.strings_size(), true};
  }
  return {0, 0, false};
}

// Bytes of the constants `graph` (a body) defines: initializers and Constant
// node values, including those of nested bodies.
int64_t BodyConstantBytes(const onnx::GraphProto& graph, Precision precision) {
  int64_t bytes = 0;
  for (const auto& t : graph.initializer()) {
    bytes = SaturatingAdd(bytes,
                          Bytes(FromDims(t.data_type(), t.dims()), precision));
  }
  for (const auto& t : graph.sparse_initializer()) {
    bytes = SaturatingAdd(
        bytes, Bytes(FromDims(t.values().data_type(), t.dims()), precision));
  }
  for (const auto& node : graph.node()) {
    if (node.op_type() == "Constant" && IsDefaultDomain(node.domain())) {
      bytes = SaturatingAdd(bytes, Bytes(ConstantNodeValue(node), precision));
    }
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) {
        bytes = SaturatingAdd(bytes, BodyConstantBytes(attr.g(), precision));
      }
      for (const auto& body : attr.graphs()) {
        bytes = SaturatingAdd(bytes, BodyConstantBytes(body, precision));
      }
    }
  }
  return bytes;
}

class CostBuilder {
 public:
  CostBuilder(const onnx::GraphProto& graph_proto, const Graph& graph,
              const TensorInfoMap& tensors, const CostOptions& options)
      : graph_proto_(graph_proto),
        graph_(graph),
        tensors_(tensors),
        options_(options) {}

  ModelCosts Build() {
    const int n = graph_.num_nodes();
    costs_.nodes.resize(n);
    costs_.node_weights.resize(n);
    costs_.num_activation_inputs.assign(n, 0);
    scalars_ = CollectScalarConstants(graph_proto_);
    for (const auto& t : graph_proto_.initializer()) {
      constants_[t.name()] = FromDims(t.data_type(), t.dims());
    }
    for (const auto& t : graph_proto_.sparse_initializer()) {
      constants_[t.values().name()] =
          FromDims(t.values().data_type(), t.dims());
    }
    const std::vector<uint8_t> is_constant =
        FindConstantNodes(graph_proto_, graph_);
    for (NodeId id : graph_.topological_order()) {
      if (is_constant[id]) {
        AddConstantNode(id);
      } else {
        AddNode(id);
      }
    }
    for (const NodeCost& cost : costs_.nodes) {
      costs_.total_flops += cost.flops;
      if (!cost.shapes_known) ++costs_.nodes_with_unknown_shapes;
    }
    for (const Weight& w : costs_.weights) {
      costs_.total_weight_bytes =
          SaturatingAdd(costs_.total_weight_bytes, w.size_bytes);
    }
    costs_.ops_without_rule.assign(ops_without_rule_.begin(),
                                   ops_without_rule_.end());
    return std::move(costs_);
  }

 private:
  bool IsConstant(const std::string& name) const {
    return constants_.contains(name);
  }

  void AddConstantNode(NodeId id) {
    const onnx::NodeProto& node = graph_.node(id);
    NodeCost& cost = costs_.nodes[id];
    cost.is_constant = true;
    cost.op_class = OpClassName(ClassifyOp(node));
    for (const auto& out : node.output()) {
      if (out.empty()) continue;
      ConstantTensor c;
      if (node.op_type() == "Constant") {
        c = ConstantNodeValue(node);
      } else if (auto it = tensors_.find(out);
                 it != tensors_.end() && it->second.IsStatic()) {
        c = {it->second.elem_type, it->second.NumElementsOr1(), true};
      } else if (it != tensors_.end() && it->second.non_tensor) {
        c = {0, 0, true};  // a sequence (SequenceEmpty): no tensor bytes
      } else {
        c = {it != tensors_.end() ? it->second.elem_type : 0, 0, false};
      }
      cost.shapes_known = cost.shapes_known && c.shape_known;
      cost.output_shapes_static = cost.output_shapes_static && c.shape_known;
      constants_[out] = c;
    }
  }

  void AddNode(NodeId id) {
    const onnx::NodeProto& node = graph_.node(id);
    NodeCost& cost = costs_.nodes[id];
    const FlopsEstimate e = EstimateFlops(node, tensors_, scalars_);
    cost.flops = e.flops;
    cost.macs = e.macs;
    cost.has_flops_rule = e.has_rule;
    cost.shapes_known = e.shapes_known;
    cost.op_class = OpClassName(e.op_class);
    ops_without_rule_.insert(e.ops_without_rule.begin(),
                             e.ops_without_rule.end());
    costs_.loops_costed_once.insert(costs_.loops_costed_once.end(),
                                    e.loops_costed_once.begin(),
                                    e.loops_costed_once.end());
    cost.output_bytes.assign(node.output_size(), 0);
    for (int slot = 0; slot < node.output_size(); ++slot) {
      const std::string& out = node.output(slot);
      if (out.empty()) continue;
      auto it = tensors_.find(out);
      if (it == tensors_.end()) {
        cost.shapes_known = false;
        cost.output_shapes_static = false;
        continue;
      }
      const TensorInfo& info = it->second;
      // A sequence or map (ZipMap's output) has no dims to know.
      if (!info.IsStatic() && !info.non_tensor) {
        cost.shapes_known = false;
        cost.output_shapes_static = false;
      }
      const int64_t bytes = TensorBytes(info);
      cost.output_bytes[slot] = bytes;
      cost.activation_bytes = SaturatingAdd(cost.activation_bytes, bytes);
      cost.largest_output_bytes = std::max(cost.largest_output_bytes, bytes);
    }
    if (e.op_class == OpClass::kMatMul || e.op_class == OpClass::kConv) {
      cost.temporary_bytes = TemporaryBytes(node);
    }
    // Explicit inputs, then the names the bodies read from this scope.
    std::vector<std::string> reads;
    for (const auto& in : node.input()) {
      if (!in.empty()) reads.push_back(in);
    }
    const std::vector<std::string>& implicit = graph_.implicit_inputs(id);
    reads.insert(reads.end(), implicit.begin(), implicit.end());
    std::sort(reads.begin(), reads.end());
    reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
    std::vector<int32_t>& weights = costs_.node_weights[id];
    for (const std::string& name : reads) {
      if (IsConstant(name)) {
        weights.push_back(WeightId(name));
      } else {
        ++costs_.num_activation_inputs[id];
      }
    }
    if (HasBody(node)) AddBodyConstants(node, &weights);
    std::sort(weights.begin(), weights.end());
  }

  // Elements x element size at the chosen precision (unknown dims as 1).
  int64_t TensorBytes(const TensorInfo& info) const {
    return SaturatingMul(
        info.NumElementsOr1(),
        ElementSizeBytesAt(info.elem_type, options_.precision));
  }

  // NodeCost::temporary_bytes of a "matmul" or "conv" node: fp32 partial sums
  // of output 0 (else the first output) plus a copy of input 0.
  int64_t TemporaryBytes(const onnx::NodeProto& node) const {
    int64_t bytes = 0;
    for (const auto& out : node.output()) {
      if (out.empty()) continue;
      if (auto it = tensors_.find(out); it != tensors_.end()) {
        bytes = SaturatingMul(it->second.NumElementsOr1(), 4);
      }
      break;
    }
    if (node.input_size() > 0 && !node.input(0).empty()) {
      if (auto it = tensors_.find(node.input(0)); it != tensors_.end()) {
        bytes = SaturatingAdd(bytes, TensorBytes(it->second));
      }
    }
    return bytes;
  }

  // The weight for constant tensor `name`, created on first use.
  int32_t WeightId(const std::string& name) {
    auto [it, inserted] = weight_ids_.try_emplace(
        name, static_cast<int32_t>(costs_.weights.size()));
    if (inserted) {
      const ConstantTensor& c = constants_.at(name);
      using T = onnx::TensorProto;
      const bool floating =
          c.elem_type == T::FLOAT || c.elem_type == T::DOUBLE ||
          c.elem_type == T::FLOAT16 || c.elem_type == T::BFLOAT16;
      costs_.weights.push_back(
          {name, Bytes(c, options_.precision), c.elements, floating});
    }
    return it->second;
  }

  void AddBodyConstants(const onnx::NodeProto& node,
                        std::vector<int32_t>* weights) {
    int64_t bytes = 0;
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) {
        bytes = SaturatingAdd(bytes,
                              BodyConstantBytes(attr.g(), options_.precision));
      }
      for (const auto& body : attr.graphs()) {
        bytes =
            SaturatingAdd(bytes, BodyConstantBytes(body, options_.precision));
      }
    }
    if (bytes == 0) return;
    weights->push_back(static_cast<int32_t>(costs_.weights.size()));
    costs_.weights.push_back(
        {absl::StrCat(node.name(), "/body_constants"), bytes});
  }

  const onnx::GraphProto& graph_proto_;
  const Graph& graph_;
  const TensorInfoMap& tensors_;
  const CostOptions& options_;
  ModelCosts costs_;
  ScalarConstants scalars_;  // integer scalar constants, for Loop trip counts
  absl::flat_hash_map<std::string, ConstantTensor> constants_;
  absl::flat_hash_map<std::string, int32_t> weight_ids_;
  std::set<std::string> ops_without_rule_;
};

// Ops that never fold even with constant inputs: random ops, and
// DequantizeLinear (Note [Constants and weights]).
bool NeverFolds(const std::string& op_type) {
  return op_type == "RandomNormal" || op_type == "RandomUniform" ||
         op_type == "RandomNormalLike" || op_type == "RandomUniformLike" ||
         op_type == "Multinomial" || op_type == "Bernoulli" ||
         op_type == "DequantizeLinear";
}

}  // namespace

std::vector<uint8_t> FindConstantNodes(const onnx::GraphProto& graph_proto,
                                       const Graph& graph) {
  ++ThreadStepCounts().constant_masks;
  absl::flat_hash_set<std::string> constants;
  for (const auto& t : graph_proto.initializer()) constants.insert(t.name());
  for (const auto& t : graph_proto.sparse_initializer()) {
    constants.insert(t.values().name());
  }
  std::vector<uint8_t> is_constant(graph.num_nodes(), 0);
  for (NodeId id : graph.topological_order()) {
    const onnx::NodeProto& node = graph.node(id);
    bool constant = IsDefaultDomain(node.domain());
    if (constant && node.op_type() != "Constant") {
      constant = !HasBody(node) && !NeverFolds(node.op_type());
      for (const auto& in : node.input()) {
        if (!in.empty() && !constants.contains(in)) constant = false;
      }
    }
    if (!constant) continue;
    is_constant[id] = 1;
    for (const auto& out : node.output()) {
      if (!out.empty()) constants.insert(out);
    }
  }
  return is_constant;
}

bool IsHeavyOpClass(std::string_view op_class) {
  return op_class == "matmul" || op_class == "conv";
}

int64_t ElementSizeBytesAt(int32_t elem_type, Precision precision) {
  if (precision == Precision::kFp16 &&
      (elem_type == onnx::TensorProto::FLOAT ||
       elem_type == onnx::TensorProto::DOUBLE)) {
    return 2;
  }
  return ElementSizeBytes(elem_type);
}

absl::StatusOr<ModelCosts> ComputeCosts(const onnx::GraphProto& graph_proto,
                                        const Graph& graph,
                                        const TensorInfoMap& tensors,
                                        const CostOptions& options) {
  if (graph.num_nodes() != graph_proto.node_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ComputeCosts: the Graph has ", graph.num_nodes(),
                     " nodes but the GraphProto has ", graph_proto.node_size(),
                     " (the Graph must be built from this GraphProto)"));
  }
  try {
    return CostBuilder(graph_proto, graph, tensors, options).Build();
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(
        "ComputeCosts failed on graph '", graph_proto.name(), "': ", e.what()));
  }
}

}  // namespace autoshard
