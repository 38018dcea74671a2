#include "sharder/outputs/dot_graph.h"

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
// 2 -> 3 carries 100 cut bytes.
PlanGraph Chain() {
  PlanGraph g;
  g.model = "chain";
  g.num_ipus = 2;
  for (int i = 0; i < 6; ++i) {
    g.names.push_back("node" + std::to_string(i));
    g.op_types.push_back(i % 2 == 0 ? "Conv" : "Relu");
    g.ipu.push_back(i < 3 ? 0 : 1);
    g.topo_position.push_back(i);
    if (i > 0) g.edges.push_back({i - 1, i, i == 3 ? 100 : 0});
  }
  return g;
}

TEST(PlanDotTest, RunsGroupNodesAndCountThem) {
  DotOptions options;
  options.detail = GraphDetail::kRuns;
  options.max_runs = 4;  // 2 runs per IPU of ceil(3 / 2) = 2 nodes
  const std::string dot = PlanDot(Chain(), options);
  EXPECT_THAT(dot, HasSubstr("r0_0 [label=\"2 nodes\\nnode0\\n... node1\\n"
                             "Conv x1, Relu x1\""));
  EXPECT_THAT(dot, HasSubstr("r0_1 [label=\"1 node\\nnode2\\nConv x1\""));
  EXPECT_THAT(dot, HasSubstr("r1_0 [label=\"2 nodes\\nnode3\\n... node4\\n"));
  // Edges inside a run vanish; 1->2 and 4->5 join runs of one IPU, 2->3 is
  // the cut, labelled with its bytes.
  EXPECT_THAT(dot, HasSubstr("  r0_0 -> r0_1;\n"));
  EXPECT_THAT(dot, HasSubstr("  r1_0 -> r1_1;\n"));
  EXPECT_THAT(dot, HasSubstr("  r0_1 -> r1_0 [color=\"#c0392b\", penwidth=2, "
                             "fontcolor=\"#c0392b\", fontsize=9, label=\"100 "
                             "B\"];\n"));
  EXPECT_THAT(dot, Not(HasSubstr(" n0 ")));
  EXPECT_THAT(dot, HasSubstr("label=\"IPU 1: 3 nodes\""));
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
