#include "costmodel/cost_model.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "costmodel/cost_test_util.h"
#include "costmodel/flops_rules.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_graphs.h"

namespace autoshard {
namespace {

using testing::CostsOf;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

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
TEST(CostTest, IfChainCostsEveryIf) {
  // Each If: max(Relu 16 x 1, Sigmoid 16 x 4) = 64 FLOPs; 100 x 64 = 6400.
  // (bench/plan_bench.cc times this on 8000 Ifs: it was quadratic once.)
  onnx::GraphProto g = testing::MakeIfChain(100);
  const TensorInfoMap tensors = CollectTensorInfo(g);
  absl::StatusOr<Graph> graph = Graph::Build(g);
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<ModelCosts> c =
      ComputeCosts(g, *graph, tensors, CostOptions());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->total_flops, 6400);
  EXPECT_TRUE(c->nodes[99].shapes_known);
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

// A sequence of maps (ZipMap's output, as scikit-learn pipelines end) has no
// dims: it is not an unresolved shape (the shapes verdict would call the
// plan "unresolved"), and it costs no tensor bytes.
TEST(CostTest, ASequenceOfMapsIsNotAnUnknownShape) {
  // ONNX 1.12's text format has no seq/map types: the output is declared as
  // a tensor, then typed seq(map(int64, float)) as ZipMap's schema says
  // (ONNX 1.12's strict inference cannot merge a map type: the declared
  // types are the ones costed, as autoshard's fallback does).
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13, "ai.onnx.ml" : 1]>
    g (float[3,2] x) => (float[3,2] z) {
      z = ai.onnx.ml.ZipMap<classlabels_int64s = [0, 1]>(x)
    })");
  onnx::TypeProto_Map* map = model.mutable_graph()
                                 ->mutable_output(0)
                                 ->mutable_type()
                                 ->mutable_sequence_type()
                                 ->mutable_elem_type()
                                 ->mutable_map_type();
  map->set_key_type(onnx::TensorProto::INT64);
  map->mutable_value_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  absl::StatusOr<Graph> graph = Graph::Build(model.graph());
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<ModelCosts> c = ComputeCosts(
      model.graph(), *graph, CollectTensorInfo(model.graph()), CostOptions{});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->nodes.size(), 1u);
  EXPECT_TRUE(c->nodes[0].shapes_known);
  EXPECT_EQ(c->nodes_with_unknown_shapes, 0);
  EXPECT_EQ(c->nodes[0].activation_bytes, 0);
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
