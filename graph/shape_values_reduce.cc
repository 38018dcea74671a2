// The reductions of the value evaluator (shape_values.h): ReduceSum,
// ReduceMean, ReduceProd, ReduceMin and ReduceMax over constant-sized
// values, as the ONNX operator spec defines them.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph/shape_values_internal.h"

namespace autoshard::values_internal {
namespace {

// Which dims of a rank-`rank` input `axes` reduce (none given: all);
// nullopt when an axis is out of range.
std::optional<std::vector<bool>> ReducedDims(
    const std::optional<std::vector<int64_t>>& axes, int64_t rank) {
  std::vector<bool> reduced(rank, false);
  if (!axes || axes->empty()) {
    reduced.assign(rank, true);
    return reduced;
  }
  for (int64_t axis : *axes) {
    axis = NormalizeAxis(axis, rank);
    if (axis < 0) return std::nullopt;
    reduced[axis] = true;
  }
  return reduced;
}

// A reduction's running value per output element: as doubles and, for an
// integer input, as integers (doubles cannot tell 2^53 from 2^53 + 1).
struct Accumulator {
  Accumulator(const std::string& op, int64_t n)
      : acc(n, op == "ReduceProd" ? 1.0 : 0.0),
        iacc(n, op == "ReduceProd" ? 1 : 0),
        first(n, true) {}
  std::vector<double> acc;
  std::vector<int64_t> iacc;
  std::vector<bool> first;
};

// Folds element k of `data` into output element `at`; false on an integer
// overflow.
bool Fold(const std::string& op, const ShapeValue& data, int64_t k, int64_t at,
          Accumulator* a) {
  const double x = data.AsDouble(k);
  const int64_t xi = data.is_float() ? 0 : data.ints[k];
  if (op == "ReduceProd") {
    a->acc[at] *= x;
    if (!data.is_float() &&
        __builtin_mul_overflow(a->iacc[at], xi, &a->iacc[at]))
      return false;
  } else if (op == "ReduceSum" || op == "ReduceMean") {
    a->acc[at] += x;
    if (!data.is_float() &&
        __builtin_add_overflow(a->iacc[at], xi, &a->iacc[at]))
      return false;
  } else if (data.is_float()) {
    const bool take =
        a->first[at] || (op == "ReduceMin" ? x < a->acc[at] : x > a->acc[at]);
    if (take) a->acc[at] = x;
  } else {
    const bool take = a->first[at] ||
                      (op == "ReduceMin" ? xi < a->iacc[at] : xi > a->iacc[at]);
    if (take) a->iacc[at] = xi;
  }
  a->first[at] = false;
  return true;
}

}  // namespace

Outputs EvalReduce(const EvalCtx& c) {
  const ShapeValue* data = c.value(0);
  if (data == nullptr) return {};
  const std::string& op = c.node.op_type();
  bool unknown = false;
  const int axes_input_opset = op == "ReduceSum" ? 13 : 18;
  std::optional<std::vector<int64_t>> axes =
      Axes(c, axes_input_opset, 1, &unknown);
  if (unknown) return {};
  const int64_t rank = static_cast<int64_t>(data->dims.size());
  const bool keepdims = AttrInt(c.node, "keepdims", 1) != 0;
  if ((!axes || axes->empty()) &&
      AttrInt(c.node, "noop_with_empty_axes", 0) != 0) {
    return {*data};
  }
  const std::optional<std::vector<bool>> reduced = ReducedDims(axes, rank);
  if (!reduced) return {};
  std::vector<int64_t> kept_dims(rank), dims;
  for (int64_t i = 0; i < rank; ++i) {
    kept_dims[i] = (*reduced)[i] ? 1 : data->dims[i];
    if (!(*reduced)[i] || keepdims) dims.push_back(kept_dims[i]);
  }
  std::optional<ShapeValue> out = MakeValue(data->elem_type, kept_dims);
  if (!out) return {};
  const int64_t n = out->NumElements();
  if (n == 0) {  // nothing to reduce into: an empty result
    out->dims = std::move(dims);
    return {out};
  }
  // Elements reduced into each output element. 0 (a reduced 0 dim): the sum
  // is 0 and the product 1, but the min, max and mean of nothing are not
  // defined.
  const int64_t count = data->NumElements() / n;
  if (count == 0 && op != "ReduceSum" && op != "ReduceProd") return {};
  Accumulator a(op, n);
  const std::vector<int64_t> out_strides = Strides(kept_dims);
  std::vector<int64_t> counter(rank, 0);
  for (int64_t k = 0; k < data->NumElements(); ++k) {
    int64_t at = 0;
    for (int64_t i = 0; i < rank; ++i) {
      if (!(*reduced)[i]) at += counter[i] * out_strides[i];
    }
    if (!Fold(op, *data, k, at, &a)) return {};
    for (int64_t i = rank - 1; i >= 0; --i) {
      if (++counter[i] < data->dims[i]) break;
      counter[i] = 0;
    }
  }
  for (int64_t k = 0; k < n; ++k) {
    if (out->is_float()) {
      out->floats[k] = op == "ReduceMean" ? a.acc[k] / count : a.acc[k];
    } else {
      out->ints[k] = op == "ReduceMean" ? a.iacc[k] / count : a.iacc[k];
    }
  }
  Normalize(&*out);
  out->dims = std::move(dims);
  return {out};
}

}  // namespace autoshard::values_internal
