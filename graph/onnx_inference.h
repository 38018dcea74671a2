// The one driver of ONNX's shape inference (issue 25, point 6). Every call
// autoshard makes into ONNX's inference goes through here: a whole model
// (RunOnnxInference: planning's shapes, the dim-conflict check of
// graph/dim_conflicts.h, the split folder's strict check of each stage) or a
// single node (InferNodeWithOnnx: the shape propagation pass of
// graph/shape_propagation.h and the fixed-dims inference of
// graph/fixed_shapes.h). What ONNX 1.12 leaves unknown is then derived by
// the one fallback table, graph/op_rules.h; a dim the options make that an
// op cannot take is refused in one place, graph/dim_conflicts.h.
#ifndef AUTOSHARD_GRAPH_ONNX_INFERENCE_H_
#define AUTOSHARD_GRAPH_ONNX_INFERENCE_H_

#include <string>

#include "absl/status/statusor.h"
#include "graph/shapes.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

namespace autoshard {

// Why a whole model is inferred; each sets ONNX's options and the counter
// of ThreadStepCounts() the run is counted in.
enum class InferencePurpose {
  // Planning's shapes (InferShapes, graph/shapes.h): no type check, past the
  // nodes ONNX cannot infer (error_mode 0), data propagation, Shape inputs
  // typed (Note [Shape-15 reads its input's type unchecked]). Counted in
  // onnx_inferences.
  kShapes,
  // The same in error mode (error_mode 1): ONNX gathers every node's error
  // into the exception (CheckOptionDims). Counted in dim_checks.
  kDimCheck,
  // A stage model as onnxruntime would load it: type check, error mode, no
  // data propagation, no placeholders. Counted in stage_inferences.
  kStageCheck,
};

// The ONNX options `purpose` runs with.
onnx::ShapeInferenceOptions InferenceOptionsFor(InferencePurpose purpose);

// Runs ONNX's whole-model inference on `model` in place, after
// CheckModelForOnnx (graph/onnx_guard.h). Counts the run (before the guard)
// in the counter `purpose` names. Returns the guard's error when it refuses
// the model (ONNX is not run); else ONNX's exception text (what() of what it
// threw, the model left as ONNX left it), empty when inference completed.
// `data`, when not null, receives the propagated values.
absl::StatusOr<std::string> RunOnnxInference(onnx::ModelProto* model,
                                             InferencePurpose purpose,
                                             ShapeDataMap* data = nullptr);

// What a node's ONNX inference may fall back on when its schema has no
// inference function but a function body (ShapeInferenceImplBase::process
// of ONNX 1.12). Null members: no such fallback.
struct NodeFunctionContext {
  const onnx::shape_inference::ModelLocalFunctionsMap* functions = nullptr;
  const onnx::ShapeInferenceOptions* options = nullptr;
  onnx::SymbolTable* symbol_table = nullptr;
  ShapeDataMap* data = nullptr;
};

// Runs `node`'s ONNX inference function (`schema`'s, or, with `functions`,
// its function body's: the schema's or a model-local one) on `ctx`.
// Returns false when ONNX has none (ctx untouched). ONNX's exceptions pass
// through. Counted in ThreadStepCounts().node_inferences.
bool InferNodeWithOnnx(const onnx::OpSchema* schema,
                       const onnx::NodeProto& node,
                       onnx::shape_inference::InferenceContextImpl& ctx,
                       const NodeFunctionContext& functions = {});

// Runs `schema`'s data-propagation function (Shape's value, the arithmetic
// on it) on `ctx` when it has one; false when not. ONNX's exceptions pass
// through.
bool PropagateNodeDataWithOnnx(
    const onnx::OpSchema* schema,
    onnx::shape_inference::DataPropagationContextImpl& ctx);

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_ONNX_INFERENCE_H_
