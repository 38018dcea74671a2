// The shape propagation pass over If, Loop, Scan and sequences
// (graph/shape_propagation_control.cc).
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "graph/shape_propagation.h"
#include "gtest/gtest.h"
#include "tests/shape_propagation_fixture.h"

namespace autoshard {
namespace {

using testing::BodyDims;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Propagate;
using testing::Propagated;
using testing::PropagateModel;

// An If whose condition is computed from shapes picks its branch exactly;
// the branch reads the outer scope's computed values.
TEST(ShapePropagationTest, IfWithAKnownConditionTakesItsBranch) {
  Propagated p = Propagate(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,4] x, bool c_in) => (float[?,?] y, float[?,?] u) {
      s = Shape(x)
      i0 = Constant <value_int = 0> ()
      rows = Gather(s, i0)
      two = Constant <value_int = 2> ()
      c = Equal(rows, two)
      y = If (c) <then_branch = t () => (float[?,?] a) {
            shape = Constant <value_ints = [4, 2]> ()
            a = Reshape(x, shape)
          }, else_branch = e () => (float[?,?] b) {
            b = Identity(x)
          }>
      u = If (c_in) <then_branch = t2 () => (float[?,?] a2) {
            shape2 = Constant <value_ints = [4, 2]> ()
            a2 = Reshape(x, shape2)
          }, else_branch = e2 () => (float[?,?] b2) {
            b2 = Identity(x)
          }>
    })");
  EXPECT_THAT(p.Dims("y"), ElementsAre(4, 2));  // rows == 2: then_branch
  // Unknown condition: the larger branch per dim, max(4, 2) x max(2, 4).
  EXPECT_THAT(p.Dims("u"), ElementsAre(4, 4));
  ASSERT_EQ(p.result.assumptions.size(), 2u);
  EXPECT_EQ(p.result.assumptions[0].op_type, "If");
  EXPECT_THAT(p.result.assumptions[0].reason, HasSubstr("larger"));
}

// Loop scan outputs get the trip count: exact when the loop cannot stop
// early, a bound when its condition is computed, 1 when M is unknown. A
// loop-carried value that grows loses the growing dim.
TEST(ShapePropagationTest, LoopTripCounts) {
  Propagated p = Propagate(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,4] x, int64 m_in) => (float[?,?,?] s1, float[?,?,?] s2, float[?,?,?] s3, float[?,?] grown) {
      m = Constant <value_int = 3> ()
      yes = Constant <value = bool[1] {1}> ()
      x1, s1 = Loop (m, yes, x) <body = b1 (int64 i, bool ci, float[?,?] xi) => (bool co, float[?,?] xo, float[?,?] so) {
        co = Identity(ci)
        xo = Relu(xi)
        so = Relu(xi)
      }>
      x2, s2 = Loop (m, yes, x) <body = b2 (int64 i2, bool ci2, float[?,?] xi2) => (bool co2, float[?,?] xo2, float[?,?] so2) {
        zero = Constant <value_int = 0> ()
        co2 = Greater(i2, zero)
        xo2 = Relu(xi2)
        so2 = Relu(xi2)
      }>
      x3, s3 = Loop (m_in, , x) <body = b3 (int64 i3, bool ci3, float[?,?] xi3) => (bool co3, float[?,?] xo3, float[?,?] so3) {
        co3 = Identity(ci3)
        xo3 = Relu(xi3)
        so3 = Relu(xi3)
      }>
      grown = Loop (m, , x) <body = b4 (int64 i4, bool ci4, float[?,?] xi4) => (bool co4, float[?,?] xo4) {
        co4 = Identity(ci4)
        xo4 = Concat <axis = 0> (xi4, xi4)
      }>
    })");
  EXPECT_THAT(p.Dims("x1"), ElementsAre(2, 4));
  EXPECT_THAT(p.Dims("s1"), ElementsAre(3, 2, 4));
  EXPECT_THAT(p.Dims("s2"), ElementsAre(3, 2, 4));
  EXPECT_THAT(p.Dims("s3"), ElementsAre(1, 2, 4));
  // Rows double every trip: only the columns hold in every iteration.
  EXPECT_THAT(p.Dims("grown"), ElementsAre(-1, 4));
  ASSERT_EQ(p.result.assumptions.size(), 2u);
  EXPECT_EQ(p.result.assumptions[0].tensor, "s2");
  EXPECT_THAT(p.result.assumptions[0].reason, HasSubstr("at most the trip"));
  EXPECT_EQ(p.result.assumptions[1].tensor, "s3");
  EXPECT_EQ(p.result.assumptions[1].value, 1);
  // The body's own tensors got their shapes too (written to its value_info).
  const onnx::GraphProto& body = p.model.graph().node(2).attribute(0).g();
  EXPECT_THAT(BodyDims(body, "so"), ElementsAre(2, 4));
}

// Sequences: split into 3 pieces, one taken out, counted and stacked back;
// and a Loop that appends one [2] element per trip to an empty sequence, 4
// trips (exact), or an unknown number (1, an assumption).
TEST(ShapePropagationTest, SequencesAndLoopsThatGrowThem) {
  // ONNX 1.12's text syntax has no sequence types: the bodies' s_* are
  // declared float[?] and made sequences of float below.
  onnx::ModelProto m = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[6,2] x, int64 m_in) => (float[?,?] at, int64 len, float[?,?,?] stacked, float[?,?] grown, float[?,?] grown2) {
      pieces = SplitToSequence <axis = 0> (x, two)
      two = Constant <value_int = 2> ()
      zero = Constant <value_int = 0> ()
      at = SequenceAt(pieces, zero)
      len = SequenceLength(pieces)
      stacked = ConcatFromSequence <axis = 0, new_axis = 1> (pieces)
      empty = SequenceEmpty <dtype = 1> ()
      four = Constant <value_int = 4> ()
      seq = Loop (four, , empty) <body = b (int64 i, bool ci, float[?] s_in) => (bool co, float[?] s_out) {
        co = Identity(ci)
        row = Constant <value = float[2] {1, 2}> ()
        s_out = SequenceInsert(s_in, row)
      }>
      grown = ConcatFromSequence <axis = 0, new_axis = 1> (seq)
      seq2 = Loop (m_in, , empty) <body = b2 (int64 i2, bool ci2, float[?] s_in2) => (bool co2, float[?] s_out2) {
        co2 = Identity(ci2)
        row2 = Constant <value = float[2] {1, 2}> ()
        s_out2 = SequenceInsert(s_in2, row2)
      }>
      grown2 = ConcatFromSequence <axis = 0, new_axis = 1> (seq2)
    })");
  for (auto& node : *m.mutable_graph()->mutable_node()) {
    if (node.op_type() != "Loop") continue;
    onnx::GraphProto* body = node.mutable_attribute(0)->mutable_g();
    for (auto* vi : {body->mutable_input(2), body->mutable_output(1)}) {
      onnx::TypeProto seq;
      seq.mutable_sequence_type()
          ->mutable_elem_type()
          ->mutable_tensor_type()
          ->set_elem_type(onnx::TensorProto::FLOAT);
      *vi->mutable_type() = seq;
    }
  }
  Propagated p = PropagateModel(std::move(m));
  EXPECT_THAT(p.Dims("at"), ElementsAre(2, 2));  // 6 rows in chunks of 2
  EXPECT_THAT(p.Dims("len"), ElementsAre());     // a scalar: 3
  EXPECT_THAT(p.Dims("stacked"), ElementsAre(3, 2, 2));
  EXPECT_THAT(p.Dims("grown"), ElementsAre(4, 2));   // 4 trips x one [2]
  EXPECT_THAT(p.Dims("grown2"), ElementsAre(1, 2));  // M unknown: 1
  ASSERT_EQ(p.result.assumptions.size(), 1u);
  EXPECT_EQ(p.result.assumptions[0].tensor, "seq2");
  EXPECT_THAT(p.result.assumptions[0].reason, HasSubstr("sequence length"));
}

// Scan over axis 0 of a [5, 3] input: a [3] slice per step, 5 steps.
TEST(ShapePropagationTest, ScanOutputsHaveTheScanLength) {
  Propagated p = Propagate(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[5,3] x, float[3] init) => (float[?] last, float[?,?] all) {
      last, all = Scan (init, x) <num_scan_inputs = 1, body = b (float[?] acc, float[?] xt) => (float[?] acc_out, float[?] yt) {
        acc_out = Add(acc, xt)
        yt = Relu(xt)
      }>
    })");
  EXPECT_THAT(p.Dims("last"), ElementsAre(3));
  EXPECT_THAT(p.Dims("all"), ElementsAre(5, 3));
}

}  // namespace
}  // namespace autoshard
