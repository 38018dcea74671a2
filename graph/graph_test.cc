#include "graph/graph.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace autoshard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ParseModelText;

TEST(GraphTest, TopologicalOrderOfAFileNotInTopologicalOrder) {
  // File order: n0 = Relu(b), n1 = Relu(x) -> b, n2 = Add(a, c), n3 =
  // Relu(y)->c where a is n0's output. Topological: n1 before n0; n3 before n2.
  onnx::ModelProto m = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x, float[2] y) => (float[2] z) {
      a = Relu(b)
      b = Relu(x)
      z = Add(a, c)
      c = Relu(y)
    })");
  auto g = Graph::Build(m.graph());
  ASSERT_TRUE(g.ok()) << g.status();
  // Ready at start: n1 (x) and n3 (y); lowest id first -> n1, then n0 (now
  // ready, id 0 < 3), then n3, then n2.
  EXPECT_THAT(g->topological_order(), ElementsAre(1, 0, 3, 2));
  EXPECT_THAT(g->producers(2), ElementsAre(0, 3));
  EXPECT_THAT(g->consumers(1), ElementsAre(0));
  EXPECT_EQ(g->producer_of("b"), 1);
  EXPECT_EQ(g->producer_of("x"), kNoNode);
  EXPECT_EQ(g->topo_position(2), 3);
}

TEST(GraphTest, CycleIsAnErrorNamingANodeOnIt) {
  onnx::ModelProto m = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] z) {
      z = Relu(x)
      a = Add(x, c)
      c = Relu(a)
    })");
  auto g = Graph::Build(m.graph());
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("cycle"));
  // n1 and n2 form the cycle; either may be named, never n0.
  EXPECT_THAT(g.status().message(),
              ::testing::AnyOf(HasSubstr("'n1'"), HasSubstr("'n2'")));
}

TEST(GraphTest, TensorProducedTwiceIsAnError) {
  onnx::ModelProto m = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x) => (float[2] z) {
      z = Relu(x)
      z = Sigmoid(x)
    })");
  auto g = Graph::Build(m.graph());
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("produced by two nodes: 'n0'"));
}

TEST(GraphTest, IfBodyOuterScopeReadsAreEdges) {
  // The If's branches read `a` (from n0) and `b` (from n1) from the outer
  // scope; `t` is defined inside the then-branch and is not an outer read.
  onnx::ModelProto m = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x, bool c) => (float[2] z) {
      a = Relu(x)
      b = Sigmoid(x)
      z = If(c) <
        then_branch = then_g () => (float[2] o) { t = Relu(a)  o = Add(t, b) },
        else_branch = else_g () => (float[2] o2) { o2 = Identity(a) }
      >
    })");
  auto g = Graph::Build(m.graph());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->implicit_inputs(2), ElementsAre("a", "b"));
  EXPECT_THAT(g->producers(2), ElementsAre(0, 1));
  EXPECT_THAT(g->consumers(0), ElementsAre(2));
}

TEST(GraphTest, LoopBodyOuterScopeReadIsAnEdgeButItsOwnInputsAreNot) {
  // Loop body inputs (i, cond, acc) are defined by the body; `w` is read from
  // the outer scope (produced by n0).
  onnx::ModelProto m = ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2] x, int64 n, bool c) => (float[2] z) {
      w = Relu(x)
      z = Loop(n, c, x) <
        body = body_g (int64 i, bool cond, float[2] acc) => (bool cond_out, float[2] acc_out) {
          cond_out = Identity(cond)
          acc_out = Add(acc, w)
        }
      >
    })");
  auto g = Graph::Build(m.graph());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(g->implicit_inputs(1), ElementsAre("w"));
  EXPECT_THAT(g->producers(1), ElementsAre(0));
}

TEST(GraphTest, ChainOf100kNodesBuildsWithoutRecursion) {
  onnx::GraphProto graph;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    onnx::NodeProto* node = graph.add_node();
    node->set_op_type("Relu");
    node->add_input(i == 0 ? "x" : "t" + std::to_string(i - 1));
    node->add_output("t" + std::to_string(i));
  }
  auto g = Graph::Build(graph);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->topological_order().back(), n - 1);
}

}  // namespace
}  // namespace autoshard
