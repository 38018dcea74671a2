// Sequence ops for the shape propagation pass (Note [Shape propagation] in
// shape_propagation.h). A sequence is known by its elements' common shape and
// its length (SequenceInfo); from them come the shapes of the tensors taken
// out of it (SequenceAt, ConcatFromSequence) and SequenceLength's value.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/shape_propagation_internal.h"
#include "graph/shape_values.h"

namespace autoshard::propagation_internal {
namespace {

int64_t AttrIntOr(const onnx::NodeProto& node, const std::string& name,
                  int64_t dflt) {
  for (const auto& attr : node.attribute()) {
    if (attr.name() == name) return attr.i();
  }
  return dflt;
}

// The sequence SplitToSequence(x, split) makes, or nullopt.
std::optional<SequenceInfo> SplitToSequence(const onnx::NodeProto& node,
                                            const TensorInfo* x,
                                            const ShapeValue* split,
                                            bool has_split) {
  if (x == nullptr || !x->rank_known) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  int64_t axis = AttrIntOr(node, "axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  const int64_t d = x->dims[axis];
  SequenceInfo s;
  s.elem = *x;
  if (!has_split) {  // one element per index of the axis
    s.length = d;
    if (AttrIntOr(node, "keepdims", 1) != 0) {
      s.elem.dims[axis] = 1;
    } else {
      s.elem.dims.erase(s.elem.dims.begin() + axis);
    }
    return s;
  }
  if (split == nullptr || split->is_float()) return std::nullopt;
  if (split->dims.empty()) {  // chunks of `k`, the last may be shorter
    const int64_t k = split->ints[0];
    if (k <= 0 || d < 0) return std::nullopt;
    s.length = d == 0 ? 0 : 1 + (d - 1) / k;  // ceil(d / k), no d + k - 1
    s.elem.dims[axis] = d % k == 0 ? k : -1;
    return s;
  }
  s.length = split->NumElements();
  s.elem.dims[axis] = split->ints.empty() ? -1 : split->ints[0];
  for (int64_t part : split->ints) {
    if (part != split->ints[0]) s.elem.dims[axis] = -1;
  }
  return s;
}

// The tensor ConcatFromSequence makes of `s`, or nullopt.
std::optional<TensorInfo> ConcatFromSequence(const onnx::NodeProto& node,
                                             const SequenceInfo& s) {
  if (!s.elem.rank_known || s.length < 0) return std::nullopt;
  TensorInfo out = s.elem;
  const bool new_axis = AttrIntOr(node, "new_axis", 0) != 0;
  const int64_t rank = static_cast<int64_t>(out.dims.size()) + new_axis;
  int64_t axis = AttrIntOr(node, "axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  if (new_axis) {
    out.dims.insert(out.dims.begin() + axis, s.length);
  } else if (out.dims[axis] >= 0 &&
             __builtin_mul_overflow(out.dims[axis], s.length,
                                    &out.dims[axis])) {
    out.dims[axis] = -1;  // beyond int64: unknown
  }
  return out;
}

}  // namespace

bool Propagator::ProcessSequenceOp(const onnx::NodeProto& node,
                                   GraphScope* scope) {
  const std::string& op = node.op_type();
  if (op.find("Sequence") == std::string::npos || node.output_size() == 0 ||
      node.output(0).empty()) {
    return false;
  }
  const std::string& out = node.output(0);
  auto in_seq = [&](int i) -> const SequenceInfo* {
    return i < node.input_size() && !node.input(i).empty()
               ? scope->FindSequence(node.input(i))
               : nullptr;
  };
  auto in_info = [&](int i) -> const TensorInfo* {
    return i < node.input_size() && !node.input(i).empty()
               ? scope->FindInfo(node.input(i))
               : nullptr;
  };
  if (op == "SequenceEmpty") {
    SequenceInfo s;
    s.elem.elem_type = static_cast<int32_t>(
        AttrIntOr(node, "dtype", onnx::TensorProto::FLOAT));
    s.length = 0;
    scope->sequences[out] = s;
  } else if (op == "SequenceConstruct") {
    SequenceInfo s;
    s.length = node.input_size();
    for (int i = 0; i < node.input_size(); ++i) {
      const TensorInfo* t = in_info(i);
      const TensorInfo none;
      s.elem = i == 0 ? (t ? *t : none) : CommonInfo(s.elem, t ? *t : none);
    }
    scope->sequences[out] = s;
  } else if (op == "SequenceInsert" || op == "SequenceErase") {
    const SequenceInfo* s = in_seq(0);
    if (s == nullptr) return true;
    SequenceInfo r = *s;
    if (op == "SequenceInsert") {
      const TensorInfo* t = in_info(1);
      r.elem = s->length == 0 ? (t ? *t : TensorInfo())
                              : CommonInfo(s->elem, t ? *t : TensorInfo());
      r.length = s->length >= 0 && s->length < INT64_MAX ? s->length + 1 : -1;
    } else {
      r.length = s->length > 0 ? s->length - 1 : -1;
    }
    scope->sequences[out] = r;
  } else if (op == "SequenceAt") {
    if (const SequenceInfo* s = in_seq(0)) Merge(out, s->elem, scope);
  } else if (op == "SequenceLength") {
    const SequenceInfo* s = in_seq(0);
    if (s != nullptr && s->length >= 0) {
      ShapeValue v;
      v.elem_type = onnx::TensorProto::INT64;
      v.ints = {s->length};
      Merge(out, v.Info(), scope);
      scope->values[out] = v;
    }
  } else if (op == "SplitToSequence") {
    const bool has_split = node.input_size() > 1 && !node.input(1).empty();
    const ShapeValue* split =
        has_split ? scope->FindValue(node.input(1)) : nullptr;
    if (auto s = SplitToSequence(node, in_info(0), split, has_split)) {
      scope->sequences[out] = *s;
    }
  } else if (op == "ConcatFromSequence") {
    const SequenceInfo* s = in_seq(0);
    if (s == nullptr) return true;
    if (auto t = ConcatFromSequence(node, *s)) Merge(out, *t, scope);
  } else {
    return false;
  }
  return true;
}

}  // namespace autoshard::propagation_internal
