#include "writers/dot_graph.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace autoshard {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The residual model (tests/test_util.h: n0 = MatMul, n1 = Relu, n2 = Add,
// n3 = MatMul) split after the Relu: n0, n1 on IPU 0; n2, n3 on IPU 1.
Plan ResidualOnTwoIpus(const onnx::ModelProto& model) {
  Options options;
  options.shapes.batch_size = 1;
  auto plan =
      PlanFromShardingPoints(model, options, {{"n1", 0, 0}, {"n3", 1, 1}});
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : Plan{};
}

TEST(CutTensorsTest, TheReluOutputCrossesOnce) {
  const onnx::ModelProto model =
      testing::ParseModelText(testing::kResidualModelText);
  const Plan plan = ResidualOnTwoIpus(model);
  // b = Relu(a) is float[1,4]: 4 x 4 bytes = 16, read by n2 on IPU 1; x is a
  // graph input, not a cut tensor.
  ASSERT_EQ(plan.proto.cut_tensors_size(), 1);
  const proto::CutTensor& b = plan.proto.cut_tensors(0);
  EXPECT_EQ(b.tensor(), "b");
  EXPECT_EQ(b.producer(), "n1");
  EXPECT_EQ(b.from_ipu(), 0);
  EXPECT_THAT(b.reader_ipus(), ::testing::ElementsAre(1));
  EXPECT_EQ(b.bytes(), 16);
}

TEST(PlanDotTest, GoldenResidualModelOnTwoIpus) {
  const onnx::ModelProto model =
      testing::ParseModelText(testing::kResidualModelText);
  Plan plan = ResidualOnTwoIpus(model);
  plan.proto.set_model("residual.onnx");
  auto graph = MakePlanGraph(model.graph(), plan.proto);
  ASSERT_TRUE(graph.ok()) << graph.status();
  // Edges n0->n1 (a), n1->n2 (b, cut: 16 B), n2->n3 (c).
  ASSERT_EQ(graph->edges.size(), 3u);
  EXPECT_EQ(graph->edges[1].cut_bytes, 16);
  const std::string dot = PlanDot(*graph);
  const std::string path =
      std::string(AUTOSHARD_SOURCE_DIR) + "/tests/golden/residual_2ipus.dot";
  if (std::getenv("AUTOSHARD_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << dot;
  }
  std::ifstream golden(path);
  std::stringstream want;
  want << golden.rdbuf();
  EXPECT_EQ(dot, want.str())
      << "when the change is meant, regenerate the file with "
         "AUTOSHARD_UPDATE_GOLDEN=1 and read its diff";
}

// A chain 0 -> 1 -> ... -> 5, nodes 0-2 on IPU 0 and 3-5 on IPU 1; the edge
// 2 -> 3 carries the cut tensor t3 of 100 bytes.
PlanGraph Chain() {
  PlanGraph g;
  g.model = "chain";
  g.num_ipus = 2;
  for (int i = 0; i < 6; ++i) {
    g.names.push_back("node" + std::to_string(i));
    g.op_types.push_back(i % 2 == 0 ? "Conv" : "Relu");
    g.ipu.push_back(i < 3 ? 0 : 1);
    g.topo_position.push_back(i);
    if (i == 3) {
      g.edges.push_back({i - 1, i, 100, {0}});
    } else if (i > 0) {
      g.edges.push_back({i - 1, i, 0, {}});
    }
  }
  g.tensors.push_back({"t3", 100});
  return g;
}

TEST(PlanDotTest, RunsGroupNodesAndCountThem) {
  DotOptions options;
  options.detail = GraphDetail::kRuns;
  options.max_runs = 4;  // 2 runs per IPU of ceil(3 / 2) = 2 nodes
  const std::string dot = PlanDot(Chain(), options);
  EXPECT_THAT(dot, HasSubstr("r0_0 [label=\"2 nodes\\nnode0\\nto node1\\n"
                             "Conv x1, Relu x1\""));
  EXPECT_THAT(dot, HasSubstr("r0_1 [label=\"1 node\\nnode2\\nConv x1\""));
  EXPECT_THAT(dot, HasSubstr("r1_0 [label=\"2 nodes\\nnode3\\nto node4\\n"));
  // Edges inside a run vanish; 1->2 and 4->5 join runs of one IPU, 2->3 is
  // the cut, labelled with its bytes.
  EXPECT_THAT(dot, HasSubstr("    r0_0 -> r0_1;\n"));
  EXPECT_THAT(dot, HasSubstr("    r1_0 -> r1_1;\n"));
  // The cut as two stubs, no line between the clusters.
  EXPECT_THAT(dot, HasSubstr("i0 [shape=note, style=\"filled\", fillcolor=\""
                             "#ffffff\", color=\"#c0392b\", fontcolor=\""
                             "#c0392b\", fontsize=8, label=\"from IPU 0: t3\\n"
                             "100 B\"];\n    i0 -> r1_0 [color=\"#c0392b\", "
                             "penwidth=2];\n"));
  EXPECT_THAT(dot,
              HasSubstr("label=\"to IPU 1: t3\\n100 B\"];\n    r0_1 -> o0 "));
  EXPECT_THAT(dot, Not(HasSubstr("r0_1 -> r1_0")));
  EXPECT_THAT(dot, Not(HasSubstr(" n0 ")));
  EXPECT_THAT(dot, HasSubstr("label=\"IPU 1: 3 nodes\""));
  // The first run of each IPU hangs from its title; the second is fed.
  EXPECT_THAT(dot, HasSubstr("t1 -> r1_0 [style=invis]"));
  EXPECT_THAT(dot, Not(HasSubstr("t1 -> r1_1")));
}

TEST(PlanDotTest, AutoDrawsNodesUpToTheLimitThenRuns) {
  DotOptions options;
  options.max_nodes = 6;
  EXPECT_THAT(PlanDot(Chain(), options),
              HasSubstr("n5 [label=\"node5\\nRelu\""));
  options.max_nodes = 5;
  EXPECT_THAT(PlanDot(Chain(), options), HasSubstr("boxes are runs of nodes"));
}

TEST(PlanDotTest, NamesAreEscaped) {
  PlanGraph g = Chain();
  g.names[0] = "a\"b\\c";
  EXPECT_THAT(PlanDot(g), HasSubstr("n0 [label=\"a\\\"b\\\\c\\nConv\""));
}

TEST(PlanDotTest, EachIpuIsOnePieceInOrderUnderItsTitle) {
  PlanGraph g = Chain();
  g.num_ipus = 3;
  g.ipu = {0, 0, 1, 1, 2, 2};
  const std::string dot = PlanDot(g);
  // No cluster label for an edge to cross; a title node per IPU instead,
  // the clusters in IPU order.
  EXPECT_THAT(dot, HasSubstr("label=\"\"; style=\"rounded,filled\""));
  EXPECT_THAT(dot, HasSubstr("t2 [shape=plaintext, style=\"\", fontsize=12, "
                             "label=\"IPU 2: 2 nodes\"];"));
  EXPECT_LT(dot.find("cluster_ipu0"), dot.find("cluster_ipu1"));
  EXPECT_LT(dot.find("cluster_ipu1"), dot.find("cluster_ipu2"));
  // Node 2 (IPU 1's first) is fed from IPU 0 only: it hangs from t1.
  EXPECT_THAT(dot, HasSubstr("    t1 -> n2 [style=invis];\n"));
  EXPECT_THAT(dot, Not(HasSubstr("t1 -> n3")));
  // No line between clusters, and no stub where the plan lists no cut
  // tensor (n1 -> n2 here).
  EXPECT_THAT(dot, Not(HasSubstr("n1 -> n2")));
  EXPECT_THAT(dot, Not(HasSubstr("to IPU 1")));
}

TEST(PlanDotTest, AStubNamesItsLargestTensorAndCountsEachTensorOnce) {
  PlanGraph g = Chain();
  // Node 2 sends three tensors to nodes 3 and 4 on IPU 1; node 4 reads two
  // of those node 3 reads too. 60 + 30 + 10 = 100 bytes, not 60 + 30 +
  // 10 + 30 + 10.
  g.tensors = {{"/layers.0/mlp/y", 30},
               {"/layers.0/mlp/out", 60},
               {"/layers.0/mlp/z", 10}};
  g.edges[2].cut = {0, 1, 2};
  g.edges[2].cut_bytes = 100;
  g.edges.push_back({2, 4, 40, {0, 2}});
  const std::string dot = PlanDot(g);
  EXPECT_THAT(dot, HasSubstr("label=\"to IPU 1: /layers.0/mlp/out +2\\n100 "
                             "B\"];\n    n2 -> o0 "));
  EXPECT_THAT(dot, Not(HasSubstr("o1 ")));  // one stub for IPU 1
  // On IPU 1 each reader gets its own: node 3 all three, node 4 two.
  EXPECT_THAT(dot, HasSubstr("label=\"from IPU 0: /layers.0/mlp/out +2\\n"
                             "100 B\"];\n    i0 -> n3 "));
  EXPECT_THAT(dot, HasSubstr("label=\"from IPU 0: /layers.0/mlp/y +1\\n40 "
                             "B\"];\n    i1 -> n4 "));
}

TEST(PlanDotTest, StubsOverTheLimitShareOneDashedStubPerPairOfIpus) {
  PlanGraph g = Chain();
  g.tensors = {{"a", 100}, {"b", 50}};
  g.edges[2].cut = {0};
  g.edges.push_back({1, 4, 50, {1}});
  g.edges.push_back({0, 5, 100, {0}});  // a again: 100 + 50 B in all
  DotOptions options;
  options.max_cut_edges = 1;
  const std::string dot = PlanDot(g, options);
  // Out: nodes 0 and 2 each send "a" (100 B; a tie keeps the boxes'
  // order), node 1 "b" (50 B). Node 0's gets its own stub; nodes 2 and 1,
  // over the limit, share one on the larger (node 2): a and b, 150 B.
  EXPECT_THAT(dot, HasSubstr("label=\"to IPU 1: a\\n100 B\"];\n    n0 -> o0"));
  EXPECT_THAT(dot, HasSubstr("label=\"to IPU 1: +2 tensors\\n150 B\"];\n"
                             "    n2 -> o1 [color=\"#c0392b\", penwidth=2, "
                             "style=dashed];"));
}

TEST(CommonNamePrefixTest, EndsAfterASeparator) {
  EXPECT_EQ(CommonNamePrefix({"/model/layers.0/MatMul", "/model/layers.1/Add",
                              "/model/norm/Mul"}),
            "/model/");
  // "layers.1" and "layers.11" share "layers.1", cut back to "layers.".
  EXPECT_EQ(CommonNamePrefix({"/m/layers.1/Add", "/m/layers.11/Add"}),
            "/m/layers.");
  EXPECT_EQ(CommonNamePrefix({"conv1", "conv2"}), "");
  EXPECT_EQ(CommonNamePrefix({"/features/0/Conv", "/classifier/Flatten"}), "");
  EXPECT_EQ(CommonNamePrefix({"/model/only"}), "");
}

TEST(ShortNameTest, DropsThePrefixThenKeepsTheEnd) {
  EXPECT_EQ(ShortName("/model/layers.3/attn/MatMul", "/model/"),
            "layers.3/attn/MatMul");
  // 43 characters after the prefix, cut to 20: "..." + the last 17.
  EXPECT_EQ(ShortName("/model/transformer/encoder/layers.11/attn/q/MatMul",
                      "/model/", 20),
            "....11/attn/q/MatMul");
  EXPECT_EQ(ShortName("/other/x", "/model/"), "/other/x");
  // A name that is the prefix alone keeps it rather than becoming empty.
  EXPECT_EQ(ShortName("/model/", "/model/"), "/model/");
}

TEST(MakePlanGraphTest, RefusesAPlanOfAnotherGraph) {
  const onnx::ModelProto model =
      testing::ParseModelText(testing::kResidualModelText);
  proto::Plan plan;
  plan.set_num_ipus(1);
  plan.add_nodes()->set_node("n0");
  auto graph = MakePlanGraph(model.graph(), plan);
  EXPECT_EQ(graph.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(ParseGraphDetailTest, KnowsThreeWords) {
  EXPECT_EQ(*ParseGraphDetail("runs"), GraphDetail::kRuns);
  EXPECT_EQ(*ParseGraphDetail("nodes"), GraphDetail::kNodes);
  EXPECT_EQ(ParseGraphDetail("all").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace autoshard
