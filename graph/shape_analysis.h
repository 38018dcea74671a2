// The shapes of a model's tensors, computed once per run: ONNX's shape
// inference, then autoshard's propagation pass (graph/shape_propagation.h),
// which evaluates shape arithmetic and gives data-dependent dims a bound.
// Planning (sharder/prepare.h) calls AnalyzeShapes once, after the input
// shapes are fixed; per-stage models type their interfaces with
// InferTensorTypes (graph/tensor_types.h), whose fallback rules give the
// element type and rank where both leave a tensor unknown. When planning's
// inputs are the model's own, AnalyzeShapes computes those interface types
// from its one ONNX inference too, so that a run infers once.
#ifndef AUTOSHARD_GRAPH_SHAPE_ANALYSIS_H_
#define AUTOSHARD_GRAPH_SHAPE_ANALYSIS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/shape_propagation.h"
#include "graph/shapes.h"
#include "graph/tensor_types.h"
#include "onnx/onnx_pb.h"

namespace autoshard {

// What Debian 12's ONNX 1.12 knows (DESIGN.md §8).
inline constexpr int64_t kNewestKnownOpset = 17;
inline constexpr int64_t kNewestKnownIrVersion = 8;

// A copy of `model` for shape inference: every field it needs, with the data
// of initializers of more than 1024 elements left out (dims and type kept).
std::unique_ptr<onnx::ModelProto> CopyWithoutLargeWeights(
    const onnx::ModelProto& model);

struct ModelShapes {
  TensorInfoMap tensors;  // every main-graph tensor's shape, as known
  // Data-dependent dims set to a bound (Note [Data-dependent dims]).
  std::vector<ShapeAssumption> assumptions;
  // ONNX's inference failing (the file's shapes are used then) and negative
  // inferred dims, in that order, for the plan's warnings.
  std::vector<std::string> warnings;
  // What InferTensorTypes(model, *interface_graph) would return, from the
  // same inference, when AnalyzeShapes was given interface_graph and ONNX's
  // inference succeeded (else empty: InferTensorTypes retries without the
  // node it fails on, which planning does not).
  std::optional<InterfaceTypes> interface_types;
};

// Runs ONNX's shape inference on `model` (writing its value_info), then the
// propagation pass. `hint` ends the negative-dims warning (e.g. which
// options would fix the inputs). `interface_graph`, when not null, is the
// DAG of `model`'s graph: the per-stage interface types are computed too.
// Never fails: what stays unknown is unknown.
ModelShapes AnalyzeShapes(onnx::ModelProto* model, const std::string& hint,
                          const Graph* interface_graph = nullptr);

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_SHAPE_ANALYSIS_H_
