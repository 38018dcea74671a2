// Internals shared by the FLOPs rule files (flops_rules.cc, the table and the
// simple rules; flops_rules_contraction.cc; flops_rules_control.cc): name
// scopes, per-node shape access and the rule function signatures. Not part of
// the cost model's interface.
#ifndef AUTOSHARD_COSTMODEL_FLOPS_RULES_INTERNAL_H_
#define AUTOSHARD_COSTMODEL_FLOPS_RULES_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "costmodel/flops_rules.h"
#include "graph/node_attributes.h"
#include "graph/shapes.h"
#include "onnx/onnx_pb.h"

namespace autoshard::internal {

// A body's names, looked up innermost first: Note [Scopes] in
// graph/shape_propagation_internal.h. A Scope does not own its tables; they
// and the parent must outlive it.
class Scope {
 public:
  Scope(const TensorInfoMap& tensors, const ScalarConstants& scalars,
        const Scope* parent = nullptr)
      : tensors_(tensors), scalars_(scalars), parent_(parent) {}

  // The innermost TensorInfo recorded for `name`, or nullptr.
  const TensorInfo* FindTensor(const std::string& name) const {
    for (const Scope* s = this; s != nullptr; s = s->parent_) {
      auto it = s->tensors_.find(name);
      if (it != s->tensors_.end()) return &it->second;
    }
    return nullptr;
  }

  // The value of the integer scalar constant `name`, or nullptr when the
  // innermost graph that records `name` does not know it as one.
  const int64_t* FindScalar(const std::string& name) const {
    for (const Scope* s = this; s != nullptr; s = s->parent_) {
      auto it = s->scalars_.find(name);
      if (it != s->scalars_.end()) return &it->second;
      if (s->tensors_.contains(name)) return nullptr;  // shadowed
    }
    return nullptr;
  }

 private:
  const TensorInfoMap& tensors_;
  const ScalarConstants& scalars_;
  const Scope* parent_;
};

// Attribute lookups: graph/node_attributes.h; AttrInts is empty when the
// attribute is absent.
using ::autoshard::AttrInt;
using ::autoshard::AttrString;
using ::autoshard::FindAttr;
inline std::vector<int64_t> AttrInts(const onnx::NodeProto& node,
                                     std::string_view name) {
  return ::autoshard::AttrInts(node, name).value_or(std::vector<int64_t>{});
}

// The op type, written "domain.OpType" outside the default domain.
std::string OpLabel(const onnx::NodeProto& node);

// The tensor infos of one node's inputs and outputs. Every accessor that
// needs a dim it does not know returns 1 for it and records the fact.
// `label` names the node in FlopsEstimate::loops_costed_once.
class NodeShapes {
 public:
  NodeShapes(const onnx::NodeProto& node, const Scope& scope, std::string label)
      : node_(node), scope_(scope), label_(std::move(label)) {}

  const onnx::NodeProto& node() const { return node_; }
  const Scope& scope() const { return scope_; }
  const std::string& label() const { return label_; }
  bool known() const { return known_; }
  void MarkUnknown() { known_ = false; }

  bool has_input(int i) const {
    return i >= 0 && i < node_.input_size() && !node_.input(i).empty();
  }
  int num_inputs() const;
  const TensorInfo* in(int i) const {
    return has_input(i) ? scope_.FindTensor(node_.input(i)) : nullptr;
  }
  const TensorInfo* out(int i) const {
    if (i >= node_.output_size() || node_.output(i).empty()) return nullptr;
    return scope_.FindTensor(node_.output(i));
  }

  // Rank of `t`, or -1 when unknown (not recorded: callers decide).
  static int Rank(const TensorInfo* t) {
    return t != nullptr && t->rank_known ? static_cast<int>(t->dims.size())
                                         : -1;
  }
  // True when dim `axis` (negative counts from the end) of `t` is known.
  static bool Knows(const TensorInfo* t, int axis) {
    const int rank = Rank(t);
    if (axis < 0) axis += rank;
    return rank >= 0 && axis >= 0 && axis < rank && t->dims[axis] >= 0;
  }

  // Dim `axis` of `t` (negative counts from the end).
  double Dim(const TensorInfo* t, int axis);
  // Dim `axis` of `t`, else dim `alt_axis` of `alt`.
  double DimOr(const TensorInfo* t, int axis, const TensorInfo* alt,
               int alt_axis) {
    return Knows(t, axis) ? Dim(t, axis) : Dim(alt, alt_axis);
  }
  // Elements of `t`.
  double Elements(const TensorInfo* t);
  // Elements of output 0 (unknown dims as 1). When even its rank is unknown:
  // for a broadcasting elementwise op the largest input's element count,
  // else input 0's (the data input of most ops; never a weight's).
  double OutElements(bool broadcast = false);

 private:
  const onnx::NodeProto& node_;
  const Scope& scope_;
  const std::string label_;
  bool known_ = true;
};

// A rule fills in flops (and macs for contractions) of `e`; the caller sets
// op_class and shapes_known; a rule that gives up sets has_rule = false.
using RuleFn = void (*)(NodeShapes& s, FlopsEstimate* e);

// Sets e->macs = macs and e->flops = 2 x macs + extra_flops.
inline void SetMacs(double macs, double extra_flops, FlopsEstimate* e) {
  e->macs = macs;
  e->flops = 2 * macs + extra_flops;
}

// The FLOPs of `node` looked up in `scope`, labelled `label` (flops_rules.cc).
FlopsEstimate EstimateNode(const onnx::NodeProto& node, const Scope& scope,
                           std::string label);

// Contractions (flops_rules_contraction.cc).
void MatMulRule(NodeShapes& s, FlopsEstimate* e);
void GemmRule(NodeShapes& s, FlopsEstimate* e);
void ConvRule(NodeShapes& s, FlopsEstimate* e);
void EinsumRule(NodeShapes& s, FlopsEstimate* e);
void RecurrentRule(NodeShapes& s, FlopsEstimate* e);
void AttentionRule(NodeShapes& s, FlopsEstimate* e);

// If/Loop/Scan (flops_rules_control.cc).
void ControlFlowRule(NodeShapes& s, FlopsEstimate* e);

}  // namespace autoshard::internal

#endif  // AUTOSHARD_COSTMODEL_FLOPS_RULES_INTERNAL_H_
