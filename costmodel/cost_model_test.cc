#include "costmodel/cost_model.h"

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "costmodel/flops_rules.h"
#include "gmock/gmock.h"
#include "graph/graph.h"
#include "graph/shapes.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace autoshard {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Turns every value_info entry that no node produces and that is not a graph
// input into an initializer with its dims and no data, so that ONNX text can
// declare a weight as `<float[4,3,3,3] w>` (the cost model never reads a
// weight's data; the data may live in an external file).
void DeclaredValuesToInitializers(onnx::GraphProto* graph) {
  absl::flat_hash_set<std::string> defined;
  for (const auto& vi : graph->input()) defined.insert(vi.name());
  for (const auto& t : graph->initializer()) defined.insert(t.name());
  for (const auto& node : graph->node()) {
    for (const auto& out : node.output()) defined.insert(out);
  }
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  for (const auto& vi : graph->value_info()) {
    if (defined.contains(vi.name())) {
      *kept.Add() = vi;
      continue;
    }
    onnx::TensorProto* t = graph->add_initializer();
    t->set_name(vi.name());
    t->set_data_type(vi.type().tensor_type().elem_type());
    for (const auto& d : vi.type().tensor_type().shape().dim()) {
      t->add_dims(d.dim_value());
    }
  }
  graph->mutable_value_info()->Swap(&kept);
}

// Parses `text`, infers shapes and costs every node. Node i is the i-th node
// of the text ("n<i>").
ModelCosts CostsOf(std::string_view text,
                   Precision precision = Precision::kFp32) {
  onnx::ModelProto model = testing::ParseModelText(text);
  DeclaredValuesToInitializers(model.mutable_graph());
  absl::Status inferred = InferShapes(&model);
  EXPECT_TRUE(inferred.ok()) << inferred;
  const TensorInfoMap tensors = CollectTensorInfo(model.graph());
  absl::StatusOr<Graph> graph = Graph::Build(model.graph());
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return {};
  CostOptions options;
  options.precision = precision;
  absl::StatusOr<ModelCosts> costs =
      ComputeCosts(model.graph(), *graph, tensors, options);
  EXPECT_TRUE(costs.ok()) << costs.status();
  return costs.ok() ? *std::move(costs) : ModelCosts{};
}

TEST(FlopsTest, MatMulBroadcastsBatchDims) {
  ModelCosts c = CostsOf(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,1,4,5] a, float[3,5,6] b) => (float[2,3,4,6] y) {
      y = MatMul(a, b)
    })");
  ASSERT_EQ(c.nodes.size(), 1u);
  // Batch dims [2,1] and [3] broadcast to [2,3]; M=4, K=5, N=6.
  // macs = 2*3 * 4*6*5 = 720; flops = 2*720 = 1440.
  EXPECT_EQ(c.nodes[0].macs, 720);
  EXPECT_EQ(c.nodes[0].flops, 1440);
  EXPECT_TRUE(c.nodes[0].has_flops_rule);
  EXPECT_TRUE(c.nodes[0].shapes_known);
  // Output [2,3,4,6] float: 144 * 4 = 576 bytes.
  EXPECT_EQ(c.nodes[0].activation_bytes, 576);
  EXPECT_EQ(c.num_activation_inputs[0], 2);
}

TEST(FlopsTest, GemmTransBWithBias) {
  ModelCosts c = CostsOf(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,8] a) => (float[2,16] y) <float[16,8] b, float[16] bias> {
      y = Gemm <transB = 1> (a, b, bias)
    })");
  ASSERT_EQ(c.nodes.size(), 1u);
  // M=2, K=8, N=16 (B is N x K): macs = 2*16*8 = 256;
  // flops = 2*256 + M*N (bias) = 512 + 32 = 544.
  EXPECT_EQ(c.nodes[0].macs, 256);
  EXPECT_EQ(c.nodes[0].flops, 544);
  // Weights: b 16*8*4 = 512 bytes, bias 16*4 = 64 bytes.
  EXPECT_EQ(c.total_weight_bytes, 576);
  EXPECT_EQ(c.num_activation_inputs[0], 1);
}

TEST(FlopsTest, ConvWithGroupBiasAndStride) {
  ModelCosts c = CostsOf(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4,8,8] x) => (float[1,6,4,4] y) <float[6,2,3,3] w, float[6] b> {
      y = Conv <group = 2, strides = [2, 2], pads = [1, 1, 1, 1]> (x, w, b)
    })");
  ASSERT_EQ(c.nodes.size(), 1u);
  // Out spatial: floor((8 + 2 - 3) / 2) + 1 = 4. Y = [1,6,4,4] (96 elems).
  // macs = N*Cout*prod(out)*(Cin/group)*prod(kernel) = 1*6*16*2*9 = 1728;
  // flops = 2*1728 + 96 (bias) = 3552.
  EXPECT_EQ(c.nodes[0].macs, 1728);
  EXPECT_EQ(c.nodes[0].flops, 3552);
  EXPECT_TRUE(c.nodes[0].shapes_known);
}

TEST(FlopsTest, ConvTransposeCountsInputPositions) {
  ModelCosts c = CostsOf(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4,3,3] x) => (float[1,2,6,6] y) <float[4,2,2,2] w, float[2] b> {
      y = ConvTranspose <strides = [2, 2]> (x, w, b)
    })");
  ASSERT_EQ(c.nodes.size(), 1u);
  // W = [Cin=4, Cout/group=2, 2, 2]; Y = [1,2,6,6] (72 elems).
  // macs = N*Cin*prod(in)*(Cout/group)*prod(kernel) = 1*4*9*2*4 = 288;
  // flops = 2*288 + 72 (bias) = 648.
  EXPECT_EQ(c.nodes[0].macs, 288);
  EXPECT_EQ(c.nodes[0].flops, 648);
}

TEST(FlopsTest, Pooling) {
  ModelCosts c = CostsOf(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,3,8,8] x) => (float[1,3,4,4] a, float[1,3,8,8] b,
                              float[1,3,1,1] m) {
      a = MaxPool <kernel_shape = [2, 2], strides = [2, 2]> (x)
      b = AveragePool <kernel_shape = [3, 3], pads = [1, 1, 1, 1]> (x)
      m = GlobalAveragePool(x)
    })");
  ASSERT_EQ(c.nodes.size(), 3u);
  // MaxPool: out 1*3*4*4 = 48 elements x 4 taps = 192.
  EXPECT_EQ(c.nodes[0].flops, 192);
  // AveragePool: out 1*3*8*8 = 192 elements x 9 taps = 1728.
  EXPECT_EQ(c.nodes[1].flops, 1728);
  // GlobalAveragePool: input elements 192.
  EXPECT_EQ(c.nodes[2].flops, 192);
  EXPECT_EQ(c.nodes[0].macs, 0);
  // 192 + 1728 + 192 = 2112.
  EXPECT_EQ(c.total_flops, 2112);
}

TEST(FlopsTest, ElementwiseOps) {
  ModelCosts c = CostsOf(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3] x, float[3] v) => (float[2,3] s) {
      a = Add(x, v)
      r = Relu(a)
      g = Sigmoid(r)
      k = Clip(g)
      s = Sum(a, r, k)
    })");
  ASSERT_EQ(c.nodes.size(), 5u);
  // Add: [2,3] + [3] broadcasts to 6 elements x 1 = 6.
  EXPECT_EQ(c.nodes[0].flops, 6);
  EXPECT_EQ(c.nodes[1].flops, 6);   // Relu: 6 x 1
  EXPECT_EQ(c.nodes[2].flops, 24);  // Sigmoid: 6 x 4 (transcendental)
  EXPECT_EQ(c.nodes[3].flops, 12);  // Clip: 6 x 2 (min and max)
  EXPECT_EQ(c.nodes[4].flops, 12);  // Sum of 3: 6 x (3 - 1)
  EXPECT_EQ(c.num_activation_inputs[4], 3);
}

TEST(FlopsTest, EinsumContraction) {
  ModelCosts c = CostsOf(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[5,2,3] a, float[5,3,4] b) => (float[5,2,4] y) {
      y = Einsum <equation = "bij,bjk->bik"> (a, b)
    })");
  ASSERT_EQ(c.nodes.size(), 1u);
  // Output 5*2*4 = 40 elements x contracted j = 3: macs = 120, flops 240.
  EXPECT_EQ(c.nodes[0].macs, 120);
  EXPECT_EQ(c.nodes[0].flops, 240);
}

TEST(FlopsTest, LstmCountsEveryStep) {
  ModelCosts c = CostsOf(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[5,1,3] x) => (float[5,1,1,2] y) <float[1,8,3] w, float[1,8,2] r> {
      y = LSTM <hidden_size = 2> (x, w, r)
    })");
  ASSERT_EQ(c.nodes.size(), 1u);
  // seq 5, batch 1, one direction, 4 gates, H = 2, input 3:
  // macs = 5*1*1 * 4*2*(3 + 2) = 200;
  // flops = 2*200 + 5*1*1 * 2 * 36 (elementwise per unit) = 400 + 360 = 760.
  EXPECT_EQ(c.nodes[0].macs, 200);
  EXPECT_EQ(c.nodes[0].flops, 760);
}

TEST(FlopsTest, MicrosoftAttention) {
  ModelCosts c = CostsOf(R"(
    <ir_version: 8, opset_import: ["" : 13, "com.microsoft" : 1]>
    g (float[1,3,8] x) => (float[1,3,8] y) <float[8,24] w, float[24] b> {
      y = com.microsoft.Attention <num_heads = 2> (x, w, b)
    })");
  ASSERT_EQ(c.nodes.size(), 1u);
  // B=1, S=T=3, Hin=8, Hq=Hk=Hv=8: macs = 1*3*(8*24 + 3*8 + 3*8) = 720;
  // flops = 2*720 + 5*1*2*3*3 (softmax) + 1*3*24 (bias) = 1440+90+72 = 1602.
  EXPECT_EQ(c.nodes[0].macs, 720);
  EXPECT_EQ(c.nodes[0].flops, 1602);
  EXPECT_TRUE(c.nodes[0].has_flops_rule);
}

TEST(FlopsTest, ShapeOnlyOpsCostZero) {
  ModelCosts c = CostsOf(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3,4] x) => (float[4,6] y, int64[3] s) <int64[2] shape = {6, 4}> {
      r = Reshape(x, shape)
      y = Transpose <perm = [1, 0]> (r)
      s = Shape(x)
    })");
  ASSERT_EQ(c.nodes.size(), 3u);
  for (const NodeCost& node : c.nodes) {
    EXPECT_EQ(node.flops, 0);
    EXPECT_TRUE(node.has_flops_rule);
  }
  // Reshape's output: 24 floats = 96 bytes; Shape's: 3 int64 = 24 bytes.
  EXPECT_EQ(c.nodes[0].activation_bytes, 96);
  EXPECT_EQ(c.nodes[2].activation_bytes, 24);
  EXPECT_THAT(c.ops_without_rule, IsEmpty());
}

TEST(FlopsTest, UnknownOpFallsBackToOutputElements) {
  ModelCosts c = CostsOf(R"(
    <ir_version: 8, opset_import: ["" : 13, "com.example" : 1]>
    g (float[2,3,3] x) => (float[2] d, float[7] z) {
      d = Det(x)
      z = com.example.Foo(d)
    })");
  ASSERT_EQ(c.nodes.size(), 2u);
  // Det has no rule: flops = output elements = 2.
  EXPECT_FALSE(c.nodes[0].has_flops_rule);
  EXPECT_EQ(c.nodes[0].flops, 2);
  EXPECT_TRUE(c.nodes[0].shapes_known);
  // Foo is unknown to shape inference too, but the graph output declares
  // float[7]: flops = 7.
  EXPECT_FALSE(c.nodes[1].has_flops_rule);
  EXPECT_EQ(c.nodes[1].flops, 7);
  EXPECT_THAT(c.ops_without_rule, ElementsAre("Det", "com.example.Foo"));
}

TEST(FlopsTest, UnknownDimsCountAsOneAndAreReported) {
  ModelCosts c = CostsOf(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[N,4] x) => (float[N,4] y) {
      y = Relu(x)
    })");
  ASSERT_EQ(c.nodes.size(), 1u);
  // N counts as 1: 1*4 = 4 elements x 1 = 4 FLOPs, 16 bytes.
  EXPECT_EQ(c.nodes[0].flops, 4);
  EXPECT_EQ(c.nodes[0].activation_bytes, 16);
  EXPECT_FALSE(c.nodes[0].shapes_known);
  EXPECT_EQ(c.nodes_with_unknown_shapes, 1);
}

TEST(CostTest, WeightSharedByTwoNodesCountedOnce) {
  ModelCosts c = CostsOf(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4] x) => (float[1,4] y) <float[4,4] w> {
      a = MatMul(x, w)
      y = MatMul(a, w)
    })");
  ASSERT_EQ(c.nodes.size(), 2u);
  ASSERT_EQ(c.weights.size(), 1u);
  EXPECT_EQ(c.weights[0].name, "w");
  EXPECT_EQ(c.weights[0].size_bytes, 64);  // 4*4 floats * 4 bytes
  EXPECT_EQ(c.total_weight_bytes, 64);     // once, not 128
  EXPECT_THAT(c.node_weights[0], ElementsAre(0));
  EXPECT_THAT(c.node_weights[1], ElementsAre(0));
  EXPECT_EQ(c.num_activation_inputs[0], 1);  // x
  EXPECT_EQ(c.num_activation_inputs[1], 1);  // a
  // Each MatMul: 2 * 1*4*4 = 32 FLOPs; total 64.
  EXPECT_EQ(c.total_flops, 64);
}

TEST(CostTest, ConstantOfShapeChainIsAWeight) {
  ModelCosts c = CostsOf(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,3,8,8] x) => (float[1,4,8,8] y) <int64[4] s = {4, 3, 3, 3}> {
      w0 = ConstantOfShape(s)
      w = Relu(w0)
      y = Conv <pads = [1, 1, 1, 1]> (x, w)
    })");
  ASSERT_EQ(c.nodes.size(), 3u);
  // ConstantOfShape and Relu of constants fold: no FLOPs, no activations.
  for (int i : {0, 1}) {
    EXPECT_TRUE(c.nodes[i].is_constant);
    EXPECT_EQ(c.nodes[i].flops, 0);
    EXPECT_EQ(c.nodes[i].activation_bytes, 0);
  }
  // Only w, which the Conv reads, is a weight (not s, not w0):
  // 4*3*3*3 = 108 floats = 432 bytes.
  ASSERT_EQ(c.weights.size(), 1u);
  EXPECT_EQ(c.weights[0].name, "w");
  EXPECT_EQ(c.weights[0].size_bytes, 432);
  EXPECT_THAT(c.node_weights[2], ElementsAre(0));
  EXPECT_EQ(c.num_activation_inputs[2], 1);  // x only
  // Conv: 1*4*64 outputs x 3*9 = 6912 MACs, 13824 FLOPs.
  EXPECT_FALSE(c.nodes[2].is_constant);
  EXPECT_EQ(c.nodes[2].flops, 13824);
}

TEST(CostTest, ConstantNodeValuesAreWeights) {
  ModelCosts c = CostsOf(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,2] x) => (float[1,3] z) {
      w = Constant <value = float[2,3] {1, 2, 3, 4, 5, 6}> ()
      v = Constant <value_floats = [1.0, 2.0, 3.0]> ()
      y = MatMul(x, w)
      z = Add(y, v)
    })");
  ASSERT_EQ(c.nodes.size(), 4u);
  EXPECT_TRUE(c.nodes[0].is_constant);
  EXPECT_TRUE(c.nodes[1].is_constant);
  // w: 6 floats = 24 bytes; v: 3 floats = 12 bytes; total 36.
  ASSERT_EQ(c.weights.size(), 2u);
  EXPECT_EQ(c.total_weight_bytes, 36);
  EXPECT_EQ(c.num_activation_inputs[2], 1);
  EXPECT_EQ(c.num_activation_inputs[3], 1);
  // MatMul 2*1*3*2 = 12 FLOPs; Add 3 FLOPs.
  EXPECT_EQ(c.total_flops, 15);
}

TEST(CostTest, Fp16HalvesFloatWeightsOnly) {
  constexpr std::string_view kModel = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4] x) => (float[4,1] y) <float[4,4] w,
                                         int64[2] shape = {4, 1}> {
      a = MatMul(x, w)
      y = Reshape(a, shape)
    })";
  ModelCosts fp32 = CostsOf(kModel);
  ModelCosts fp16 = CostsOf(kModel, Precision::kFp16);
  // fp32: w 16*4 = 64 bytes + shape 2*8 = 16 bytes = 80.
  EXPECT_EQ(fp32.total_weight_bytes, 80);
  // fp16: w 16*2 = 32 bytes + shape still 16 bytes = 48.
  EXPECT_EQ(fp16.total_weight_bytes, 48);
  // MatMul output [1,4]: 16 bytes at fp32, 8 at fp16.
  ASSERT_EQ(fp16.nodes.size(), 2u);
  EXPECT_EQ(fp32.nodes[0].activation_bytes, 16);
  EXPECT_EQ(fp16.nodes[0].activation_bytes, 8);
  EXPECT_EQ(ElementSizeBytesAt(onnx::TensorProto::DOUBLE, Precision::kFp16), 2);
  EXPECT_EQ(ElementSizeBytesAt(onnx::TensorProto::INT32, Precision::kFp16), 4);
}

TEST(CostTest, IfTakesTheCostlierBranch) {
  ModelCosts c = CostsOf(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (bool cond, float[1,4] x) => (float[1,4] y) <float[4,4] w> {
      y = If (cond) <
        then_branch = g1 () => (float[1,4] y1) { y1 = MatMul(x, w) },
        else_branch = g2 () => (float[1,4] y2) {
          k = Constant <value_floats = [1.0, 2.0, 3.0, 4.0]> ()
          y2 = Add(x, k)
        }>
    })");
  ASSERT_EQ(c.nodes.size(), 1u);
  // then: MatMul 2*1*4*4 = 32 FLOPs; else: Add 4 FLOPs. max = 32.
  EXPECT_EQ(c.nodes[0].flops, 32);
  EXPECT_EQ(c.nodes[0].macs, 16);
  // Reads cond and x (activations) and w (a weight, implicit input), and
  // holds the else branch's constant k (4 floats = 16 bytes).
  EXPECT_EQ(c.num_activation_inputs[0], 2);
  ASSERT_EQ(c.weights.size(), 2u);
  EXPECT_EQ(c.weights[0].name, "w");
  EXPECT_EQ(c.weights[1].name, "n0/body_constants");
  EXPECT_EQ(c.weights[1].size_bytes, 16);
  EXPECT_THAT(c.node_weights[0], ElementsAre(0, 1));
  EXPECT_EQ(c.total_weight_bytes, 64 + 16);
}

TEST(CostTest, NestedBodiesSeeEveryEnclosingScope) {
  ModelCosts c = CostsOf(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (bool cond, float[1,4] x) => (float[1,4] y) <float[4,4] w> {
      y = If (cond) <
        then_branch = g1 () => (float[1,4] y1) {
          y1 = If (cond) <
            then_branch = g3 () => (float[1,4] y3) {
              t = Relu(x)
              y3 = MatMul(t, w)
            },
            else_branch = g4 () => (float[1,4] y4) { y4 = Relu(x) }>
        },
        else_branch = g2 () => (float[1,4] y2) { y2 = Add(x, x) }>
    })");
  ASSERT_EQ(c.nodes.size(), 1u);
  // The inner then-branch reads x and w two scopes out and t from its own:
  // Relu 4 + MatMul 2*1*4*4 = 36 FLOPs (16 MACs). Inner If = max(36, 4) = 36;
  // outer If = max(36, Add 4) = 36.
  EXPECT_EQ(c.nodes[0].flops, 36);
  EXPECT_EQ(c.nodes[0].macs, 16);
  EXPECT_TRUE(c.nodes[0].shapes_known);
  EXPECT_EQ(c.nodes[0].op_class, "control_flow");
  EXPECT_THAT(c.loops_costed_once, IsEmpty());
}

// A chain of If nodes, each reading the previous one's output from its
// branches, built without the text parser (8000 nodes).
TEST(CostTest, IfChainCostIsLinearInItsLength) {
  constexpr int kIfs = 8000;
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
  for (int i = 0; i < kIfs; ++i) {
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
  const TensorInfoMap tensors = CollectTensorInfo(g);
  absl::StatusOr<Graph> graph = Graph::Build(g);
  ASSERT_TRUE(graph.ok()) << graph.status();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<ModelCosts> c =
      ComputeCosts(g, *graph, tensors, CostOptions());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_TRUE(c.ok()) << c.status();
  // Each If: max(Relu 16 x 1, Sigmoid 16 x 4) = 64; 8000 x 64 = 512000.
  EXPECT_EQ(c->total_flops, 512000);
  EXPECT_TRUE(c->nodes[kIfs - 1].shapes_known);
  // Copying the enclosing tensor table per body took ~6.5 s here (O(n^2));
  // scoped lookups take ~20 ms. The bound only catches the quadratic case.
  EXPECT_LT(seconds, 1.0);
}

TEST(CostTest, LoopWithConstantTripCountMultipliesItsBody) {
  ModelCosts c = CostsOf(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (bool cond, float[1,4] x) => (float[1,4] y) <int64 m = {5}> {
      y = Loop (m, cond, x) <body = b (int64 i, bool c, float[1,4] v)
                                      => (bool c2, float[1,4] v2) {
        c2 = Identity(c)
        v2 = Add(v, x)
      }>
    })");
  ASSERT_EQ(c.nodes.size(), 1u);
  // Body: Identity 0 + Add 4 = 4 FLOPs, run M = 5 times: 20.
  EXPECT_EQ(c.nodes[0].flops, 20);
  EXPECT_THAT(c.loops_costed_once, IsEmpty());
  // m is a weight the Loop reads (one int64: 8 bytes).
  EXPECT_EQ(c.total_weight_bytes, 8);
}

TEST(CostTest, LoopWithUnknownTripCountIsCostedOnceAndListed) {
  ModelCosts c = CostsOf(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (int64 m, bool cond, float[1,4] x) => (float[1,4] y, float[1,4] z) {
      y = Loop (m, cond, x) <body = b (int64 i, bool c, float[1,4] v)
                                      => (bool c2, float[1,4] v2) {
        c2 = Identity(c)
        v2 = Add(v, x)
      }>
      z = If (cond) <
        then_branch = g1 () => (float[1,4] z1) {
          r = Relu(x)
          z1 = Loop (m, cond, r) <body = b2 (int64 j, bool c3, float[1,4] u)
                                            => (bool c4, float[1,4] u2) {
            c4 = Identity(c3)
            u2 = Mul(u, x)
          }>
        },
        else_branch = g2 () => (float[1,4] z2) { z2 = Relu(x) }>
    })");
  ASSERT_EQ(c.nodes.size(), 2u);
  // M is a graph input: the body once, 4 FLOPs.
  EXPECT_EQ(c.nodes[0].flops, 4);
  // then: Relu 4 + the inner Loop's body once (Mul 4) = 8; else: Relu 4.
  EXPECT_EQ(c.nodes[1].flops, 8);
  // The nested Loop is the then-branch's second node (index 1), unnamed.
  EXPECT_THAT(c.loops_costed_once, ElementsAre("n0", "n1 > Loop#1"));
}

TEST(CostTest, ScanMultipliesItsBodyByTheScanAxisLength) {
  ModelCosts c = CostsOf(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[4] s0, float[3,4] xs, float[4,5] xt, float[T,4] xu)
        => (float[4] s, float[3,4] ys, float[4] t, float[5,4] yt, float[4] u,
            float[T,4] yu) {
      s, ys = Scan <num_scan_inputs = 1,
                    body = b (float[4] st, float[4] xi)
                             => (float[4] st2, float[4] yi) {
        st2 = Add(st, xi)
        yi = Relu(st2)
      }> (s0, xs)
      t, yt = Scan <num_scan_inputs = 1, scan_input_axes = [-1],
                    body = b2 (float[4] st, float[4] xi)
                              => (float[4] st2, float[4] yi) {
        st2 = Add(st, xi)
        yi = Relu(st2)
      }> (s0, xt)
      u, yu = Scan <num_scan_inputs = 1,
                    body = b3 (float[4] st, float[4] xi)
                              => (float[4] st2, float[4] yi) {
        st2 = Add(st, xi)
        yi = Relu(st2)
      }> (s0, xu)
    })");
  ASSERT_EQ(c.nodes.size(), 3u);
  // Body: Add 4 + Relu 4 = 8 FLOPs. xs [3,4] scanned on axis 0: 3 x 8 = 24.
  EXPECT_EQ(c.nodes[0].flops, 24);
  // xt [4,5] scanned on axis -1: 5 x 8 = 40.
  EXPECT_EQ(c.nodes[1].flops, 40);
  // xu [T,4]: T unknown, the body once (8) and listed.
  EXPECT_EQ(c.nodes[2].flops, 8);
  EXPECT_THAT(c.loops_costed_once, ElementsAre("n2"));
}

TEST(CostTest, DequantizeLinearReadsQuantizedWeights) {
  constexpr std::string_view kModel = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4] x) => (float[1,4] y) <int8[4,4] wq, float s, int8 zp> {
      w = DequantizeLinear(wq, s, zp)
      y = MatMul(x, w)
    })";
  ModelCosts c = CostsOf(kModel);
  ASSERT_EQ(c.nodes.size(), 2u);
  // The DequantizeLinear of constants is not folded: it runs, 16 elements x
  // 2 = 32 FLOPs, and its float output [4,4] is an activation: 64 bytes.
  EXPECT_FALSE(c.nodes[0].is_constant);
  EXPECT_EQ(c.nodes[0].flops, 32);
  EXPECT_EQ(c.nodes[0].activation_bytes, 64);
  EXPECT_EQ(c.nodes[0].op_class, "elementwise");
  // Its weights at their stored size: wq 16 x 1 + s 4 + zp 1 = 21 bytes
  // (not the 64 bytes of the dequantized w).
  ASSERT_EQ(c.weights.size(), 3u);
  EXPECT_EQ(c.total_weight_bytes, 21);
  EXPECT_THAT(c.node_weights[0], ElementsAre(0, 1, 2));
  EXPECT_EQ(c.num_activation_inputs[0], 0);
  // The MatMul reads two activations (x and w) and no weight.
  EXPECT_THAT(c.node_weights[1], IsEmpty());
  EXPECT_EQ(c.num_activation_inputs[1], 2);
  // fp16: s at 2 bytes: 16 + 2 + 1 = 19.
  EXPECT_EQ(CostsOf(kModel, Precision::kFp16).total_weight_bytes, 19);
}

TEST(CostTest, TemporaryAndLargestOutputBytes) {
  constexpr std::string_view kModel = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,8] x, float[1,3,8,8] img)
        => (float[2,16] r, float[1,4,8,8] y, float[2,3] v, int64[2,3] i)
        <float[8,16] w, float[4,3,3,3] k, int64[1] kk = {3}> {
      a = MatMul(x, w)
      r = Relu(a)
      y = Conv <pads = [1, 1, 1, 1]> (img, k)
      v, i = TopK <axis = 1> (r, kk)
    })";
  ModelCosts fp32 = CostsOf(kModel);
  ModelCosts fp16 = CostsOf(kModel, Precision::kFp16);
  ASSERT_EQ(fp32.nodes.size(), 4u);
  ASSERT_EQ(fp16.nodes.size(), 4u);
  EXPECT_EQ(fp32.nodes[0].op_class, "matmul");
  EXPECT_EQ(fp32.nodes[1].op_class, "elementwise");
  EXPECT_EQ(fp32.nodes[2].op_class, "conv");
  EXPECT_EQ(fp32.nodes[3].op_class, "reduction");
  // MatMul: a [2,16] = 32 partial sums x 4 bytes = 128, plus a copy of x
  // [2,8] = 16 elements x 4 = 64 (fp32) or x 2 = 32 (fp16): 192 / 160.
  EXPECT_EQ(fp32.nodes[0].temporary_bytes, 192);
  EXPECT_EQ(fp16.nodes[0].temporary_bytes, 160);
  EXPECT_EQ(fp32.nodes[0].largest_output_bytes, 128);
  EXPECT_EQ(fp16.nodes[0].largest_output_bytes, 64);
  // Relu: not a matmul/conv, no temporary; output 32 x 4 = 128 bytes.
  EXPECT_EQ(fp32.nodes[1].temporary_bytes, 0);
  EXPECT_EQ(fp32.nodes[1].largest_output_bytes, 128);
  // Conv: y [1,4,8,8] = 256 x 4 = 1024, plus img 192 elements x 4 = 768
  // (fp32, 1792) or x 2 = 384 (fp16, 1408).
  EXPECT_EQ(fp32.nodes[2].temporary_bytes, 1792);
  EXPECT_EQ(fp16.nodes[2].temporary_bytes, 1408);
  // TopK: values [2,3] float (24 bytes, 12 at fp16) and indices [2,3] int64
  // (48 bytes at both): the largest is the indices.
  EXPECT_EQ(fp32.nodes[3].largest_output_bytes, 48);
  EXPECT_EQ(fp16.nodes[3].largest_output_bytes, 48);
  EXPECT_EQ(fp16.nodes[3].activation_bytes, 12 + 48);
  EXPECT_EQ(fp32.nodes[3].temporary_bytes, 0);
}

TEST(FlopsTest, OpClassesFromTheRuleTable) {
  struct Case {
    const char* domain;
    const char* op_type;
    const char* op_class;
  };
  const Case cases[] = {
      {"", "Gemm", "matmul"},
      {"", "Einsum", "matmul"},
      {"", "QLinearMatMul", "matmul"},
      {"", "LSTM", "matmul"},
      {"com.microsoft", "FusedMatMul", "matmul"},
      {"com.microsoft", "Attention", "matmul"},
      {"", "ConvTranspose", "conv"},
      {"", "QLinearConv", "conv"},
      {"ai.onnx", "Sigmoid", "elementwise"},
      {"", "QuantizeLinear", "elementwise"},
      {"", "Where", "elementwise"},
      {"", "BatchNormalization", "normalization"},
      {"", "Softmax", "normalization"},
      {"com.microsoft", "SkipLayerNormalization", "normalization"},
      {"", "ReduceMean", "reduction"},
      {"", "GlobalAveragePool", "reduction"},
      {"", "MaxPool", "reduction"},
      {"", "TopK", "reduction"},
      {"", "Reshape", "data_movement"},
      {"", "Gather", "data_movement"},
      {"", "Resize", "data_movement"},
      {"", "Constant", "data_movement"},
      {"", "Loop", "control_flow"},
      {"", "Det", "other"},
      {"com.example", "Relu", "other"},
  };
  for (const Case& c : cases) {
    onnx::NodeProto node;
    node.set_domain(c.domain);
    node.set_op_type(c.op_type);
    EXPECT_EQ(OpClassName(ClassifyOp(node)), c.op_class)
        << c.domain << "." << c.op_type;
  }
}

TEST(CostTest, RejectsGraphOfAnotherProto) {
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] y) { y = Relu(x) })");
  absl::StatusOr<Graph> graph = Graph::Build(model.graph());
  ASSERT_TRUE(graph.ok());
  onnx::GraphProto empty;
  absl::StatusOr<ModelCosts> costs =
      ComputeCosts(empty, *graph, TensorInfoMap(), CostOptions());
  EXPECT_EQ(costs.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace autoshard
