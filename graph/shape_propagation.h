// Shapes for every tensor: a pass after ONNX's shape inference that evaluates
// shape arithmetic and re-derives the shapes ONNX's inference gave up on.
//
// Note [Shape propagation]
// ONNX 1.12's InferShapes leaves a tensor without a static shape whenever the
// shape is computed in the graph (Shape -> Gather -> Mul -> Slice,
// ConstantOfShape -> Concat -> Reshape, Range, Where, Expand...), for every
// com.microsoft op, and for data-dependent outputs. PropagateShapes visits
// each graph in topological order (If/Loop/Scan bodies too, with the
// enclosing graph's tensors in scope) once, and for each node:
//  1. evaluates its outputs' values when the op is one of shape_values.h's
//     and its inputs' values are known (small tensors only: initializers and
//     Constant values are the sources; weights are never read), giving
//     exact shapes for them;
//  2. when an output still lacks a static shape, runs the op's ONNX
//     inference function again with the inputs' refined shapes and the known
//     values as constant inputs (so Reshape, Expand, Slice, Tile,
//     ConstantOfShape, Resize, Pad, Range, Split, TopK... see their computed
//     shape arguments);
//  3. then applies shape_rules.h by the op's entry in op_rules.h
//     (com.microsoft ops; data-dependent dims take
//     the bound the graph implies, else 1, reported as an assumption);
//  4. If: the branch its condition picks when the condition is known, else
//     per dim the larger branch (an assumption where they differ). Loop:
//     loop-carried values whose shape changes between iterations lose the
//     changing dims (the body is run again with them unknown); scan outputs
//     get the trip count M when it is a known constant (below 2^31), an
//     assumption unless the loop cannot stop early, else 1 (an assumption).
//     Scan: the scan axis length of its first scan input.
//  5. sequences are known by their elements' common shape and their length
//     (SequenceEmpty/Construct/Insert/Erase, SplitToSequence make them;
//     SequenceAt, SequenceLength, ConcatFromSequence read them); a sequence
//     a Loop grows by d elements a trip ends with trips x d more.
// A single topological sweep suffices: every node sees its inputs' final
// shapes and values, so ONNX's inference never has to be re-run on the whole
// graph. What stays unknown is left unknown (the cost model counts such dims
// as 1). Shapes recorded in the model's value_info are the starting point:
// a dim already known is never changed.
//
// Results are written back as value_info (main graph and bodies), where
// CollectTensorInfo reads them. The pass keeps no state between calls and is
// thread-safe on distinct models.
#ifndef AUTOSHARD_GRAPH_SHAPE_PROPAGATION_H_
#define AUTOSHARD_GRAPH_SHAPE_PROPAGATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "graph/shapes.h"
#include "onnx/onnx_pb.h"

namespace autoshard {

// One dim set to a bound rather than known exactly.
struct ShapeAssumption {
  // The node, as the path of node names from the main graph down
  // ("outer > inner"; a body node without a name is "<op type>#<index>").
  std::string node;
  std::string op_type;
  std::string tensor;  // the output whose dim was assumed
  int dim = 0;
  int64_t value = 0;
  std::string reason;  // e.g. "at most the input's 3234 elements"
};

struct ShapePropagationResult {
  // Tensors (all graphs) whose recorded type or shape the pass made more
  // complete.
  int64_t tensors_refined = 0;
  std::vector<ShapeAssumption> assumptions;  // in visiting order
};

// Runs the pass of Note [Shape propagation] on `model` (after
// InferShapes), writing what it finds into value_info. Never fails: a node
// whose inference throws keeps what was known of it.
ShapePropagationResult PropagateShapes(onnx::ModelProto* model);

// The same, for a caller that holds `tensors` = CollectTensorInfo of the
// main graph: updated in place (as CollectTensorInfo would read the updated
// graph, save that node outputs nothing is known of may have an empty
// entry), so the caller need not collect them again.
ShapePropagationResult PropagateShapes(onnx::ModelProto* model,
                                       TensorInfoMap* tensors);

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_SHAPE_PROPAGATION_H_
