// Shape and data-movement ops of the value evaluator (shape_values.h):
// Shape, Size, Gather, Slice, Concat, Unsqueeze, Squeeze, Reshape, Flatten,
// Transpose, Range, ConstantOfShape, Expand, Tile, NonZero and Split, each
// as the ONNX operator spec defines it (the reductions:
// shape_values_reduce.cc).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "graph/shape_values_internal.h"

namespace autoshard::values_internal {
namespace {

using onnx::TensorProto;

ShapeValue Int64Vector(std::vector<int64_t> v) {
  ShapeValue out;
  out.elem_type = TensorProto::INT64;
  out.dims = {static_cast<int64_t>(v.size())};
  out.ints = std::move(v);
  return out;
}

// `in` with new dims and the same data.
std::optional<ShapeValue> WithDims(const ShapeValue& in,
                                   std::vector<int64_t> dims) {
  if (NumElementsCapped(dims) != in.NumElements()) return std::nullopt;
  ShapeValue out = in;
  out.dims = std::move(dims);
  return out;
}

}  // namespace

std::optional<std::vector<int64_t>> Axes(const EvalCtx& c, int input_opset,
                                         int input_index, bool* unknown) {
  *unknown = false;
  if (c.opset < input_opset) return AttrInts(c.node, "axes");
  if (!c.has_input(input_index)) return std::nullopt;
  auto axes = IntList(c.value(input_index));
  if (!axes) *unknown = true;
  return axes;
}

// An integer value with one element per entry of `v`, of type INT64.
Outputs EvalShape(const EvalCtx& c) {
  const TensorInfo* info = c.inputs.empty() ? nullptr : c.inputs[0].info;
  if (info == nullptr || !info->rank_known) return {};
  const int64_t rank = static_cast<int64_t>(info->dims.size());
  auto clamp = [rank](int64_t i) {
    if (i < 0) i += rank;
    return std::clamp<int64_t>(i, 0, rank);
  };
  const int64_t start = clamp(AttrInt(c.node, "start", 0));
  const int64_t end = clamp(AttrInt(c.node, "end", rank));
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) {
    if (info->dims[i] < 0) return {};
    dims.push_back(info->dims[i]);
  }
  return {Int64Vector(std::move(dims))};
}

Outputs EvalSize(const EvalCtx& c) {
  const TensorInfo* info = c.inputs.empty() ? nullptr : c.inputs[0].info;
  if (info == nullptr || !info->IsStatic()) return {};
  int64_t n = 1;
  for (int64_t d : info->dims) {
    if (__builtin_mul_overflow(n, d, &n)) return {};  // no int64 holds it
  }
  ShapeValue out;
  out.elem_type = TensorProto::INT64;
  out.ints = {n};
  return {out};
}

Outputs EvalGather(const EvalCtx& c) {
  const ShapeValue* data = c.value(0);
  const ShapeValue* indices = c.value(1);
  if (data == nullptr || indices == nullptr || indices->is_float()) return {};
  const int64_t rank = static_cast<int64_t>(data->dims.size());
  const int64_t axis = NormalizeAxis(AttrInt(c.node, "axis", 0), rank);
  if (axis < 0) return {};
  std::vector<int64_t> dims(data->dims.begin(), data->dims.begin() + axis);
  dims.insert(dims.end(), indices->dims.begin(), indices->dims.end());
  dims.insert(dims.end(), data->dims.begin() + axis + 1, data->dims.end());
  std::optional<ShapeValue> out = MakeValue(data->elem_type, dims);
  if (!out) return {};
  // Every index must be in range, even when the result is empty.
  const int64_t axis_dim = data->dims[axis];
  std::vector<int64_t> at(indices->ints);
  for (int64_t& index : at) {
    if (index < 0) index += axis_dim;
    if (index < 0 || index >= axis_dim) return {};
  }
  // Products of dims, never quotients: a 0 dim anywhere must not divide.
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= data->dims[i];
  for (int64_t i = axis + 1; i < rank; ++i) inner *= data->dims[i];
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t index : at) {
      for (int64_t i = 0; i < inner; ++i) {
        CopyElement(*data, (o * axis_dim + index) * inner + i, &*out, k++);
      }
    }
  }
  return {out};
}

Outputs EvalSlice(const EvalCtx& c) {
  const ShapeValue* data = c.value(0);
  if (data == nullptr) return {};
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  if (c.opset < 10) {
    starts = AttrInts(c.node, "starts");
    ends = AttrInts(c.node, "ends");
    axes = AttrInts(c.node, "axes");
  } else {
    starts = IntList(c.value(1));
    ends = IntList(c.value(2));
    if (c.has_input(3) && !(axes = IntList(c.value(3)))) return {};
    if (c.has_input(4) && !(steps = IntList(c.value(4)))) return {};
  }
  if (!starts || !ends || starts->size() != ends->size()) return {};
  const int64_t rank = static_cast<int64_t>(data->dims.size());
  if (!axes) {
    axes.emplace();
    for (size_t i = 0; i < starts->size(); ++i) axes->push_back(i);
  }
  if (!steps) steps = std::vector<int64_t>(starts->size(), 1);
  if (axes->size() != starts->size() || steps->size() != starts->size()) {
    return {};
  }
  std::vector<int64_t> first(rank, 0), step(rank, 1), dims = data->dims;
  for (size_t i = 0; i < axes->size(); ++i) {
    const int64_t axis = NormalizeAxis((*axes)[i], rank);
    const int64_t s = (*steps)[i];
    if (axis < 0 || s == 0) return {};
    const int64_t d = data->dims[axis];
    int64_t b = (*starts)[i], e = (*ends)[i];
    if (b < 0) b += d;  // no overflow: d >= 0
    if (e < 0) e += d;
    // Counts as 1 + (span - 1) / |s|, which holds for any step (no
    // `span + s - 1`, no `-s`: both overflow for huge steps).
    if (d == 0) {
      b = 0;
      dims[axis] = 0;
    } else if (s > 0) {
      b = std::clamp<int64_t>(b, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      dims[axis] = e > b ? 1 + (e - b - 1) / s : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      // (b - e - 1) / s truncates toward zero: -((b - e - 1) / |s|).
      dims[axis] = b > e ? 1 - (b - e - 1) / s : 0;
    }
    first[axis] = b;
    step[axis] = s;
  }
  std::optional<ShapeValue> out = MakeValue(data->elem_type, dims);
  if (!out) return {};
  const std::vector<int64_t> in_strides = Strides(data->dims);
  std::vector<int64_t> counter(rank, 0);
  const int64_t n = out->NumElements();
  for (int64_t k = 0; k < n; ++k) {
    int64_t at = 0;
    for (int64_t i = 0; i < rank; ++i) {
      at += (first[i] + counter[i] * step[i]) * in_strides[i];
    }
    CopyElement(*data, at, &*out, k);
    for (int64_t i = rank - 1; i >= 0; --i) {
      if (++counter[i] < dims[i]) break;
      counter[i] = 0;
    }
  }
  return {out};
}

Outputs EvalConcat(const EvalCtx& c) {
  if (c.inputs.empty() || c.value(0) == nullptr) return {};
  const ShapeValue& a = *c.value(0);
  const int64_t rank = static_cast<int64_t>(a.dims.size());
  const int64_t axis = NormalizeAxis(AttrInt(c.node, "axis", 0), rank);
  if (axis < 0) return {};
  std::vector<int64_t> dims = a.dims;
  dims[axis] = 0;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const ShapeValue* v = c.value(i);
    if (v == nullptr || v->is_float() != a.is_float() ||
        static_cast<int64_t>(v->dims.size()) != rank) {
      return {};
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis && v->dims[d] != a.dims[d]) return {};
    }
    dims[axis] += v->dims[axis];
  }
  std::optional<ShapeValue> out = MakeValue(a.elem_type, dims);
  if (!out) return {};
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dims[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= dims[d];
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      const ShapeValue& v = *c.value(i);
      const int64_t block = v.dims[axis] * inner;
      for (int64_t j = 0; j < block; ++j) {
        CopyElement(v, o * block + j, &*out, k++);
      }
    }
  }
  return {out};
}

Outputs EvalUnsqueeze(const EvalCtx& c) {
  const ShapeValue* data = c.value(0);
  bool unknown = false;
  std::optional<std::vector<int64_t>> axes = Axes(c, 13, 1, &unknown);
  if (data == nullptr || !axes) return {};
  const int64_t rank = static_cast<int64_t>(data->dims.size() + axes->size());
  std::vector<bool> inserted(rank, false);
  for (int64_t axis : *axes) {
    axis = NormalizeAxis(axis, rank);
    if (axis < 0 || inserted[axis]) return {};
    inserted[axis] = true;
  }
  std::vector<int64_t> dims;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i) {
    dims.push_back(inserted[i] ? 1 : data->dims[next++]);
  }
  return {WithDims(*data, std::move(dims))};
}

Outputs EvalSqueeze(const EvalCtx& c) {
  const ShapeValue* data = c.value(0);
  bool unknown = false;
  std::optional<std::vector<int64_t>> axes = Axes(c, 13, 1, &unknown);
  if (data == nullptr || unknown) return {};
  const int64_t rank = static_cast<int64_t>(data->dims.size());
  std::vector<bool> removed(rank, false);
  if (!axes) {
    for (int64_t i = 0; i < rank; ++i) removed[i] = data->dims[i] == 1;
  } else {
    for (int64_t axis : *axes) {
      axis = NormalizeAxis(axis, rank);
      if (axis < 0 || data->dims[axis] != 1) return {};
      removed[axis] = true;
    }
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < rank; ++i) {
    if (!removed[i]) dims.push_back(data->dims[i]);
  }
  return {WithDims(*data, std::move(dims))};
}

Outputs EvalReshape(const EvalCtx& c) {
  const ShapeValue* data = c.value(0);
  std::optional<std::vector<int64_t>> shape = IntList(c.value(1));
  if (data == nullptr || !shape) return {};
  const bool allow_zero = AttrInt(c.node, "allowzero", 0) != 0;
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < shape->size(); ++i) {
    int64_t& d = (*shape)[i];
    if (d == 0 && !allow_zero) {
      if (i >= data->dims.size()) return {};
      d = data->dims[i];
    }
    if (d == -1) {
      if (infer >= 0) return {};
      infer = static_cast<int>(i);
    } else if (d < 0 || __builtin_mul_overflow(known, d, &known)) {
      return {};
    }
  }
  if (infer >= 0) {
    if (known == 0 || data->NumElements() % known != 0) return {};
    (*shape)[infer] = data->NumElements() / known;
  }
  return {WithDims(*data, *std::move(shape))};
}

Outputs EvalFlatten(const EvalCtx& c) {
  const ShapeValue* data = c.value(0);
  if (data == nullptr) return {};
  const int64_t rank = static_cast<int64_t>(data->dims.size());
  int64_t axis = AttrInt(c.node, "axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return {};
  // Both products, not a quotient: [0, 3] flattens to [0, 3], not [0, 0].
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= data->dims[i];
  for (int64_t i = axis; i < rank; ++i) inner *= data->dims[i];
  return {WithDims(*data, {outer, inner})};
}

Outputs EvalTranspose(const EvalCtx& c) {
  const ShapeValue* data = c.value(0);
  if (data == nullptr) return {};
  const int64_t rank = static_cast<int64_t>(data->dims.size());
  std::vector<int64_t> perm;
  if (auto attr = AttrInts(c.node, "perm")) {
    perm = *attr;
  } else {
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int64_t>(perm.size()) != rank) return {};
  std::vector<int64_t> dims(rank);
  std::vector<bool> used(rank, false);
  for (int64_t i = 0; i < rank; ++i) {
    // A permutation: a repeated axis would read past the data.
    const int64_t axis = NormalizeAxis(perm[i], rank);
    if (axis < 0 || used[axis]) return {};
    used[axis] = true;
    dims[i] = data->dims[axis];
  }
  std::optional<ShapeValue> out = MakeValue(data->elem_type, dims);
  if (!out) return {};
  const std::vector<int64_t> in_strides = Strides(data->dims);
  std::vector<int64_t> counter(rank, 0);
  for (int64_t k = 0; k < out->NumElements(); ++k) {
    int64_t at = 0;
    for (int64_t i = 0; i < rank; ++i) {
      at += counter[i] * in_strides[NormalizeAxis(perm[i], rank)];
    }
    CopyElement(*data, at, &*out, k);
    for (int64_t i = rank - 1; i >= 0; --i) {
      if (++counter[i] < dims[i]) break;
      counter[i] = 0;
    }
  }
  return {out};
}

Outputs EvalRange(const EvalCtx& c) {
  const ShapeValue* start = c.value(0);
  const ShapeValue* limit = c.value(1);
  const ShapeValue* delta = c.value(2);
  if (start == nullptr || limit == nullptr || delta == nullptr ||
      start->NumElements() != 1 || limit->NumElements() != 1 ||
      delta->NumElements() != 1 || limit->is_float() != start->is_float() ||
      delta->is_float() != start->is_float()) {
    return {};
  }
  int64_t n = 0;
  if (start->is_float()) {
    const double d = delta->AsDouble(0);
    if (d == 0) return {};
    const double count =
        std::ceil((limit->AsDouble(0) - start->AsDouble(0)) / d);
    // NaN and ±inf fail one test or the other; what passes fits an int64.
    if (!(count <= kMaxValueElements)) return {};
    n = count > 0 ? static_cast<int64_t>(count) : 0;
  } else {
    const int64_t s = start->ints[0], l = limit->ints[0], d = delta->ints[0];
    if (d == 0) return {};
    int64_t span = 0;
    if (__builtin_sub_overflow(l, s, &span)) return {};
    if (span != 0 && (span < 0) != (d < 0)) {
      n = 0;  // moving away from the limit
    } else {
      // ceil(span / d) = 1 + (span - 1) / d toward the limit; as
      // magnitudes, since INT64_MIN / -1 overflows.
      const uint64_t mag_span = span < 0 ? 0 - static_cast<uint64_t>(span)
                                         : static_cast<uint64_t>(span);
      const uint64_t mag_d =
          d < 0 ? 0 - static_cast<uint64_t>(d) : static_cast<uint64_t>(d);
      const uint64_t count = mag_span == 0 ? 0 : 1 + (mag_span - 1) / mag_d;
      if (count > static_cast<uint64_t>(kMaxValueElements)) return {};
      n = static_cast<int64_t>(count);
    }
  }
  std::optional<ShapeValue> out = MakeValue(start->elem_type, {n});
  if (!out) return {};
  for (int64_t k = 0; k < n; ++k) {
    if (out->is_float()) {
      out->floats[k] = start->AsDouble(0) + k * delta->AsDouble(0);
    } else {
      out->ints[k] = start->ints[0] + k * delta->ints[0];
    }
  }
  Normalize(&*out);
  return {out};
}

Outputs EvalConstantOfShape(const EvalCtx& c) {
  std::optional<std::vector<int64_t>> dims = IntList(c.value(0));
  if (!dims || (c.value(0) != nullptr && c.value(0)->dims.empty())) return {};
  ShapeValue fill;
  fill.elem_type = TensorProto::FLOAT;
  fill.floats = {0.0};
  if (const onnx::AttributeProto* attr = FindAttr(c.node, "value")) {
    std::optional<ShapeValue> v = ValueFromTensor(attr->t());
    if (!v || v->NumElements() != 1) return {};
    fill = *v;
  }
  std::optional<ShapeValue> out = MakeValue(fill.elem_type, *dims);
  if (!out) return {};
  for (int64_t k = 0; k < out->NumElements(); ++k) {
    CopyElement(fill, 0, &*out, k);
  }
  return {out};
}

Outputs EvalExpand(const EvalCtx& c) {
  const ShapeValue* data = c.value(0);
  std::optional<std::vector<int64_t>> shape = IntList(c.value(1));
  if (data == nullptr || !shape) return {};
  auto dims = BroadcastDims(data->dims, *shape);
  if (!dims) return {};
  std::optional<ShapeValue> out = MakeValue(data->elem_type, *dims);
  if (!out) return {};
  const std::vector<int64_t> from = BroadcastIndices(data->dims, *dims);
  for (size_t k = 0; k < from.size(); ++k)
    CopyElement(*data, from[k], &*out, k);
  return {out};
}

Outputs EvalTile(const EvalCtx& c) {
  const ShapeValue* data = c.value(0);
  std::optional<std::vector<int64_t>> repeats = IntList(c.value(1));
  if (data == nullptr || !repeats || repeats->size() != data->dims.size()) {
    return {};
  }
  const int64_t rank = static_cast<int64_t>(data->dims.size());
  std::vector<int64_t> dims(rank);
  for (int64_t i = 0; i < rank; ++i) {
    if ((*repeats)[i] < 0 ||
        __builtin_mul_overflow(data->dims[i], (*repeats)[i], &dims[i])) {
      return {};
    }
  }
  std::optional<ShapeValue> out = MakeValue(data->elem_type, dims);
  // An empty result is all there is (and `% data->dims[i]` below needs every
  // input dim non-zero, which a non-empty result implies).
  if (!out || out->NumElements() == 0) return {out};
  const std::vector<int64_t> in_strides = Strides(data->dims);
  std::vector<int64_t> counter(rank, 0);
  for (int64_t k = 0; k < out->NumElements(); ++k) {
    int64_t at = 0;
    for (int64_t i = 0; i < rank; ++i) {
      at += (counter[i] % data->dims[i]) * in_strides[i];
    }
    CopyElement(*data, at, &*out, k);
    for (int64_t i = rank - 1; i >= 0; --i) {
      if (++counter[i] < dims[i]) break;
      counter[i] = 0;
    }
  }
  return {out};
}

Outputs EvalNonZero(const EvalCtx& c) {
  const ShapeValue* data = c.value(0);
  if (data == nullptr || data->dims.empty()) return {};
  const int64_t rank = static_cast<int64_t>(data->dims.size());
  std::vector<int64_t> hits;
  for (int64_t k = 0; k < data->NumElements(); ++k) {
    if (data->AsDouble(k) != 0) hits.push_back(k);
  }
  const int64_t n = static_cast<int64_t>(hits.size());
  std::optional<ShapeValue> out = MakeValue(TensorProto::INT64, {rank, n});
  // No hit: [rank, 0]. A hit implies no 0 dim, hence no 0 stride below.
  if (!out || n == 0) return {out};
  const std::vector<int64_t> strides = Strides(data->dims);
  for (int64_t j = 0; j < n; ++j) {
    int64_t rest = hits[j];
    for (int64_t i = 0; i < rank; ++i) {
      out->ints[i * n + j] = rest / strides[i];
      rest %= strides[i];
    }
  }
  return {out};
}

Outputs EvalSplit(const EvalCtx& c) {
  const ShapeValue* data = c.value(0);
  if (data == nullptr || c.node.output_size() == 0) return {};
  const int64_t rank = static_cast<int64_t>(data->dims.size());
  const int64_t axis = NormalizeAxis(AttrInt(c.node, "axis", 0), rank);
  if (axis < 0) return {};
  const int64_t d = data->dims[axis];
  const int64_t parts = c.node.output_size();
  std::optional<std::vector<int64_t>> split;
  if (c.opset < 13) {
    split = AttrInts(c.node, "split");
  } else if (c.has_input(1)) {
    if (!(split = IntList(c.value(1)))) return {};
  }
  if (!split) {
    // Equal parts; from opset 18 the last may be smaller.
    const int64_t each = (d + parts - 1) / parts;
    if (c.opset < 18 && d % parts != 0) return {};
    split.emplace();
    for (int64_t i = 0; i < parts; ++i) {
      split->push_back(std::max<int64_t>(0, std::min(each, d - i * each)));
    }
  }
  if (static_cast<int64_t>(split->size()) != parts) return {};
  // The parts cover the axis exactly (the spec's rule; it also keeps
  // `begin + size` within the dim).
  int64_t covered = 0;
  for (int64_t size : *split) {
    if (size < 0 || size > d - covered) return {};
    covered += size;
  }
  if (covered != d) return {};
  Outputs outs;
  int64_t begin = 0;
  for (int64_t size : *split) {
    onnx::NodeProto slice;
    slice.set_op_type("Slice");
    const ShapeValue starts = Int64Vector({begin});
    const ShapeValue ends = Int64Vector({begin + size});
    const ShapeValue axes = Int64Vector({axis});
    const EvalInput in[] = {c.inputs[0], {&starts}, {&ends}, {&axes}};
    slice.add_input("data");
    slice.add_input("starts");
    slice.add_input("ends");
    slice.add_input("axes");
    Outputs part = EvalSlice(EvalCtx{slice, 13, in});
    outs.push_back(part.empty() ? std::nullopt : part[0]);
    begin += size;
  }
  return outs;
}

}  // namespace autoshard::values_internal
