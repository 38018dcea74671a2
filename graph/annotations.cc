#include "graph/annotations.h"

#include <cstdint>

#include "absl/strings/str_cat.h"

namespace autoshard {
namespace {

void SetIntAttribute(const char* name, int value, onnx::NodeProto* node) {
  for (auto& attr : *node->mutable_attribute()) {
    if (attr.name() == name) {
      attr.Clear();
      attr.set_name(name);
      attr.set_type(onnx::AttributeProto::INT);
      attr.set_i(value);
      return;
    }
  }
  onnx::AttributeProto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(value);
}

}  // namespace

void SetPlacement(int ipu, int pipeline_stage, onnx::NodeProto* node) {
  SetIntAttribute(kIpuAttribute, ipu, node);
  SetIntAttribute(kStageAttribute, pipeline_stage, node);
}

std::string NodeLabel(const onnx::NodeProto& node, int index) {
  return node.name().empty()
             ? absl::StrCat("#", index, " (", node.op_type(), ")")
             : absl::StrCat("'", node.name(), "' (", node.op_type(), ")");
}

absl::StatusOr<int> PlacementAttr(const onnx::NodeProto& node, int index,
                                  const char* attribute) {
  for (const auto& attr : node.attribute()) {
    if (attr.name() != attribute) continue;
    if (attr.type() != onnx::AttributeProto::INT) {
      return absl::InvalidArgumentError(
          absl::StrCat("node ", NodeLabel(node, index), ": ", attribute,
                       " is not an INT attribute"));
    }
    if (attr.i() < 0 || attr.i() > INT32_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat("node ", NodeLabel(node, index), ": ", attribute, " ",
                       attr.i(), " is not an integer from 0 to 2^31-1"));
    }
    return static_cast<int>(attr.i());
  }
  return -1;
}

}  // namespace autoshard
