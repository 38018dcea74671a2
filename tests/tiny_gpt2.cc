#include "tests/tiny_gpt2.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace autoshard::testing {

onnx::ModelProto TinyTiedGpt2(int layers, int64_t d, int64_t v, int64_t s) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("tiny_tied_gpt2");
  auto weight = [&](const std::string& name, std::vector<int64_t> dims) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t x : dims) {
      t->add_dims(x);
      n *= x;
    }
    t->set_raw_data(std::string(static_cast<size_t>(n) * 4, '\0'));
    return name;
  };
  auto ints = [&](const std::string& name, std::vector<int64_t> values) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t x : values) t->add_int64_data(x);
    return name;
  };
  auto node = [&](const std::string& op, std::vector<std::string> in,
                  const std::string& name) -> onnx::NodeProto* {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& x : in) n->add_input(x);
    n->add_output(name + "_out");
    return n;
  };
  auto attr_ints = [](onnx::NodeProto* n, const std::string& key,
                      std::vector<int64_t> values) {
    auto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : values) a->add_ints(x);
  };
  auto attr_int = [](onnx::NodeProto* n, const std::string& key, int64_t x) {
    auto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(x);
  };
  auto op = [&](const std::string& o, std::vector<std::string> in,
                const std::string& name) {
    return node(o, std::move(in), name)->output(0);
  };
  auto layer_norm = [&](const std::string& x, const std::string& p) {
    onnx::NodeProto* mean = node("ReduceMean", {x}, p + "/ReduceMean");
    attr_ints(mean, "axes", {-1});
    const std::string c = op("Sub", {x, mean->output(0)}, p + "/Sub");
    onnx::NodeProto* var = node(
        "ReduceMean", {op("Mul", {c, c}, p + "/Mul_sq")}, p + "/ReduceMean_1");
    attr_ints(var, "axes", {-1});
    const std::string sd =
        op("Sqrt",
           {op("Add", {var->output(0), weight(p + ".eps", {1})}, p + "/Add")},
           p + "/Sqrt");
    const std::string y = op("Div", {c, sd}, p + "/Div");
    return op("Add",
              {op("Mul", {y, weight(p + ".weight", {d})}, p + "/Mul"),
               weight(p + ".bias", {d})},
              p + "/Add_1");
  };
  auto linear = [&](const std::string& x, const std::string& p, int64_t in,
                    int64_t out) {
    return op(
        "Add",
        {op("MatMul", {x, weight(p + ".weight", {in, out})}, p + "/MatMul"),
         weight(p + ".bias", {out})},
        p + "/Add");
  };
  onnx::ValueInfoProto* ids = g->add_input();
  ids->set_name("input_ids");
  ids->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::INT64);
  for (int64_t x : {int64_t{1}, s})
    ids->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->add_dim()
        ->set_dim_value(x);
  weight("transformer.wte.weight", {v, d});
  std::vector<int64_t> range;
  for (int64_t i = 0; i < s; ++i) range.push_back(i);
  std::string x =
      op("Add",
         {op("Gather", {"transformer.wte.weight", "input_ids"}, "/wte/Gather"),
          op("Gather",
             {weight("transformer.wpe.weight", {s, d}), ints("pos_ids", range)},
             "/wpe/Gather")},
         "/embed/Add");
  for (int i = 0; i < layers; ++i) {
    const std::string p = absl::StrCat("/h.", i);
    const std::string a = layer_norm(x, p + "/ln_1");
    const std::string qkv = linear(a, p + "/attn/c_attn", d, 3 * d);
    onnx::NodeProto* split =
        node("Split", {qkv, ints(p + ".split", {d, d, d})}, p + "/attn/Split");
    attr_int(split, "axis", 2);
    split->add_output(p + "/attn/k");
    split->add_output(p + "/attn/v");
    onnx::NodeProto* kt =
        node("Transpose", {p + "/attn/k"}, p + "/attn/Transpose");
    attr_ints(kt, "perm", {0, 2, 1});
    std::string w =
        op("MatMul", {split->output(0), kt->output(0)}, p + "/attn/MatMul");
    w = op("Div", {w, weight(p + ".scale", {1})}, p + "/attn/Div");
    w = op("Add", {w, weight(p + ".mask", {s, s})}, p + "/attn/Add");
    onnx::NodeProto* sm = node("Softmax", {w}, p + "/attn/Softmax");
    attr_int(sm, "axis", -1);
    std::string o =
        op("MatMul", {sm->output(0), p + "/attn/v"}, p + "/attn/MatMul_1");
    o = linear(o, p + "/attn/c_proj", d, d);
    x = op("Add", {x, o}, p + "/Add");
    const std::string f =
        linear(layer_norm(x, p + "/ln_2"), p + "/mlp/c_fc", d, 4 * d);
    std::string gelu =
        op("Tanh", {op("Mul", {f, weight(p + ".c", {1})}, p + "/mlp/act/Mul")},
           p + "/mlp/act/Tanh");
    gelu = op("Mul", {f, gelu}, p + "/mlp/act/Mul_1");
    x = op("Add", {x, linear(gelu, p + "/mlp/c_proj", 4 * d, d)}, p + "/Add_1");
  }
  x = layer_norm(x, "/ln_f");
  x = op("Reshape", {x, ints("shape_2d", {s, d})}, "/lm_head/Reshape");
  onnx::NodeProto* head =
      node("Gemm", {x, "transformer.wte.weight"}, "/lm_head/Gemm");
  attr_int(head, "transB", 1);
  op("Reshape", {head->output(0), ints("shape_3d", {1, s, v})},
     "/lm_head/Reshape_1");
  g->mutable_node(g->node_size() - 1)->set_output(0, "logits");
  onnx::ValueInfoProto* out = g->add_output();
  out->set_name("logits");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  for (int64_t dim : {int64_t{1}, s, v})
    out->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->add_dim()
        ->set_dim_value(dim);
  return m;
}

}  // namespace autoshard::testing
