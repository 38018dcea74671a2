// The shapes of a model's tensors, computed once per run: ONNX's shape
// inference, then autoshard's propagation pass (graph/shape_propagation.h),
// which evaluates shape arithmetic and gives data-dependent dims a bound.
// Planning (sharder/prepare.h) calls AnalyzeShapes once, after the input
// shapes are fixed; per-stage models type their interfaces with
// InferTensorTypes (graph/tensor_types.h), whose fallback rules give the
// element type and rank where both leave a tensor unknown. AnalyzeShapes
// computes those interface types from the run's one whole-model ONNX
// inference too: on planning's inputs when they are the model's own; when
// planning fixed free input dims, on the model as declared (the interfaces
// keep `batch`), from which planning's fixed shapes are derived node by node
// (graph/fixed_shapes.h) instead of a second inference.
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
// Note [A stripped weight is marked external]: each initializer left out is
// marked data_location EXTERNAL (no external_data entries): its values are
// elsewhere, in the file. The guard (CheckModelForOnnx) then does not judge
// the copy's missing values as the file's (the false "stores 0 values"
// warning of issue 25 on GPT-2's wte.weight, which switched ONNX's inference
// off), and ONNX 1.12 refuses to read an external tensor ("Cannot parse data
// from external tensors": that node is left uninferred, in error mode 0)
// instead of reading past an empty one. What the file holds is checked by
// CheckModelForOnnx on the model as loaded (Prepare), before the copy.
// Never write the copy to disk: it names no data file.
std::unique_ptr<onnx::ModelProto> CopyWithoutLargeWeights(
    const onnx::ModelProto& model);

struct ModelShapes {
  TensorInfoMap tensors;  // every main-graph tensor's shape, as known
  // Data-dependent dims set to a bound (Note [Data-dependent dims]).
  std::vector<ShapeAssumption> assumptions;
  // ONNX's inference failing (the file's shapes are used then) and negative
  // inferred dims, in that order, for the plan's warnings.
  std::vector<std::string> warnings;
  // What InferTensorTypes(model as declared, *interface_graph) would return,
  // from the same inference, when AnalyzeShapes was given interface_graph
  // and either no `declared` and ONNX's inference succeeded, or `declared`
  // and ONNX's inference on it threw (with InferTensorTypes's retries
  // without the failing node); else empty (see declared_inferred).
  std::optional<InterfaceTypes> interface_types;
  // True when `declared`'s inference succeeded: then InterfaceTypesOf(
  // *declared, declared_recorded, *interface_graph) are the interface types
  // (computed when a split asks, not by planning).
  bool declared_inferred = false;
  TypeMap declared_recorded;  // RecordedTypes(*declared) before its inference
};

// The per-stage interface types from `inferred`, a model after ONNX's
// inference, and `recorded`, RecordedTypes of it before that inference.
// `graph` is built from its graph (or one with the same nodes).
InterfaceTypes InterfaceTypesOf(const onnx::ModelProto& inferred,
                                const TypeMap& recorded, const Graph& graph);

// Gives `model` (planning's copy, its input dims fixed) the value_info
// ONNX's shape inference writes, then runs the propagation pass. `hint` ends
// the negative-dims warning (e.g. which options would fix the inputs).
// `interface_graph`, when not null, is the DAG of `model`'s graph: the
// per-stage interface types are computed too, from `model`'s inference when
// `declared` is null (its inputs are the model's own), else from `declared`:
// `model` before its free input dims were fixed (same nodes, value_info and
// outputs), which is inferred in place, and `model`'s shapes are derived
// from that inference (graph/fixed_shapes.h) instead of a second one; when
// that cannot be done, `model` is inferred too. Never fails: what stays
// unknown is unknown.
ModelShapes AnalyzeShapes(onnx::ModelProto* model, const std::string& hint,
                          const Graph* interface_graph = nullptr,
                          onnx::ModelProto* declared = nullptr);

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_SHAPE_ANALYSIS_H_
