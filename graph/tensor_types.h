// Types of a model's main-graph tensors, for the inputs and outputs of
// per-stage sub-models (writers/split/split.h).
//
// The ONNX checker requires every input and output of a model to have an
// element type and a shape (its rank; dims may be unknown). ONNX 1.12's shape
// inference leaves many real tensors without them: ops of other domains
// (com.microsoft, and most of ai.onnx.ml), and default-domain ops whose
// shapes are computed in the graph (Reshape, Slice, Expand... after Shape
// arithmetic); once one tensor is unknown, everything after it is too. So
// after ONNX's inference, per-op rules here give each remaining output its
// element type and rank from its inputs' (dims stay unknown): e.g. Slice and
// Transpose keep their input's rank, Add broadcasts to the largest rank,
// Reshape has as many dims as its shape input has elements, Gather has
// rank(data) + rank(indices) - 1, com.microsoft Attention returns a rank-3
// tensor of its input's type. A rule never guesses: an op without a rule, or
// whose rule needs what is unknown (a Squeeze without known axes), leaves its
// outputs as they are.
#ifndef AUTOSHARD_GRAPH_TENSOR_TYPES_H_
#define AUTOSHARD_GRAPH_TENSOR_TYPES_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "graph/graph.h"
#include "onnx/onnx_pb.h"

namespace autoshard {

using TypeMap = absl::flat_hash_map<std::string, onnx::TypeProto>;

// True when `type` is enough for a main-graph input or output under the ONNX
// checker: a tensor with an element type and a shape, or a sequence, map or
// optional whose element is such a type.
bool IsCompleteType(const onnx::TypeProto& type);

// The type of every main-graph tensor that `model`'s records (inputs, outputs,
// value_info), ONNX's shape inference (with data propagation) and then the
// rules above can tell. Initializers are not included. When ONNX's inference
// throws on a node (ONNX 1.12 does on ZipMap's map output), that node is left
// out of inference and it runs again; `warnings` says so.
TypeMap InferTensorTypes(const onnx::ModelProto& model, const Graph& graph,
                         std::vector<std::string>* warnings);

// What InferTensorTypes returns, with its warnings.
struct InterfaceTypes {
  TypeMap types;
  std::vector<std::string> warnings;
};

// InferTensorTypes when the caller ran ONNX's inference on
// CopyWithoutLargeWeights(model) (graph/shape_analysis.h) and it failed with
// `first`: the retries without the failing node, not that first inference.
InterfaceTypes InferTensorTypesAfterFailure(const onnx::ModelProto& model,
                                            const Graph& graph,
                                            const absl::Status& first);

// InferTensorTypes in two steps, for a caller that runs ONNX's inference
// itself (planning, graph/shape_analysis.h: one inference a run).
// RecordedTypes, before the inference: what `model` records, kept only when
// its opset is newer than ONNX 1.12 knows (else empty). TypesAfterInference:
// the types `inferred` (the model's graph after ONNX's inference) holds,
// with the rules applied; `twin[id]` is node id of `inferred` (its bodies
// typed), or null. `graph` is built from `model`'s graph.
TypeMap RecordedTypes(const onnx::ModelProto& model);
InterfaceTypes TypesAfterInference(const onnx::ModelProto& model,
                                   const TypeMap& recorded,
                                   const onnx::GraphProto& inferred,
                                   const Graph& graph,
                                   std::vector<const onnx::NodeProto*> twin);

// The rules alone (graph/type_rules.cc, by each op's line in the one
// fallback table, graph/op_rules.h): in topological order, gives
// the outputs of `graph`'s nodes that `types` does not have complete an
// element type and rank where a rule applies. `graph` must be built from
// `graph_proto` (for constant axes). `inferred[id]`, when given and not null,
// is node id as ONNX's inference left it: If/Loop bodies are typed from its
// bodies, which hold the inferred value_info.
void ApplyTypeRules(const onnx::GraphProto& graph_proto, const Graph& graph,
                    TypeMap* types,
                    const std::vector<const onnx::NodeProto*>& inferred = {});

// "float32", "int64", "sequence(float32)", ... (proto/split.proto).
std::string TypeName(const onnx::TypeProto& type);

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_TENSOR_TYPES_H_
