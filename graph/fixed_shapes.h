// Planning's shapes without a second whole-model ONNX inference (issue 12).
//
// A run needs two sets of shapes from one model: the per-stage interfaces
// keep the model's symbolic dims (`batch`), so they come from ONNX's
// inference on the model as declared; planning costs the model with those
// dims fixed (1, or --batch-size / --input-shape / --dim). Note [Fixing the
// declared inference]: InferFixedShapes derives the second from the first.
// It walks the fixed model's nodes in file order, as ONNX's InferShapes does
// (onnx/shape_inference/implementation.cc, ShapeInferenceImplBase), keeping
// the same value-type, input-data and propagated-data tables. A node whose
// declared outputs, with every fixed symbol replaced by its value, are fully
// known (every dim a value, and so is the propagated data) and none of whose
// inputs changed takes those substituted types as they are; any other node
// (an output with an unknown dim or rank, a dim no input symbol explains, a
// data-propagating node whose data appears only with values, a node with
// subgraphs) runs ONNX's own inference and data-propagation functions for
// that node on the fixed types (InferenceContextImpl /
// DataPropagationContextImpl), merged into value_info exactly as ONNX merges
// (mergeShapesAndTypes, unknown dims materialized as "unk__N"). When such a
// node's outputs differ from the substituted declared ones, its readers run
// again too.
#ifndef AUTOSHARD_GRAPH_FIXED_SHAPES_H_
#define AUTOSHARD_GRAPH_FIXED_SHAPES_H_

#include <cstdint>

#include "absl/status/status.h"
#include "graph/shapes.h"
#include "onnx/onnx_pb.h"

namespace autoshard {

// `declared`: the model as declared after InferShapes succeeded on it (so it
// passed CheckModelForOnnx), `declared_data` that inference's propagated
// values. `fixed`: the same model with its main-graph
// inputs' dims fixed, before any inference: the same nodes, initializers,
// value_info and outputs as `declared` had before its inference, and inputs
// of the same names, types and ranks whose every static dim is as declared.
// Writes into `fixed` what InferShapes(fixed) would (value_info, untyped
// outputs, If/Loop bodies), counting each node inferred on its own in
// ThreadStepCounts().node_reinferences. Equal to InferShapes(fixed) on the
// corpus and the tests; not when the fixed dims contradict an op's rule at
// a node that has no recorded output type: Add(float[batch], float[5]) at
// batch 3 keeps the declared [5], where InferShapes leaves it unknown
// (found by review; such a batch size cannot run either way). Errors, after
// which `fixed` is as given (the caller runs InferShapes on it instead):
// FailedPrecondition when the inputs do not match as above (an option
// replaced a static dim); InvalidArgument when ONNX's inference on `fixed`
// would throw (a node's inferred type conflicts with its recorded one, as
// concrete dims can show).
absl::Status InferFixedShapes(const onnx::ModelProto& declared,
                              const ShapeDataMap& declared_data,
                              onnx::ModelProto* fixed);

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_FIXED_SHAPES_H_
