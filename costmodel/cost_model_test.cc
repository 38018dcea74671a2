#include "costmodel/cost_model.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
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
