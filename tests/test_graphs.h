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

namespace internal {

// Builds MakeTransformerLike's graph node by node: unique names, weights
// as external-data initializers of width `d`.
class TransformerBuilder {
 public:
  TransformerBuilder(onnx::GraphProto* g, int d) : g_(g), d_(d) {}

  static void AddValue(onnx::ValueInfoProto* vi, const std::string& name,
                       std::initializer_list<int64_t> dims) {
    vi->set_name(name);
    auto* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t dim : dims) t->mutable_shape()->add_dim()->set_dim_value(dim);
  }

  void Scalar(const std::string& name, float value) {
    onnx::TensorProto* t = g_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(value);
  }

  // The residual attention block on x: LayerNorm, Q/K/V MatMuls, Q x K^T,
  // scaling, Softmax, x V, the output MatMul and x + it.
  std::string Attention(const std::string& x, const std::string& p) {
    const std::string ln = LayerNorm(x, p + "/attn_norm");
    const std::string q = Out(Node("MatMul", {ln, Weight(p + ".wq")}, p));
    const std::string k = Out(Node("MatMul", {ln, Weight(p + ".wk")}, p));
    const std::string v = Out(Node("MatMul", {ln, Weight(p + ".wv")}, p));
    onnx::NodeProto* t = Node("Transpose", {k}, p);
    onnx::AttributeProto* perm = t->add_attribute();
    perm->set_name("perm");
    perm->set_type(onnx::AttributeProto::INTS);
    perm->add_ints(1);
    perm->add_ints(0);
    const std::string scores = Out(Node("MatMul", {q, Out(t)}, p));
    const std::string scaled = Out(Node("Mul", {scores, "scale"}, p));
    const std::string probs = Out(Node("Softmax", {scaled}, p));
    const std::string mixed = Out(Node("MatMul", {probs, v}, p));
    const std::string o = Out(Node("MatMul", {mixed, Weight(p + ".wo")}, p));
    return Out(Node("Add", {x, o}, p));
  }

  // The residual MLP block on x: LayerNorm, MatMul to 4d, Tanh gate,
  // MatMul back, x + it.
  std::string Mlp(const std::string& x, const std::string& p) {
    const std::string ln2 = LayerNorm(x, p + "/mlp_norm");
    const std::string up =
        Out(Node("MatMul", {ln2, Weight(p + ".w1", {d_, 4 * d_})}, p));
    const std::string gate = Out(Node("Tanh", {up}, p));
    const std::string gated = Out(Node("Mul", {up, gate}, p));
    const std::string down =
        Out(Node("MatMul", {gated, Weight(p + ".w2", {4 * d_, d_})}, p));
    return Out(Node("Add", {x, down}, p));
  }

 private:
  // A d x d weight unless `dims` says otherwise.
  std::string Weight(const std::string& name,
                     std::initializer_list<int64_t> dims = {}) {
    if (dims.size() == 0) return AddExternalFloat(g_, name, {d_, d_}, &offset_);
    return AddExternalFloat(g_, name, dims, &offset_);
  }

  onnx::NodeProto* Node(const std::string& op, std::vector<std::string> inputs,
                        const std::string& prefix) {
    onnx::NodeProto* n = g_->add_node();
    n->set_op_type(op);
    n->set_name(absl::StrCat(prefix, "/", op, "_", counter_));
    for (auto& in : inputs) n->add_input(in);
    n->add_output(absl::StrCat(prefix, "/", op, "_", counter_++, "_out"));
    return n;
  }

  static std::string Out(onnx::NodeProto* n) { return n->output(0); }

  std::string ReduceMean(const std::string& x, const std::string& prefix) {
    onnx::NodeProto* n = Node("ReduceMean", {x}, prefix);
    onnx::AttributeProto* axes = n->add_attribute();
    axes->set_name("axes");
    axes->set_type(onnx::AttributeProto::INTS);
    axes->add_ints(-1);
    return Out(n);
  }

  // 8 nodes: (x - mean) / sqrt(var + eps) x gamma.
  std::string LayerNorm(const std::string& x, const std::string& prefix) {
    const std::string mean = ReduceMean(x, prefix);
    const std::string centred = Out(Node("Sub", {x, mean}, prefix));
    const std::string sq = Out(Node("Mul", {centred, centred}, prefix));
    const std::string var = ReduceMean(sq, prefix);
    const std::string stable = Out(Node("Add", {var, "eps"}, prefix));
    const std::string sd = Out(Node("Sqrt", {stable}, prefix));
    const std::string normed = Out(Node("Div", {centred, sd}, prefix));
    return Out(Node("Mul", {normed, Weight(prefix + ".gamma", {d_})}, prefix));
  }

  onnx::GraphProto* g_;
  const int64_t d_;
  int64_t offset_ = 0;  // the next weight's external-data offset
  int counter_ = 0;     // nodes made
};

}  // namespace internal

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
  internal::TransformerBuilder b(g, d);
  b.AddValue(g->add_input(), "x", {seq, d});
  b.Scalar("eps", 1e-5f);
  b.Scalar("scale", 0.125f);
  std::string x = "x";
  for (int l = 0; l < layers; ++l) {
    const std::string p = absl::StrCat("/layers.", l);
    x = b.Mlp(b.Attention(x, p), p);
  }
  b.AddValue(g->add_output(), x, {seq, d});
  return m;
}

}  // namespace autoshard::testing

#endif  // AUTOSHARD_TESTS_TEST_GRAPHS_H_
