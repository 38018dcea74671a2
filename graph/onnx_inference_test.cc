// One driver of ONNX's inference (issue 25, point 6): every path that runs
// ONNX's inference (planning's shapes, the dim-conflict check, the split's
// stage check, the per-node runs of shape propagation) goes through
// graph/onnx_inference.h, which counts it.
#include "graph/onnx_inference.h"

#include <string>

#include "base/step_counts.h"
#include "gmock/gmock.h"
#include "graph/dim_conflicts.h"
#include "graph/shape_propagation.h"
#include "graph/shapes.h"
#include "gtest/gtest.h"
#include "tests/shape_propagation_fixture.h"
#include "tests/test_util.h"

namespace autoshard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kRelu[] = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,8] x) => (float[2,8] y) {
      y = Relu(x)
    })";

// Each purpose is one run of the same function, counted in its own counter.
TEST(OnnxInferenceTest, WholeModelRunsAreCountedByPurpose) {
  ThreadStepCounts() = StepCounts();
  onnx::ModelProto model = testing::ParseModelText(kRelu);
  ASSERT_TRUE(InferShapes(&model).ok());
  onnx::ModelProto check = testing::ParseModelText(kRelu);
  absl::StatusOr<std::string> dims =
      RunOnnxInference(&check, InferencePurpose::kDimCheck);
  ASSERT_TRUE(dims.ok()) << dims.status();
  EXPECT_EQ(*dims, "");  // Relu of [2,8]: nothing to refuse
  onnx::ModelProto stage = testing::ParseModelText(kRelu);
  absl::StatusOr<std::string> strict =
      RunOnnxInference(&stage, InferencePurpose::kStageCheck);
  ASSERT_TRUE(strict.ok()) << strict.status();
  EXPECT_EQ(*strict, "");
  const StepCounts counts = ThreadStepCounts();
  EXPECT_EQ(counts.onnx_inferences, 1);
  EXPECT_EQ(counts.dim_checks, 1);
  EXPECT_EQ(counts.stage_inferences, 1);
  EXPECT_EQ(counts.node_inferences, 0);  // whole-model runs only
}

// The stage check type-checks: Relu of an int64 input is no Relu of ONNX
// 1.12 (float types only), which the planning run lets pass.
TEST(OnnxInferenceTest, StageCheckIsStrictPlanningIsNot) {
  constexpr char kIntRelu[] = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (int64[2] x) => (int64[2] y) {
      y = Relu(x)
    })";
  onnx::ModelProto planning = testing::ParseModelText(kIntRelu);
  EXPECT_TRUE(InferShapes(&planning).ok());
  onnx::ModelProto stage = testing::ParseModelText(kIntRelu);
  absl::StatusOr<std::string> strict =
      RunOnnxInference(&stage, InferencePurpose::kStageCheck);
  ASSERT_TRUE(strict.ok()) << strict.status();
  EXPECT_THAT(*strict, HasSubstr("Relu"));
}

// The dim-conflict check's runs are the driver's: --batch-size 4 on x
// declared [1,3], Concat on axis 1 with an input c [1,3]: dim 0 is 4 against
// 1, a conflict at the options' dims (run 1) that the declared dims do not
// have (run 2): two dim_checks, no planning inference.
TEST(OnnxInferenceTest, DimCheckRunsThroughTheDriver) {
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[4,3] x, float[1,3] c) => (float[?,?] y) {
      y = Concat <axis = 1> (x, c)
    })");
  onnx::ModelProto declared_model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,3] x, float[1,3] c) => (float[?,?] y) {
      y = Concat <axis = 1> (x, c)
    })");
  ThreadStepCounts() = StepCounts();
  const absl::Status s =
      CheckOptionDims(model, declared_model.graph().input(), "--batch-size 4");
  EXPECT_THAT(std::string(s.message()), HasSubstr("(Concat)"));
  EXPECT_EQ(ThreadStepCounts().dim_checks, 2);
  EXPECT_EQ(ThreadStepCounts().onnx_inferences, 0);
}

// Shape propagation's per-node runs are the driver's too: Range's limit is
// Size(x) = 100 x 1000 = 100000, known only to the pass, which runs ONNX's
// Range inference again with it (and Reshape's with the computed target
// [100000 / 8, 8] = [12500, 8]).
TEST(OnnxInferenceTest, NodeRunsOfShapePropagationAreCounted) {
  onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[100,1000] x) => (int64[?] r, float[?,?] x2) {
      n = Size(x)
      zero = Constant <value_int = 0> ()
      one = Constant <value_int = 1> ()
      r = Range(zero, n, one)
      shape = Shape(r)
      eight = Constant <value_ints = [8]> ()
      rows = Div(shape, eight)
      target = Concat <axis = 0> (rows, eight)
      x2 = Reshape(x, target)
    })");
  ThreadStepCounts() = StepCounts();
  testing::Propagated p = testing::PropagateModel(model);
  EXPECT_THAT(p.Dims("r"), ElementsAre(100000));
  EXPECT_THAT(p.Dims("x2"), ElementsAre(12500, 8));
  EXPECT_EQ(ThreadStepCounts().onnx_inferences, 1);  // the fixture's
  EXPECT_GE(ThreadStepCounts().node_inferences, 1);  // Range, at least
}

}  // namespace
}  // namespace autoshard
