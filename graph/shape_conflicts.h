// Constants of a graph that contradict its input shapes. Most exported
// models have a static batch of 1, and many hard-code it again inside the
// graph (`Reshape(x, [1, 1280])`); once --batch-size or --input-shape
// replaces a static input dim, such a node cannot run, and PopRT's converter
// fails on it. autoshard names the node instead of planning a model that
// does not exist (issue 16, point 3).
#ifndef AUTOSHARD_GRAPH_SHAPE_CONFLICTS_H_
#define AUTOSHARD_GRAPH_SHAPE_CONFLICTS_H_

#include "absl/status/status.h"
#include "graph/shapes.h"
#include "onnx/onnx_pb.h"

namespace autoshard {

// Checks every main-graph Reshape whose shape input is a constant (an
// initializer or a Constant node's output) and whose data input has a static
// shape in `tensors`: the constant's element count (0 copies the input's dim
// unless allowzero = 1; one -1 is inferred) must match the input's. The first
// that does not is InvalidArgument in one line naming the node, its
// constant and both shapes, e.g. "node 'r' (Reshape) hard-codes the shape
// [1,1280] (constant 'c'), which contradicts its input 'x' [8,1280] (10240
// elements)". ONNX's Reshape spec gives the rules.
absl::Status CheckReshapeConstants(const onnx::GraphProto& graph,
                                   const TensorInfoMap& tensors);

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_SHAPE_CONFLICTS_H_
