// Synthetic graphs shared by tests and benchmarks (no GoogleTest here).
#ifndef AUTOSHARD_TESTS_TEST_GRAPHS_H_
#define AUTOSHARD_TESTS_TEST_GRAPHS_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "onnx/onnx_pb.h"

namespace autoshard::testing {

// A chain of `num_ifs` If nodes on one bool input `cond`: If i reads x<i>
// from the outer scope in both branches (then: Relu, else: Sigmoid, each on
// float[16]) and outputs x<i+1>. Every tensor's type and shape is recorded.
inline onnx::GraphProto MakeIfChain(int num_ifs) {
  onnx::GraphProto g;
  auto set_type = [](onnx::ValueInfoProto* vi, const std::string& name,
                     int32_t type, bool vector) {
    vi->set_name(name);
    auto* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    auto* shape = t->mutable_shape();
    if (vector) shape->add_dim()->set_dim_value(16);
  };
  set_type(g.add_input(), "cond", onnx::TensorProto::BOOL, false);
  set_type(g.add_input(), "x0", onnx::TensorProto::FLOAT, true);
  for (int i = 0; i < num_ifs; ++i) {
    const std::string in = absl::StrCat("x", i), out = absl::StrCat("x", i + 1);
    onnx::NodeProto* node = g.add_node();
    node->set_op_type("If");
    node->set_name(absl::StrCat("if", i));
    node->add_input("cond");
    node->add_output(out);
    for (const char* branch : {"then_branch", "else_branch"}) {
      onnx::AttributeProto* attr = node->add_attribute();
      attr->set_name(branch);
      attr->set_type(onnx::AttributeProto::GRAPH);
      onnx::NodeProto* body_node = attr->mutable_g()->add_node();
      body_node->set_op_type(branch[0] == 't' ? "Relu" : "Sigmoid");
      body_node->add_input(in);
      body_node->add_output(absl::StrCat(out, branch));
      set_type(attr->mutable_g()->add_output(), absl::StrCat(out, branch),
               onnx::TensorProto::FLOAT, true);
    }
    set_type(g.add_value_info(), out, onnx::TensorProto::FLOAT, true);
  }
  return g;
}

}  // namespace autoshard::testing

#endif  // AUTOSHARD_TESTS_TEST_GRAPHS_H_
