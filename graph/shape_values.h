// Exact values of small tensors (shape arithmetic), for the shape
// propagation pass (shape_propagation.h).
//
// Exporters compute many shapes inside the graph: `Shape -> Gather -> Mul ->
// Slice`, `Sub -> ConstantOfShape -> Concat -> Reshape`, `Range`, `Where`...
// ONNX 1.12's inference only reads initializers and a few propagated shapes,
// so it gives up on the tensors such chains feed. This file evaluates the ops
// exporters use for that arithmetic on small tensors (at most
// kMaxValueElements elements, never weights), exactly as the ONNX operator
// spec defines them: integer arithmetic on integer types, float32 rounding on
// FLOAT. An op it cannot evaluate (unknown input, unsupported op or
// attribute, division by zero, overflow, a result too large) gives no value;
// it never guesses.
#ifndef AUTOSHARD_GRAPH_SHAPE_VALUES_H_
#define AUTOSHARD_GRAPH_SHAPE_VALUES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "graph/shapes.h"
#include "onnx/onnx_pb.h"

namespace autoshard {

// Largest tensor, in elements, that is ever evaluated or held as a value. An
// empty tensor's non-zero dims are bounded by it too ([0, 5000] is not held).
inline constexpr int64_t kMaxValueElements = 4096;

// The value of a small tensor, row-major.
struct ShapeValue {
  int32_t elem_type = 0;  // onnx::TensorProto::DataType
  // All known; their product, and the product of the non-zero ones, are at
  // most kMaxValueElements.
  std::vector<int64_t> dims;
  // BOOL and integer types use `ints` (BOOL as 0/1), floating types `floats`;
  // the one in use holds NumElements() entries, the other is empty.
  std::vector<int64_t> ints;
  std::vector<double> floats;

  bool is_float() const { return IsFloatType(elem_type); }
  int64_t NumElements() const;
  // Element i as a double / as an int64 (floats truncated toward zero).
  double AsDouble(int64_t i) const {
    return is_float() ? floats[i] : static_cast<double>(ints[i]);
  }
  // The shape of this value as a TensorInfo.
  TensorInfo Info() const;

  // FLOAT, DOUBLE, FLOAT16, BFLOAT16.
  static bool IsFloatType(int32_t elem_type);
};

// The value stored in `t` (raw_data or the typed fields), or nullopt for
// external data, a missing or short payload, more than kMaxValueElements
// elements, or an element type other than BOOL, integers and floats.
std::optional<ShapeValue> ValueFromTensor(const onnx::TensorProto& t);

// `v` as a TensorProto with typed fields (int64_data, int32_data, ...), for
// ONNX's inference functions, which read constant inputs as TensorProtos.
// Not for FLOAT16/BFLOAT16 values (their fields hold bit patterns).
onnx::TensorProto ValueToTensor(const ShapeValue& v, const std::string& name);

// The value of a Constant node's attribute (value, value_int(s),
// value_float(s)), or nullopt.
std::optional<ShapeValue> ConstantNodeValue(const onnx::NodeProto& node);

// What EvaluateNode may read of one input: its value if known, else its
// shape (Shape and Size need only that). Either pointer may be null.
struct EvalInput {
  const ShapeValue* value = nullptr;
  const TensorInfo* info = nullptr;
};

// True when EvaluateNode knows `node`'s op type (default domain).
bool IsEvaluableOp(const onnx::NodeProto& node);

// Evaluates `node` (default domain; `opset` is the model's default-domain
// opset, which picks attribute or input forms of axes, starts, ...) on
// `inputs` (one per node.input(), an absent optional input has both
// pointers null; a value whose data does not match its dims counts as
// unknown). Returns one entry per node.output(): the value, or nullopt where
// it cannot be evaluated. Never crashes on any model or value: absurd
// attributes or values (huge steps or repeats, a 0 dim, a division by zero)
// give nullopt or the exact empty result. Ops: Constant, Identity, Shape, Size,
// Cast, Gather, Slice, Concat, Unsqueeze, Squeeze, Reshape, Flatten, Transpose,
// Range, ConstantOfShape, Expand, Tile, Where, NonZero, Split,
// Add/Sub/Mul/Div/Mod/Pow, Min/Max/Sum/Mean, Neg/Abs/Sign/Floor/Ceil/
// Round/Sqrt/Reciprocal/Relu, Equal/Less/Greater/LessOrEqual/
// GreaterOrEqual, Not/And/Or/Xor, ReduceProd/ReduceSum/ReduceMin/ReduceMax/
// ReduceMean.
std::vector<std::optional<ShapeValue>> EvaluateNode(
    const onnx::NodeProto& node, int64_t opset,
    absl::Span<const EvalInput> inputs);

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_SHAPE_VALUES_H_
