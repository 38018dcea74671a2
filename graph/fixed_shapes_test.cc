#include "graph/fixed_shapes.h"

#include <gtest/gtest.h>

#include "base/step_counts.h"
#include "graph/graph.h"
#include "graph/shape_analysis.h"
#include "tests/test_util.h"

namespace autoshard {
namespace {

// x has a symbolic batch. Shape -> Gather gives the batch as propagated data
// (`batch`, which the fixed model's value replaces); Mul by 2 makes a value
// ONNX cannot compute from a symbol (an unknown dim), so Concat and Reshape
// are unknown in the declared inference and known only with batch fixed.
constexpr char kSymbolicBatch[] = R"(
  <ir_version: 8, opset_import: ["" : 14]>
  g (float[batch,3,4] x) => (float[rows,6] y) {
    a = Relu(x)
    s = Shape(a)
    zero = Constant<value = int64[1] {0}>()
    b = Gather<axis = 0>(s, zero)
    two = Constant<value = int64[1] {2}>()
    b2 = Mul(b, two)
    six = Constant<value = int64[1] {6}>()
    shape = Concat<axis = 0>(b2, six)
    r = Reshape(a, shape)
    y = Relu(r)
  })";

// The model with x's batch fixed to 1, as planning fixes it.
onnx::ModelProto Fixed(const onnx::ModelProto& declared) {
  onnx::ModelProto fixed = declared;
  fixed.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_value(1);
  return fixed;
}

const onnx::TensorShapeProto* ShapeOf(const onnx::GraphProto& g,
                                      const std::string& name) {
  for (const auto* list : {&g.value_info(), &g.output()}) {
    for (const auto& vi : *list) {
      if (vi.name() == name) return &vi.type().tensor_type().shape();
    }
  }
  return nullptr;
}

TEST(FixedShapesTest, EqualsAnInferenceOnTheFixedModel) {
  const onnx::ModelProto declared = testing::ParseModelText(kSymbolicBatch);
  onnx::ModelProto want = Fixed(declared);
  ASSERT_TRUE(InferShapes(&want).ok());

  onnx::ModelProto inferred = declared;
  ShapeDataMap data;
  ASSERT_TRUE(InferShapes(&inferred, &data).ok());
  onnx::ModelProto fixed = Fixed(declared);
  ThreadStepCounts() = StepCounts();
  ASSERT_TRUE(InferFixedShapes(inferred, data, &fixed).ok());
  // Byte for byte what ONNX writes: value_info in the same order, with the
  // same dims.
  EXPECT_EQ(fixed.graph().SerializeAsString(),
            want.graph().SerializeAsString());
  // r: batch 1 * 2 = 2 rows of 6 (1*3*4 = 12 = 2*6 elements).
  const onnx::TensorShapeProto* r = ShapeOf(fixed.graph(), "r");
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->dim_size(), 2);
  EXPECT_EQ(r->dim(0).dim_value(), 2);
  EXPECT_EQ(r->dim(1).dim_value(), 6);
  // Relu a, Shape and Gather take their declared results with batch = 1 (the
  // Constants have nothing to infer again); Mul's data is unknown
  // in the declared inference, so it runs, then Concat and Reshape, whose
  // inputs changed, and y, whose recorded type names `rows`: 4 nodes.
  EXPECT_EQ(ThreadStepCounts().node_reinferences, 4);
  EXPECT_EQ(ThreadStepCounts().onnx_inferences, 0);
}

TEST(FixedShapesTest, AnalyzeShapesInfersOnceAndInterfacesKeepTheBatch) {
  onnx::ModelProto declared = testing::ParseModelText(kSymbolicBatch);
  onnx::ModelProto fixed = Fixed(declared);
  absl::StatusOr<Graph> graph = Graph::Build(fixed.graph());
  ASSERT_TRUE(graph.ok()) << graph.status();
  ThreadStepCounts() = StepCounts();
  ModelShapes shapes = AnalyzeShapes(&fixed, "", &*graph, &declared);
  EXPECT_EQ(ThreadStepCounts().onnx_inferences, 1);
  // Planning: a is float[1,3,4], r [2,6].
  EXPECT_EQ(shapes.tensors["a"].dims, (std::vector<int64_t>{1, 3, 4}));
  EXPECT_EQ(shapes.tensors["r"].dims, (std::vector<int64_t>{2, 6}));
  // The stage interfaces: a keeps the model's symbol.
  ASSERT_TRUE(shapes.declared_inferred);
  const InterfaceTypes interfaces =
      InterfaceTypesOf(declared, shapes.declared_recorded, *graph);
  EXPECT_EQ(ThreadStepCounts().onnx_inferences, 1);
  const onnx::TypeProto& a = interfaces.types.at("a");
  ASSERT_EQ(a.tensor_type().shape().dim_size(), 3);
  EXPECT_EQ(a.tensor_type().shape().dim(0).dim_param(), "batch");
}

TEST(FixedShapesTest, AReplacedStaticDimIsRefused) {
  onnx::ModelProto declared = testing::ParseModelText(kSymbolicBatch);
  ShapeDataMap data;
  ASSERT_TRUE(InferShapes(&declared, &data).ok());
  onnx::ModelProto fixed = Fixed(testing::ParseModelText(kSymbolicBatch));
  // x[1] is 3 in the model: 5 is no free dim being fixed.
  fixed.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_value(5);
  const std::string before = fixed.SerializeAsString();
  absl::Status s = InferFixedShapes(declared, data, &fixed);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_EQ(fixed.SerializeAsString(), before);
}

// y's recorded [5,3] agrees with x [batch,3] but not with batch = 1: ONNX's
// inference on the fixed model throws, so InferFixedShapes does too, and
// leaves the model as it was (the caller then runs that inference).
TEST(FixedShapesTest, ARecordTheFixedDimsContradictIsAnError) {
  constexpr char kText[] = R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[batch,3] x) => (float[5,3] y) {
      y = Relu(x)
    })";
  onnx::ModelProto declared = testing::ParseModelText(kText);
  ShapeDataMap data;
  ASSERT_TRUE(InferShapes(&declared, &data).ok());
  onnx::ModelProto want = Fixed(testing::ParseModelText(kText));
  EXPECT_FALSE(InferShapes(&want).ok());
  onnx::ModelProto fixed = Fixed(testing::ParseModelText(kText));
  const std::string before = fixed.SerializeAsString();
  absl::Status s = InferFixedShapes(declared, data, &fixed);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(fixed.SerializeAsString(), before);
}

}  // namespace
}  // namespace autoshard
