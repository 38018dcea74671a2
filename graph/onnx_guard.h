// Checks a model for what ONNX 1.12's own shape inference trusts without
// checking, before autoshard calls it.
//
// Note [What ONNX 1.12's shape inference trusts]: its inference functions
// divide by `strides` and `split` values (convPoolShapeInference,
// SplitToSequence: SIGFPE on a 0), index `pads`/`strides`/`dilations` by the
// kernel's rank (out of bounds when the sizes disagree), loop over a SAME
// padding's residual one stride at a time (a hang on a huge dim), recurse
// into model-local functions with no cycle check (InferShapeForFunctionNode:
// a stack overflow on a function that calls itself) and into If/Loop/Scan
// bodies with no depth bound, and compute with dims as they are (RAFT with a
// 2^31 input dim crashes in data propagation at a Shape node), and Shape-15's
// data propagation reads its input's type with no null check (a SIGSEGV on a
// name nothing typed before it; see onnx_guard.cc). Each of those
// is checked here and refused with an error naming the node; everything else
// is left to ONNX, which reports it as an exception (caught by the callers).
#ifndef AUTOSHARD_GRAPH_ONNX_GUARD_H_
#define AUTOSHARD_GRAPH_ONNX_GUARD_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "onnx/onnx_pb.h"

namespace autoshard {

// The largest dim autoshard accepts (declared, inferred or from
// --input-shape): 2^31 - 1. Larger dims crash ONNX 1.12's data propagation
// (int32 arithmetic inside), and no accelerator tensor has one.
inline constexpr int64_t kMaxDim = (int64_t{1} << 31) - 1;
// The largest number of elements of one declared tensor, 2^48 (256 Ti
// elements): its bytes (at most 16 per element) then fit in int64 with room
// for sums over a whole graph.
inline constexpr int64_t kMaxElements = int64_t{1} << 48;
// The largest tensor rank and the largest |axis| an attribute may name.
inline constexpr int kMaxRank = 64;
// How deep If/Loop/Scan bodies (and attribute graphs) may nest, counting the
// main graph as 1. Every recursion of autoshard over bodies is bounded by
// this (the walks below are iterative).
inline constexpr int kMaxGraphNesting = 100;
// How deep model-local functions may call one another.
inline constexpr int kMaxFunctionDepth = 64;
// The most nodes a model may have, in all its graphs: 500,000 (5x the
// largest model in bench/, a 100k-node Llama-style file). A 1,000,000-node
// chain took 3.5 minutes and 2.5 GB to plan with the raw strategy.
inline constexpr int64_t kMaxNodes = 500000;

// The constant value of a node's input `i`, or null when it is not known.
using ConstantInput = std::function<const onnx::TensorProto*(int i)>;

// Checks `model`: it has at most kMaxNodes nodes; every graph (main graph,
// bodies, function bodies) nests at most kMaxGraphNesting deep; every declared
// shape (inputs, outputs, value_info, initializers, Constant values) has rank
// <= kMaxRank, dims in [0, kMaxDim] and at most kMaxElements elements;
// model-local functions do not call themselves (directly or through others) and
// nest at most kMaxFunctionDepth deep; every default-domain node has at least
// the inputs and outputs its schema (at the model's or function's opset)
// requires; every Shape-15 node of the main graph or a function reads a name
// defined before it (in a function: a function input); and every node passes
// CheckNodeForOnnx, with the initializers and Constant nodes of its graph as
// its constant inputs.
// Errors: InvalidArgument naming the node (and the body it is in) or tensor,
// and the reason.
absl::Status CheckModelForOnnx(const onnx::ModelProto& model);

// Checks one node's attributes (and the constant inputs it divides by) that
// ONNX 1.12 trusts: Conv/ConvTranspose/pooling `strides`, `dilations` and
// `kernel_shape` > 0, `pads` >= 0, their sizes agreeing (pads twice the
// others), `group` > 0; Split/SplitToSequence `split` values >= 0 and a
// scalar split > 0; `axis`/`axes` within +-kMaxRank. `constant` may be null.
// Errors: InvalidArgument "node 'NAME' (OP): REASON".
absl::Status CheckNodeForOnnx(const onnx::NodeProto& node,
                              const ConstantInput& constant);

// Gives every main-graph tensor a Shape-15 node reads, and that no typed
// graph input, output, value_info or initializer declares, an empty type in
// value_info (Note [Shape-15 reads its input's type unchecked] in
// onnx_guard.cc): ONNX 1.12's Shape-15 data propagation dereferences the
// type of its input, null when the producer's inference fails. Returns the
// names given one, for RemoveEmptyShapeInputTypes after the inference.
std::vector<std::string> AddShapeInputTypes(onnx::ModelProto* model);

// Removes the value_info entries of `names` (from AddShapeInputTypes) that
// are still empty: ONNX inferred no type for them.
void RemoveEmptyShapeInputTypes(onnx::ModelProto* model,
                                const std::vector<std::string>& names);

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_ONNX_GUARD_H_
