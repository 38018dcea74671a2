// Issue 29 end to end: a GPT-2-shaped decoder whose token embedding `wte` is
// tied to the LM head (one initializer read by the first Gather and by the
// last Gemm, transB = 1, as torch exports a Linear on 2-D input), planned on
// 4 IPUs. With --weights variable the embedding and the head share IPU 0 (a
// fifth stage returns there), the fake compiler that enforces PopART's rule
// accepts the annotated model, and the report says "5 stages on 4 IPUs";
// `apply` refuses a hand split that puts them on two IPUs. The full GPT-2
// small is bench/make_gpt2_model.py --tied (too large for a unit test).
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "graph/model_io.h"
#include "gtest/gtest.h"
#include "sharder/autoshard.h"
#include "tests/test_util.h"
#include "writers/emit.h"

namespace autoshard {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// GPT-2 in miniature: `layers` blocks of width d (one attention head),
// vocabulary v, sequence s; weights inline, zeros. Each block: LayerNorm
// (ReduceMean, Sub, Mul, ReduceMean, Add, Sqrt, Div, Mul, Add), c_attn
// MatMul + Add split into q, k, v, q k^T / sqrt(d) + causal mask, Softmax,
// times v, c_proj, residual Add, LayerNorm, c_fc, tanh GELU, c_proj,
// residual Add. Every block has its own constants, as torch's export does.
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

// GPT-2 small's proportions: 12 blocks, and the head's 2 s d v FLOPs about
// 5 blocks' 24 s d^2 (GPT-2 small: 9.9 GFLOP vs 1.8 per block at s = 128).
onnx::ModelProto Model() { return TinyTiedGpt2(12, 64, 4096, 32); }

Options FourIpus(const std::string& weights) {
  Options options;
  options.num_ipus = 4;
  options.weights = weights;
  options.max_search_s = 20;
  return options;
}

// The report with its wrapped lines joined again.
std::string Unwrapped(const std::string& report) {
  return absl::StrReplaceAll(report, {{"\n  ", " "}});
}

// The node's index in the model, by name.
int NodeIndex(const onnx::ModelProto& m, const std::string& name) {
  for (int i = 0; i < m.graph().node_size(); ++i)
    if (m.graph().node(i).name() == name) return i;
  return -1;
}

// Runs the fake compiler with FAKE_WEIGHTS=variable (no node limit) on `plan`
// applied to `model`; returns its exit code and output.
std::pair<int, std::string> FakeCompile(const onnx::ModelProto& model,
                                        const Plan& plan) {
  onnx::ModelProto annotated = model;
  EXPECT_TRUE(ApplyPlan(plan, &annotated).ok());
  testing::TempDir dir;
  const fs::path path = dir.path() / "m.onnx";
  testing::WriteBytes(path, annotated.SerializeAsString());
  const fs::path log = dir.path() / "log.txt";
  const int status = std::system(
      absl::StrCat("FAKE_WEIGHTS=variable FAKE_LIMIT=1000000 ", FAKE_COMPILER,
                   " ", path.string(), " > ", log.string(), " 2>&1")
          .c_str());
  return {WEXITSTATUS(status), testing::ReadBytes(log)};
}

TEST(SharedWeightsTest, VariableWeightsPutEmbeddingAndHeadOnOneIpu) {
  const onnx::ModelProto model = Model();
  absl::StatusOr<Plan> plan = PlanModel(model, FourIpus("variable"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  const int gather = NodeIndex(model, "/wte/Gather");
  const int head = NodeIndex(model, "/lm_head/Gemm");
  EXPECT_EQ(plan->placement.ipu[gather], 0);
  EXPECT_EQ(plan->placement.ipu[head], 0);
  EXPECT_EQ(plan->placement.pipeline_stage[head], 4);
  EXPECT_EQ(plan->proto.num_ipus(), 4);
  EXPECT_EQ(plan->proto.stages().num_stages(), 5);
  EXPECT_THAT(plan->proto.stages().stage_ipus(),
              ::testing::ElementsAre(0, 1, 2, 3, 0));
  EXPECT_EQ(plan->proto.stages().shared_weight(), "transformer.wte.weight");
  EXPECT_TRUE(plan->proto.fits());
  const std::string report = Unwrapped(ReportText(plan->proto, false));
  EXPECT_THAT(report, HasSubstr("IPUs: 4 (5 stages on 4 IPUs)"));
  EXPECT_THAT(report,
              HasSubstr("stages: 5 stages on 4 IPUs (stage 4 on IPU 0)"));
  // The certificate covers revisiting plans: the cheap bound.
  EXPECT_THAT(plan->proto.performance().bound_method(),
              HasSubstr("returns to IPU 0"));
  EXPECT_LE(plan->proto.performance().certified_bound_s(),
            plan->proto.performance().bottleneck_s());
  // wte (4096 x 64 floats = 1,048,576 B) is held once, on IPU 0 only.
  EXPECT_GE(plan->proto.ipus(0).weight_bytes(), 1048576);
  for (int d = 1; d < 4; ++d)
    EXPECT_LT(plan->proto.ipus(d).weight_bytes(), 1048576) << d;
  const auto [code, output] = FakeCompile(model, *plan);
  EXPECT_EQ(code, 0) << output;
}

TEST(SharedWeightsTest, TheFakeCompilerRefusesAVariableOnTwoIpus) {
  const onnx::ModelProto model = Model();
  // A hand split: everything up to block 5 on IPU 0, the rest (the head
  // among it) left over for IPU 1 (PopRT's rule).
  const std::vector<NamedShardingPoint> points = {{"/h.5/Add_1", 0, 0}};
  absl::StatusOr<Plan> plan =
      PlanFromShardingPoints(model, FourIpus("constant"), points);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const auto [code, output] = FakeCompile(model, *plan);
  EXPECT_EQ(code, 1);
  EXPECT_THAT(output, HasSubstr("Can not copy variable tensor "
                                "transformer.wte.weight between virtual "
                                "graphs when pipelining"));
  // `apply` with --weights variable refuses it, naming the weight and its
  // readers' IPUs.
  absl::StatusOr<Plan> refused =
      PlanFromShardingPoints(model, FourIpus("variable"), points);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("weight 'transformer.wte.weight' is read on IPUs 0, "
                        "1 ('/wte/Gather' on IPU 0, '/lm_head/Gemm' on IPU "
                        "1)"));
}

TEST(SharedWeightsTest, ConstantWeightsReportTheChoiceAndTheBytes) {
  const onnx::ModelProto model = Model();
  absl::StatusOr<Plan> plan = PlanModel(model, FourIpus("constant"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(plan->proto.has_stages());
  const proto::StageLayout& st = plan->proto.stages();
  EXPECT_EQ(st.weights(), "constant");
  EXPECT_EQ(st.shared_weight(), "transformer.wte.weight");
  EXPECT_EQ(st.shared_weight_bytes(), 1048576);
  ASSERT_GT(st.other_bottleneck_s(), 0);
  // The chosen plan is the faster of the two.
  EXPECT_LE(plan->proto.performance().bottleneck_s(), st.other_bottleneck_s());
  // Revisiting holds wte once, duplicating twice: 1,048,576 B apart (each
  // plan's other weights are each on one IPU either way).
  EXPECT_EQ(std::abs(st.weight_bytes_saved()), 1048576);
  EXPECT_EQ(st.weight_bytes_saved() > 0, st.choice() == "revisit");
  const std::string report = Unwrapped(ReportText(plan->proto, false));
  EXPECT_THAT(report, HasSubstr("shared weight 'transformer.wte.weight' "
                                "(1.05 MB), read far apart (--weights "
                                "constant)"));
  EXPECT_THAT(report, HasSubstr("1.05 MB of weights against the fastest"));
}

}  // namespace
}  // namespace autoshard
