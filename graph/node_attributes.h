// A node's attributes by name: the one set of lookups graph/, costmodel/ and
// sharder/ share.
#ifndef AUTOSHARD_GRAPH_NODE_ATTRIBUTES_H_
#define AUTOSHARD_GRAPH_NODE_ATTRIBUTES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "onnx/onnx_pb.h"

namespace autoshard {

// The attribute `name` of `node` (the first one so named), or nullptr.
const onnx::AttributeProto* FindAttr(const onnx::NodeProto& node,
                                     std::string_view name);
// Its `i` field, or `dflt` when absent.
int64_t AttrInt(const onnx::NodeProto& node, std::string_view name,
                int64_t dflt);
// Its `ints` field; nullopt when absent.
std::optional<std::vector<int64_t>> AttrInts(const onnx::NodeProto& node,
                                             std::string_view name);
// Its `s` field, or `dflt` when absent.
std::string AttrString(const onnx::NodeProto& node, std::string_view name,
                       std::string_view dflt);

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_NODE_ATTRIBUTES_H_
