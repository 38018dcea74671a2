// A small in-memory ONNX graph builder for the calibration models
// (tests/calibration_models.h): nodes with generated unique names, external
// float weights given by dims only, int64 shape constants.
#ifndef AUTOSHARD_TESTS_GRAPH_BUILDER_H_
#define AUTOSHARD_TESTS_GRAPH_BUILDER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "onnx/onnx_pb.h"

namespace autoshard::testing {

class GraphBuilder {
 public:
  explicit GraphBuilder(const std::string& name) {
    model_.set_ir_version(8);
    model_.add_opset_import()->set_version(13);
    g_ = model_.mutable_graph();
    g_->set_name(name);
  }

  // A graph input (or output, with Output) of `elem_type` and static dims.
  std::string Input(const std::string& name, std::vector<int64_t> dims,
                    int32_t elem_type = onnx::TensorProto::FLOAT) {
    SetValue(g_->add_input(), name, dims, elem_type);
    return name;
  }
  void Output(const std::string& name, std::vector<int64_t> dims) {
    SetValue(g_->add_output(), name, dims, onnx::TensorProto::FLOAT);
  }

  // A float weight of `dims` whose data is external (never read).
  std::string Weight(const std::string& name, std::vector<int64_t> dims) {
    onnx::TensorProto* w = g_->add_initializer();
    w->set_name(name);
    w->set_data_type(onnx::TensorProto::FLOAT);
    int64_t bytes = 4;
    for (int64_t d : dims) {
      w->add_dims(d);
      bytes *= d;
    }
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    for (auto [key, value] : std::vector<std::pair<std::string, std::string>>{
             {"location", "weights.bin"},
             {"offset", std::to_string(offset_)},
             {"length", std::to_string(bytes)}}) {
      auto* e = w->add_external_data();
      e->set_key(key);
      e->set_value(value);
    }
    offset_ += bytes;
    return name;
  }

  // An int64 constant vector (shapes, axes, slice bounds).
  std::string Ints(std::vector<int64_t> values) {
    onnx::TensorProto* t = g_->add_initializer();
    t->set_name(absl::StrCat("const_i", counter_++));
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
    return t->name();
  }

  // A float scalar constant.
  std::string Scalar(float value) {
    onnx::TensorProto* t = g_->add_initializer();
    t->set_name(absl::StrCat("const_f", counter_++));
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(value);
    return t->name();
  }

  // A node named "<prefix>/<op>_<n>" with one output; returns the node so
  // attributes can be added (Int, IntList, Float).
  onnx::NodeProto* Node(const std::string& op,
                        const std::vector<std::string>& inputs,
                        const std::string& prefix) {
    onnx::NodeProto* n = g_->add_node();
    n->set_op_type(op);
    n->set_name(absl::StrCat(prefix, "/", op, "_", counter_));
    for (const auto& in : inputs) n->add_input(in);
    n->add_output(absl::StrCat(prefix, "/", op, "_", counter_++, "_out"));
    return n;
  }
  // Node(...) when only its output is needed.
  std::string Op(const std::string& op, const std::vector<std::string>& inputs,
                 const std::string& prefix) {
    return Node(op, inputs, prefix)->output(0);
  }

  static onnx::NodeProto* Int(onnx::NodeProto* n, const std::string& name,
                              int64_t value) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
    return n;
  }
  static onnx::NodeProto* IntList(onnx::NodeProto* n, const std::string& name,
                                  std::vector<int64_t> values) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
    return n;
  }

  onnx::ModelProto Take() { return std::move(model_); }

 private:
  static void SetValue(onnx::ValueInfoProto* vi, const std::string& name,
                       const std::vector<int64_t>& dims, int32_t elem_type) {
    vi->set_name(name);
    auto* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem_type);
    for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  }

  onnx::ModelProto model_;
  onnx::GraphProto* g_;
  int64_t offset_ = 0;
  int counter_ = 0;
};

}  // namespace autoshard::testing

#endif  // AUTOSHARD_TESTS_GRAPH_BUILDER_H_
