#include "solver/strategies/raw_strategy.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_problems.h"

namespace autoshard {
namespace {

using ::testing::ElementsAre;
using testing::MakeTestProblem;

// n0 = MatMul(x, w0)   400 B, 100 FLOPs
// n1 = Relu(n0)          0 B,  10
// n2 = MatMul(n1, w1)  400 B, 100
// n3 = Add(n2, n0)       0 B,  10   <- candidate (2 activation inputs)
// n4 = MatMul(n3, w2)  400 B, 100
// n5 = Add(n4, n3)       0 B,  10   <- candidate
// n6 = MatMul(n5, w3)  400 B, 100
// Totals: 1600 B, 430 FLOPs; 2 candidates -> averages 800 B, 215 FLOPs.
ShardingProblem ResidualProblem() {
  return MakeTestProblem(
      7, {{0, 1}, {1, 2}, {2, 3}, {0, 3}, {3, 4}, {4, 5}, {3, 5}, {5, 6}},
      {400, 0, 400, 0, 400, 0, 400}, {100, 10, 100, 10, 100, 10, 100});
}

TEST(SubgraphsTest, WalkDropAndLeftoverOnTheResidualProblem) {
  SubgraphSet set(ResidualProblem(), SubgraphOptions{});
  // Walk from n3: {n3, n2, n1, n0} = 800 B, 220 FLOPs: kept (not below avg).
  // Walk from n5: {n5, n4} = 400 B < 800: dropped, nodes released.
  // Leftovers {n4, n5, n6} = 800 B, 210 FLOPs.
  ASSERT_EQ(set.size(), 2);
  EXPECT_EQ(set.num_candidates(), 2);
  EXPECT_EQ(set.subgraphs()[0].start_node, 3);
  EXPECT_THAT(set.subgraphs()[0].nodes, ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(set.subgraphs()[0].weight_bytes, 800);
  EXPECT_EQ(set.subgraphs()[0].flops, 220);
  EXPECT_EQ(set.subgraphs()[1].start_node, kLeftoverStart);
  EXPECT_THAT(set.subgraphs()[1].nodes, ElementsAre(4, 5, 6));
  EXPECT_THAT(set.subgraphs()[1].parents, ElementsAre(0));
  EXPECT_THAT(set.subgraphs()[0].kids, ElementsAre(1));
}

TEST(RawStrategyTest, TwoIpusCutWhereBytesReachHalf) {
  // Target 1600 / 2 = 800 B; subgraph 0 has 800 -> cut after it.
  auto a = RawStrategy(ResidualProblem(), 2);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(a->ipu, ElementsAre(0, 0, 0, 0, 1, 1, 1));
  EXPECT_EQ(a->ipu, a->pipeline_stage);
}

TEST(RawStrategyTest, MoreIpusThanSubgraphsKeepsSmallSubgraphs) {
  // 2 subgraphs < 3 IPUs: rebuilt without dropping -> {n0..n3} 800 B,
  // {n4, n5} 400 B, leftover {n6} 400 B. Target 533: 800 >= 533 cuts after
  // subgraph 0; then only 2 subgraphs remain for 2 IPUs, so a cut is forced.
  auto a = RawStrategy(ResidualProblem(), 3);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(a->ipu, ElementsAre(0, 0, 0, 0, 1, 1, 2));
}

TEST(RawStrategyTest, FrontLoadedWeightsStillFillEveryIpu) {
  // Chain with weights 1000, 1, 1, 1: no candidate, so every node is one;
  // without dropping, 4 one-node subgraphs. Target 1003 / 3 = 334.3.
  // s0: 1000 >= 334 -> cut. s1: running 1 < 334, 2 subgraphs left for 1 cut.
  // s2: 1 subgraph left for 1 cut -> forced. PopRT found one cut and crashed.
  ShardingProblem p = MakeTestProblem(4, {{0, 1}, {1, 2}, {2, 3}},
                                      {1000, 1, 1, 1}, {1, 1, 1, 1});
  SubgraphSet set(p, {.drop_small = false});
  EXPECT_THAT(RawSplitSubgraphs(set, 3), ElementsAre(0, 1, 1, 2));
}

TEST(RawStrategyTest, WithoutWeightsFlopsAreBalanced) {
  // FLOPs 10, 10, 30, 10 (no weights): target 60 / 2 = 30.
  // s0: 0+10 < 30 -> running 10; s1: 10+10 < 30 -> running 20;
  // s2: 20+30 >= 30 -> cut after s2.
  ShardingProblem p = MakeTestProblem(4, {{0, 1}, {1, 2}, {2, 3}}, {0, 0, 0, 0},
                                      {10, 10, 30, 10});
  SubgraphSet set(p, {.drop_small = false});
  EXPECT_THAT(RawSplitSubgraphs(set, 2), ElementsAre(0, 0, 0, 1));
}

TEST(RawStrategyTest, IpuCountOutOfRangeIsAnError) {
  EXPECT_EQ(RawStrategy(ResidualProblem(), 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(RawStrategy(ResidualProblem(), 8).status().message(),
              ::testing::HasSubstr("exceeds the model's 7 nodes"));
  auto seven = RawStrategy(ResidualProblem(), 7);
  ASSERT_TRUE(seven.ok());
  EXPECT_THAT(seven->ipu, ElementsAre(0, 1, 2, 3, 4, 5, 6));
}

TEST(SubgraphsTest, IncludedAndParallelOnADiamond) {
  // n0 -> {n1, n2} -> n3 (merge). Every node a one-node subgraph:
  // n1 and n2 are parallel; n3 includes all; n0 is included by all.
  ShardingProblem p = MakeTestProblem(4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}},
                                      {1, 1, 1, 1}, {1, 1, 1, 1});
  SubgraphSet set(p, {.drop_small = false, .every_node_candidate = true});
  ASSERT_EQ(set.size(), 4);
  EXPECT_TRUE(set.IsParallel(1, 2));
  EXPECT_TRUE(set.Includes(3, 0));  // transitive: 3 -> 1 -> 0
  EXPECT_TRUE(set.Includes(3, 2));
  EXPECT_FALSE(set.Includes(0, 3));
  EXPECT_FALSE(set.IsParallel(0, 3));
}

}  // namespace
}  // namespace autoshard
