#include "graph/node_attributes.h"

namespace autoshard {

const onnx::AttributeProto* FindAttr(const onnx::NodeProto& node,
                                     std::string_view name) {
  for (const auto& attr : node.attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

int64_t AttrInt(const onnx::NodeProto& node, std::string_view name,
                int64_t dflt) {
  const onnx::AttributeProto* attr = FindAttr(node, name);
  return attr != nullptr ? attr->i() : dflt;
}

std::optional<std::vector<int64_t>> AttrInts(const onnx::NodeProto& node,
                                             std::string_view name) {
  const onnx::AttributeProto* attr = FindAttr(node, name);
  if (attr == nullptr) return std::nullopt;
  return std::vector<int64_t>(attr->ints().begin(), attr->ints().end());
}

std::string AttrString(const onnx::NodeProto& node, std::string_view name,
                       std::string_view dflt) {
  const onnx::AttributeProto* attr = FindAttr(node, name);
  return attr != nullptr ? attr->s() : std::string(dflt);
}

}  // namespace autoshard
