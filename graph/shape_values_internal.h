// Internals shared by shape_values.cc (values, conversions, the op table),
// shape_values_elementwise.cc (element-wise ops) and shape_values_ops.cc
// (shape and data-movement ops). Not part of the interface.
#ifndef AUTOSHARD_GRAPH_SHAPE_VALUES_INTERNAL_H_
#define AUTOSHARD_GRAPH_SHAPE_VALUES_INTERNAL_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/types/span.h"
#include "graph/node_attributes.h"
#include "graph/shape_values.h"
#include "onnx/onnx_pb.h"

namespace autoshard::values_internal {

using Outputs = std::vector<std::optional<ShapeValue>>;

// One node being evaluated.
struct EvalCtx {
  const onnx::NodeProto& node;
  int64_t opset;
  absl::Span<const EvalInput> inputs;

  // The value of input i, or nullptr (absent input or unknown value).
  const ShapeValue* value(int i) const {
    return i < static_cast<int>(inputs.size()) ? inputs[i].value : nullptr;
  }
  // True when input i is named (present) in the node.
  bool has_input(int i) const {
    return i < node.input_size() && !node.input(i).empty();
  }
};

// Attribute lookups: graph/node_attributes.h.
using ::autoshard::AttrInt;
using ::autoshard::AttrInts;
using ::autoshard::FindAttr;

// Product of `dims`, or -1 when a dim is negative or the product of the
// non-zero dims exceeds kMaxValueElements (so a tensor a 0 dim makes empty
// cannot have other dims whose products overflow).
int64_t NumElementsCapped(absl::Span<const int64_t> dims);

// True when `v`'s dims pass NumElementsCapped and the data `v` uses (ints or
// floats, the other empty) holds exactly that many elements. Every value
// EvaluateNode reads or returns is well formed.
bool WellFormed(const ShapeValue& v);

// A value of `elem_type` and `dims` with zeroed data, or nullopt when it
// would exceed kMaxValueElements.
std::optional<ShapeValue> MakeValue(int32_t elem_type,
                                    std::vector<int64_t> dims);

// `x` truncated toward zero, or nullopt when that is NaN or outside int64
// (2^63 itself is outside).
std::optional<int64_t> TruncToInt64(double x);

// Rounds or wraps every element to what `elem_type` can hold (FLOAT to
// float32, INT32 wraps, BOOL to 0/1, ...).
void Normalize(ShapeValue* v);

// Copies element `from_index` of `from` to element `to_index` of `to` (same
// element kind).
inline void CopyElement(const ShapeValue& from, int64_t from_index,
                        ShapeValue* to, int64_t to_index) {
  if (from.is_float()) {
    to->floats[to_index] = from.floats[from_index];
  } else {
    to->ints[to_index] = from.ints[from_index];
  }
}

// Row-major strides of `dims`.
std::vector<int64_t> Strides(absl::Span<const int64_t> dims);

// Numpy broadcast of two shapes, or nullopt when they do not broadcast.
std::optional<std::vector<int64_t>> BroadcastDims(absl::Span<const int64_t> a,
                                                  absl::Span<const int64_t> b);

// For each element of a tensor of shape `out` (row-major), the index of the
// element of a tensor of shape `in` (which broadcasts to `out`) it reads.
std::vector<int64_t> BroadcastIndices(absl::Span<const int64_t> in,
                                      absl::Span<const int64_t> out);

// An axis in [-rank, rank) made non-negative, or -1 when out of range.
int64_t NormalizeAxis(int64_t axis, int64_t rank);

// Values of a 1-D (or scalar) integer input as a vector, or nullopt.
std::optional<std::vector<int64_t>> IntList(const ShapeValue* v);

// Element-wise ops (shape_values_elementwise.cc): Add ... Xor and the
// variadic Min/Max/Sum/Mean; Neg ... Not; Cast; Identity; Constant; Where.
Outputs EvalBinary(const EvalCtx& c);
Outputs EvalUnary(const EvalCtx& c);
Outputs EvalCast(const EvalCtx& c);
Outputs EvalIdentity(const EvalCtx& c);
Outputs EvalConstant(const EvalCtx& c);
Outputs EvalWhere(const EvalCtx& c);

// Shape and data-movement ops (shape_values_ops.cc).
Outputs EvalShape(const EvalCtx& c);
Outputs EvalSize(const EvalCtx& c);
Outputs EvalGather(const EvalCtx& c);
Outputs EvalSlice(const EvalCtx& c);
Outputs EvalConcat(const EvalCtx& c);
Outputs EvalUnsqueeze(const EvalCtx& c);
Outputs EvalSqueeze(const EvalCtx& c);
Outputs EvalReshape(const EvalCtx& c);
Outputs EvalFlatten(const EvalCtx& c);
Outputs EvalTranspose(const EvalCtx& c);
Outputs EvalRange(const EvalCtx& c);
Outputs EvalConstantOfShape(const EvalCtx& c);
Outputs EvalExpand(const EvalCtx& c);
Outputs EvalTile(const EvalCtx& c);
Outputs EvalNonZero(const EvalCtx& c);
Outputs EvalSplit(const EvalCtx& c);

// The axes of an op that takes them as an attribute before `input_opset`
// and as input `input_index` from then on; nullopt when absent or unknown
// (`*unknown` tells which). In shape_values_ops.cc.
std::optional<std::vector<int64_t>> Axes(const EvalCtx& c, int input_opset,
                                         int input_index, bool* unknown);

// The reductions (shape_values_reduce.cc).
Outputs EvalReduce(const EvalCtx& c);

}  // namespace autoshard::values_internal

#endif  // AUTOSHARD_GRAPH_SHAPE_VALUES_INTERNAL_H_
