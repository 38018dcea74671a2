// Synthetic graphs shared by tests and benchmarks (no GoogleTest here).
#ifndef AUTOSHARD_TESTS_TEST_GRAPHS_H_
#define AUTOSHARD_TESTS_TEST_GRAPHS_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "onnx/onnx_pb.h"

namespace autoshard::testing {

// Adds to `g` a float initializer `name` of `dims` whose data is external
// ("weights.bin" at *offset, which moves past it); nothing reads the data.
inline std::string AddExternalFloat(onnx::GraphProto* g,
                                    const std::string& name,
                                    const std::vector<int64_t>& dims,
                                    int64_t* offset) {
  onnx::TensorProto* w = g->add_initializer();
  w->set_name(name);
  w->set_data_type(onnx::TensorProto::FLOAT);
  int64_t bytes = 4;
  for (int64_t dim : dims) {
    w->add_dims(dim);
    bytes *= dim;
  }
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"location", "weights.bin"},
           {"offset", std::to_string(*offset)},
           {"length", std::to_string(bytes)}}) {
    auto* e = w->add_external_data();
    e->set_key(key);
    e->set_value(value);
  }
  *offset += bytes;
  return name;
}

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

// A transformer-like model of `layers` pre-norm blocks on x: float[seq, d]:
// LayerNorm (8 nodes), Q/K/V MatMuls (parallel branches), Q x K^T, scaling,
// Softmax, x V, the output MatMul and a residual Add; LayerNorm again, an MLP
// (MatMul to 4d, Tanh gate, MatMul back) and a residual Add: 31 nodes and
// 12 d^2 + 2 d weight floats per block. Weights are external-data
// initializers (dims only: nothing reads their data); names are unique.
inline onnx::ModelProto MakeTransformerLike(int layers, int d, int seq) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("transformer_like");
  auto add_value = [](onnx::ValueInfoProto* vi, const std::string& name,
                      std::initializer_list<int64_t> dims) {
    vi->set_name(name);
    auto* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t dim : dims) t->mutable_shape()->add_dim()->set_dim_value(dim);
  };
  int64_t offset = 0;
  auto weight = [&](const std::string& name,
                    std::initializer_list<int64_t> dims) {
    return AddExternalFloat(g, name, dims, &offset);
  };
  auto scalar = [&](const std::string& name, float value) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(value);
    return name;
  };
  int counter = 0;
  auto node = [&](const std::string& op, std::vector<std::string> inputs,
                  const std::string& prefix) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(absl::StrCat(prefix, "/", op, "_", counter));
    for (auto& in : inputs) n->add_input(in);
    const std::string out =
        absl::StrCat(prefix, "/", op, "_", counter++, "_out");
    n->add_output(out);
    return n;
  };
  auto out = [](onnx::NodeProto* n) { return n->output(0); };
  auto reduce_mean = [&](const std::string& x, const std::string& prefix) {
    onnx::NodeProto* n = node("ReduceMean", {x}, prefix);
    onnx::AttributeProto* axes = n->add_attribute();
    axes->set_name("axes");
    axes->set_type(onnx::AttributeProto::INTS);
    axes->add_ints(-1);
    return out(n);
  };
  auto layer_norm = [&](const std::string& x, const std::string& prefix) {
    const std::string mean = reduce_mean(x, prefix);
    const std::string centred = out(node("Sub", {x, mean}, prefix));
    const std::string sq = out(node("Mul", {centred, centred}, prefix));
    const std::string var = reduce_mean(sq, prefix);
    const std::string stable = out(node("Add", {var, "eps"}, prefix));
    const std::string sd = out(node("Sqrt", {stable}, prefix));
    const std::string normed = out(node("Div", {centred, sd}, prefix));
    return out(node("Mul", {normed, weight(prefix + ".gamma", {d})}, prefix));
  };
  add_value(g->add_input(), "x", {seq, d});
  scalar("eps", 1e-5f);
  scalar("scale", 0.125f);
  std::string x = "x";
  for (int l = 0; l < layers; ++l) {
    const std::string p = absl::StrCat("/layers.", l);
    const std::string ln = layer_norm(x, p + "/attn_norm");
    const std::string q =
        out(node("MatMul", {ln, weight(p + ".wq", {d, d})}, p));
    const std::string k =
        out(node("MatMul", {ln, weight(p + ".wk", {d, d})}, p));
    const std::string v =
        out(node("MatMul", {ln, weight(p + ".wv", {d, d})}, p));
    onnx::NodeProto* t = node("Transpose", {k}, p);
    onnx::AttributeProto* perm = t->add_attribute();
    perm->set_name("perm");
    perm->set_type(onnx::AttributeProto::INTS);
    perm->add_ints(1);
    perm->add_ints(0);
    const std::string scores = out(node("MatMul", {q, out(t)}, p));
    const std::string scaled = out(node("Mul", {scores, "scale"}, p));
    const std::string probs = out(node("Softmax", {scaled}, p));
    const std::string mixed = out(node("MatMul", {probs, v}, p));
    const std::string o =
        out(node("MatMul", {mixed, weight(p + ".wo", {d, d})}, p));
    const std::string r1 = out(node("Add", {x, o}, p));
    const std::string ln2 = layer_norm(r1, p + "/mlp_norm");
    const std::string up =
        out(node("MatMul", {ln2, weight(p + ".w1", {d, 4 * d})}, p));
    const std::string gate = out(node("Tanh", {up}, p));
    const std::string gated = out(node("Mul", {up, gate}, p));
    const std::string down =
        out(node("MatMul", {gated, weight(p + ".w2", {4 * d, d})}, p));
    x = out(node("Add", {r1, down}, p));
  }
  add_value(g->add_output(), x, {seq, d});
  return m;
}

}  // namespace autoshard::testing

#endif  // AUTOSHARD_TESTS_TEST_GRAPHS_H_
