// Tensor shapes and element types of a model: input-shape overrides, ONNX
// shape inference, and a name -> TensorInfo table the cost model reads.
#ifndef AUTOSHARD_GRAPH_SHAPES_H_
#define AUTOSHARD_GRAPH_SHAPES_H_

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/saturating.h"  // SaturatingMul, SaturatingAdd
#include "graph/shape_options.h"
#include "onnx/defs/shape_inference.h"
#include "onnx/onnx_pb.h"

namespace autoshard {

// What is known of one tensor. `dims[i] == -1` is an unknown or symbolic dim.
struct TensorInfo {
  int32_t elem_type = 0;      // onnx::TensorProto::DataType; 0 = unknown
  bool rank_known = false;    // false: `dims` is empty and the rank unknown
  std::vector<int64_t> dims;  // shape; -1 for unknown/symbolic dims
  // True for a sequence, map or optional value (no tensor shape to know).
  bool non_tensor = false;

  // True when the rank and every dim are known.
  bool IsStatic() const;
  // Number of elements, counting unknown dims as 1 (DESIGN.md §3.1),
  // saturating at INT64_MAX.
  int64_t NumElementsOr1() const;
};

using TensorInfoMap = absl::flat_hash_map<std::string, TensorInfo>;

// Size in bytes of one element of an ONNX data type (0 for STRING/UNDEFINED;
// 1 for BOOL and 8-bit types; sub-byte types round up to 1).
int64_t ElementSizeBytes(int32_t elem_type);

// What ApplyInputShapes changed.
struct InputShapeChanges {
  int batched = 0;  // inputs whose first dim --batch-size set
  // Static dims of the model that the options replaced, in input order,
  // "input[0] 1 -> 8". When any is, the shapes the file records for other
  // tensors (value_info, graph outputs) are dropped: they follow the old
  // inputs, and inference computes them again.
  std::vector<std::string> overridden;
  // Inputs without a batch axis (graph/batch_axis.h), each with the node
  // that adds one: --batch-size leaves them as they are, and they count one
  // sample per run.
  std::map<std::string, std::string> without_batch_axis;
};

// Rewrites the main graph's input types per `options`. A symbolic dim that
// shares its name with a dim the options fixed takes the same value
// (`past[1] 'batch'` follows `ids[0] 'batch'` set by --batch-size), unless
// the options gave that name two values. --input-shape may replace static
// dims; --batch-size sets symbolic first dims, or, when no input has one,
// the model's static batch: the first dim of every input of rank >= 2 whose
// first dim equals that of the first such input. Errors (InvalidArgument,
// naming the input): an unknown input, a rank that differs from the
// model's, a non-positive dim, a --dim name no input has; --batch-size
// above 1 when the only inputs it would set have no batch axis ("input
// 'image' [3,h,w] has no batch axis: the graph adds one at node 'U'").
// Inputs without a batch axis are never set by --batch-size.
absl::StatusOr<InputShapeChanges> ApplyInputShapes(const ShapeOptions& options,
                                                   onnx::ModelProto* model);

// The values ONNX's data propagation computes for small integer tensors
// (Shape's output and the arithmetic on it), by tensor name: one dim per
// element, a dim_param where the value is a symbol, neither where unknown.
using ShapeDataMap = std::unordered_map<std::string, onnx::TensorShapeProto>;

// The options InferShapes runs ONNX's inference with: no type check, past
// the nodes it cannot infer, with data propagation.
onnx::ShapeInferenceOptions InferenceOptions();

// Runs ONNX's shape inference (with data propagation) on `model` in place.
// ONNX exceptions become InvalidArgument naming the node where ONNX says.
// A model whose IR version or opsets are newer than the library knows is
// inferred as far as the library can; the caller reports what stays unknown.
// `data`, when not null, receives the propagated values.
absl::Status InferShapes(onnx::ModelProto* model, ShapeDataMap* data = nullptr);

// The TensorInfo of `type` (non_tensor for sequence, map and optional types).
TensorInfo TensorInfoFromType(const onnx::TypeProto& type);

// Writes `info` (a tensor's) into `type`: the element type when known, and
// the shape when the rank is known. A dim `info` does not know keeps what
// `type` had at that position (e.g. a dim_param) when the rank is the same.
void SetTensorType(const TensorInfo& info, onnx::TypeProto* type);

// Collects the types and shapes recorded for every tensor name of `graph`
// (inputs, outputs, value_info, initializers, Constant outputs). Bodies of
// If/Loop/Scan nodes are not descended into.
TensorInfoMap CollectTensorInfo(const onnx::GraphProto& graph);

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_SHAPES_H_
