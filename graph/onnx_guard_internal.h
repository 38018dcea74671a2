// What the ONNX guard's files share (graph/onnx_guard.cc,
// onnx_guard_conv.cc, onnx_guard_functions.cc): node errors and the checks
// that live in a file of their own. Not a public header.
#ifndef AUTOSHARD_GRAPH_ONNX_GUARD_INTERNAL_H_
#define AUTOSHARD_GRAPH_ONNX_GUARD_INTERNAL_H_

#include <string>

#include "absl/status/status.h"
#include "onnx/onnx_pb.h"

namespace autoshard::guard_internal {

// "node 'NAME' (OP)".
std::string NodeLabel(const onnx::NodeProto& node);

// InvalidArgument "node 'NAME' (OP): why".
absl::Status NodeError(const onnx::NodeProto& node, const std::string& why);

// The attribute `name` of `node`, or null.
const onnx::AttributeProto* FindAttr(const onnx::NodeProto& node,
                                     const char* name);

// The ops whose inference is ONNX's convPoolShapeInference (or, for
// ConvTranspose, its own loop over the same attributes).
bool IsConvOrPool(const std::string& op);

// InvalidArgument naming the node and attribute when a conv or pool
// attribute is out of range or the attributes disagree on the spatial rank.
absl::Status CheckConvOrPool(const onnx::NodeProto& node);

// Refuses a function that calls itself, directly or through others, and
// call chains deeper than kMaxFunctionDepth (InvalidArgument naming them).
absl::Status CheckFunctionCalls(const onnx::ModelProto& model);

}  // namespace autoshard::guard_internal

#endif  // AUTOSHARD_GRAPH_ONNX_GUARD_INTERNAL_H_
