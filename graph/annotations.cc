#include "graph/annotations.h"

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

}  // namespace autoshard
