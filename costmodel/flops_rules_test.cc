#include "costmodel/flops_rules.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "costmodel/cost_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace autoshard {
namespace {

using testing::CostsOf;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

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

TEST(FlopsTest, OnnxMlOpsCostOnePerInputElement) {
  ModelCosts c = CostsOf(R"(
    <ir_version: 8, opset_import: ["" : 13, "ai.onnx.ml" : 1]>
    g (float[2,3] x) => (float[2,3] y) {
      y = ai.onnx.ml.Scaler <offset = [0.0, 0.0, 0.0], scale = [1.0, 1.0, 1.0]> (x)
    })");
  ASSERT_EQ(c.nodes.size(), 1u);
  // 2 x 3 input elements, 1 each.
  EXPECT_TRUE(c.nodes[0].has_flops_rule);
  EXPECT_EQ(c.nodes[0].flops, 6);
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

}  // namespace
}  // namespace autoshard
