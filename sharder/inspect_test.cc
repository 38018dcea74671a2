#include "sharder/inspect.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace autoshard {
namespace {

using ::testing::HasSubstr;

// x: float[1,4]; a = MatMul(x, w0); b = Relu(a); c = Add(b, x);
// y = MatMul(c, w1), w0 and w1 float[4,4].
constexpr const char* kResidual = testing::kResidualModelText;

TEST(InspectTest, TotalsAndPerOpTypeTableByHand) {
  onnx::ModelProto model = testing::ParseModelText(kResidual);
  Options options;
  auto r = InspectModel(model, options);
  ASSERT_TRUE(r.ok()) << r.status();
  // MatMul 1x4 . 4x4: 16 MACs = 32 FLOPs, twice; Relu 4 x 1; Add 4 x 1.
  EXPECT_EQ(r->total_macs(), 32);
  EXPECT_EQ(r->total_flops(), 72);
  EXPECT_EQ(r->total_weight_bytes(), 128);  // 2 x 16 floats
  EXPECT_EQ(r->parameters(), 32);
  EXPECT_EQ(r->num_nodes(), 4);
  EXPECT_EQ(r->opset(), 13);
  EXPECT_EQ(r->min_ipus(), 1);  // a few hundred bytes fit one IPU
  EXPECT_TRUE(r->single_ipu_memory().fits());
  ASSERT_EQ(r->op_types_size(), 3);
  EXPECT_EQ(r->op_types(0).op_type(), "MatMul");  // the costliest first
  EXPECT_EQ(r->op_types(0).count(), 2);
  EXPECT_EQ(r->op_types(0).flops(), 64);
  EXPECT_EQ(r->op_types(0).weight_bytes(), 128);
  EXPECT_EQ(r->unresolved_dims_size(), 0);
  EXPECT_THAT(InspectText(*r),
              HasSubstr("fewest IPUs: 1 (planned as shard --num-ipus auto "
                        "plans: strategy auto)"));
}

TEST(InspectTest, UnresolvedDimsAndFewestIpusOnATinyChip) {
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[N,4] x) => (float[N,4] y) <float[4,4] w0 = {1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1},
                                         float[4,4] w1 = {1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1}> {
      a = MatMul(x, w0)
      y = MatMul(a, w1)
    })");
  Options options;
  // 1 tile of 96 bytes, 4-byte grains, no op classes (so no code bytes).
  options.device.set_name("one-tile");
  options.device.set_tiles_per_ipu(1);
  options.device.set_bytes_per_tile(96);
  options.device.set_peak_fp16_flops_per_s(1e9);
  options.device.set_peak_fp32_flops_per_s(1e9);
  options.device.set_link_bytes_per_s(1e9);
  options.device.set_available_memory_proportion(0.5);
  options.device.set_grain_bytes(4);
  auto r = InspectModel(model, options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->unresolved_dims_size(), 1);
  EXPECT_EQ(r->unresolved_dims(0).input(), "x");
  EXPECT_EQ(r->unresolved_dims(0).name(), "N");
  // N counts as 1. One IPU: 2 x 64 B of weights > 96 B. Two IPUs, one
  // MatMul each: 64 B of weights + 16 B exchange (a, sent or received) +
  // 16 B live activation + 32 B temporaries (4 x 4 B of partials + 4 x 4 B
  // of input; under the 0.5 x 96 = 48 B cap) = 128 B > 96 B.
  EXPECT_FALSE(r->single_ipu_memory().fits());
  EXPECT_EQ(r->min_ipus(), 0);
  EXPECT_EQ(r->min_ipus_strategy(), "auto");
}

// A Conv fed by an op nobody can infer has no shape: counted, named and
// warned about. A NonZero's bound is listed as an assumption.
TEST(InspectTest, NodesWithoutStaticShapesAndAssumptions) {
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13, "custom" : 1]>
    g (float[1,2,4,4] x, bool[3,4] mask) => (float[?,?,?,?] y, int64[?,?] nz) <float[2,2,1,1] w> {
      c = custom.Mystery(x)
      y = Conv(c, w)
      nz = NonZero(mask)
    })");
  auto r = InspectModel(model, Options());
  ASSERT_TRUE(r.ok()) << r.status();
  // n0 (custom, no shape) and n1 (its Conv).
  EXPECT_EQ(r->nodes_without_static_shape(), 2);
  EXPECT_THAT(r->nodes_without_static_shape_names(),
              ::testing::ElementsAre("n0", "n1"));
  ASSERT_EQ(r->heavy_nodes_without_static_shape_size(), 1);
  EXPECT_EQ(r->heavy_nodes_without_static_shape(0), "n1");
  ASSERT_EQ(r->shape_assumptions_size(), 1);
  EXPECT_EQ(r->shape_assumptions(0).node(), "n2");
  EXPECT_EQ(r->shape_assumptions(0).tensor(), "nz");
  EXPECT_EQ(r->shape_assumptions(0).dim(), 1);
  EXPECT_EQ(r->shape_assumptions(0).value(), 12);  // 3 x 4 elements
  const std::string text = InspectText(*r);
  EXPECT_THAT(text, HasSubstr("nodes without a static output shape: 2 "
                              "(Conv/MatMul/Gemm-class: 1: n1)"));
  EXPECT_THAT(text, HasSubstr("(Conv/MatMul/Gemm-class: 1: n1)\n  n0, n1\n"));
  EXPECT_THAT(text, HasSubstr("data-dependent dims set to a bound: 1"));
  EXPECT_THAT(text, HasSubstr("NonZero n2: nz dim 1 = 12"));
  bool warned = false;
  for (const auto& w : r->warnings()) {
    warned |= w.find(
                  "1 Conv/MatMul/Gemm-class nodes have no static output "
                  "shape, so their FLOPs are wrong: n1") != std::string::npos;
  }
  EXPECT_TRUE(warned);
}

// An unresolved input dim is inferred as 1, as it is costed: the Reshape
// that reads it through Shape gets a static shape.
TEST(InspectTest, UnresolvedDimsAreInferredAsOne) {
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[N,6] x) => (float[?,?,?] y) <float[3,5] w> {
      s = Shape(x)
      zero = Constant <value_ints = [0]> ()
      one = Constant <value_ints = [1]> ()
      n = Slice(s, zero, one)
      rest = Constant <value_ints = [-1, 3]> ()
      shape = Concat <axis = 0> (n, rest)
      r = Reshape(x, shape)
      y = MatMul(r, w)
    })");
  auto r = InspectModel(model, Options());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->unresolved_dims_size(), 1);
  EXPECT_EQ(r->nodes_without_static_shape(), 0);
  // r is [N, 6 N / (3 N), 3] = [1, 2, 3] with N = 1, so the MatMul is
  // 1 x 2 x 3 . 3 x 5 = 30 MACs (with N symbolic, [N, ?, 3] would count 15).
  EXPECT_EQ(r->total_macs(), 30);
}

// With L taken as 1, a stride-4 Conv of kernel 7 gets (1 - 7) / 4 + 1 = 0
// outputs (an empty tensor) and a kernel-9 Conv a negative length: both are
// warned about as inputs too small for the model.
TEST(InspectTest, InputsTooSmallForTheModelAreWarnedAbout) {
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,1,L] x) => (float[?,?,?] y, float[?,?,?] z) <float[2,1,7] w7, float[2,1,9] w9> {
      y = Conv <strides = [4]> (x, w7)
      z = Conv(x, w9)
    })");
  auto r = InspectModel(model, Options());
  ASSERT_TRUE(r.ok()) << r.status();
  std::string warnings;
  for (const auto& w : r->warnings()) warnings += w + "\n";
  EXPECT_THAT(warnings, HasSubstr("1 Conv/MatMul/Gemm-class nodes have an "
                                  "empty output (a dim is 0), so the inputs "
                                  "are too small for the model: n0"));
  EXPECT_THAT(warnings,
              HasSubstr("shape inference gives negative dims ('z' [1,2,-7])"));
  EXPECT_THAT(warnings, HasSubstr("have no static output shape, so their "
                                  "FLOPs are wrong: n1"));
}

}  // namespace
}  // namespace autoshard
