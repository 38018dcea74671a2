#include "solver/strategies/sharding_points.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_problems.h"

namespace autoshard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::MakeTestProblem;

// n0 -> {n1, n2} -> n3 -> n4
ShardingProblem Diamond() {
  return MakeTestProblem(5, {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 4}},
                         {0, 0, 0, 0, 0}, {1, 1, 1, 1, 1});
}

TEST(ShardingPointsTest, PointClaimsAncestorsAndLeftoversGoToNextIpu) {
  // n1 claims n1 and n0 for IPU 0; n2, n3, n4 are left over: IPU 1, stage 1.
  auto a = ApplyShardingPoints(Diamond(), {{1, 0, 0}});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(a->ipu, ElementsAre(0, 0, 1, 1, 1));
  EXPECT_THAT(a->pipeline_stage, ElementsAre(0, 0, 1, 1, 1));
  EXPECT_TRUE(ValidateMonotone(Diamond(), *a).ok());
}

TEST(ShardingPointsTest, TwoPointsShareAnIpu) {
  // n1 and n2 both on IPU 0 (n0 claimed by n1, first in topological order);
  // n3 on IPU 1; leftover n4 on IPU 2.
  auto a = ApplyShardingPoints(Diamond(), {{2, 0, 0}, {1, 0, 0}, {3, 1, 1}});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(a->ipu, ElementsAre(0, 0, 0, 1, 2));
}

TEST(ShardingPointsTest, AppliedInStageOrderNotListOrder) {
  // Listed n3 first, but stage 0's n1 goes first: n1, n0 -> 0; n3 claims n3
  // and the still-free n2 -> 1; n4 -> 2.
  auto a = ApplyShardingPoints(Diamond(), {{3, 1, 1}, {1, 0, 0}});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(a->ipu, ElementsAre(0, 0, 1, 1, 2));
}

TEST(ShardingPointsTest, PointThatIsAnAncestorOfAnEarlierStageIsAnError) {
  // Stage 0's n3 claims n0..n3, so stage 1's n1 is already taken.
  auto a = ApplyShardingPoints(Diamond(), {{3, 0, 0}, {1, 1, 1}});
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(),
              HasSubstr("sharding point 'n1' (stage 1) is an ancestor of "
                        "sharding point 'n3'"));
}

TEST(ShardingPointsTest, SameNodeTwiceIsAnError) {
  EXPECT_THAT(
      ApplyShardingPoints(Diamond(), {{1, 0, 0}, {1, 1, 1}}).status().message(),
      HasSubstr("named by two sharding points"));
}

TEST(ShardingPointsTest, MinimalPointsAreTheSinksOfEachStage) {
  // Stage 0 = {n0, n1}: n0 feeds n1 (same stage), n1 feeds only stage 1 ->
  // point n1. Stage 1 = {n2, n3}: n2 feeds n3 -> point n3. Stage 2 = {n4} is
  // the leftover stage: no point.
  Assignment a{{0, 0, 1, 1, 2}, {0, 0, 1, 1, 2}};
  auto points = MinimalShardingPoints(Diamond(), a);
  ASSERT_TRUE(points.ok()) << points.status();
  ASSERT_EQ(points->size(), 2);
  EXPECT_EQ((*points)[0].node, 1);
  EXPECT_EQ((*points)[1].node, 3);
  EXPECT_EQ((*points)[1].ipu, 1);
}

TEST(ShardingPointsTest, MinimalPointsOfParallelBranchesInOneStage) {
  // Stage 0 = {n0, n1, n2}: both branches end in stage 0 -> points n1, n2.
  Assignment a{{0, 0, 0, 1, 1}, {0, 0, 0, 1, 1}};
  auto points = MinimalShardingPoints(Diamond(), a);
  ASSERT_TRUE(points.ok()) << points.status();
  ASSERT_EQ(points->size(), 2);
  EXPECT_EQ((*points)[0].node, 1);
  EXPECT_EQ((*points)[1].node, 2);
}

TEST(ShardingPointsTest, IpuOrStageBeyondTheNodeCountIsAnError) {
  // 5 nodes: IPUs and stages must be in 0..4 (every IPU needs a node).
  EXPECT_THAT(ApplyShardingPoints(Diamond(), {{1, 5, 0}}).status().message(),
              HasSubstr("device 5 and stage 0 must be in 0..4"));
  EXPECT_THAT(
      ApplyShardingPoints(Diamond(), {{1, 0, 2147483647}}).status().message(),
      HasSubstr("must be in 0..4"));
}

TEST(ShardingPointsTest, GapsInIpuNumbersAreAnError) {
  // Point n1 on IPU 3: n0, n1 -> 3; leftovers -> 4; IPUs 0..2 are empty.
  auto a = ApplyShardingPoints(Diamond(), {{1, 3, 3}});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(ValidateAssignment(Diamond(), *a).message(),
              HasSubstr("IPUs 0, 1, 2 get no nodes"));
  Assignment ok{{0, 0, 1, 1, 1}, {0, 0, 1, 1, 1}};
  EXPECT_TRUE(ValidateAssignment(Diamond(), ok).ok());
}

TEST(ShardingPointsTest, BackwardEdgeIsRejected) {
  Assignment a{{1, 0, 0, 1, 1}, {1, 0, 0, 1, 1}};
  absl::Status s = ValidateMonotone(Diamond(), a);
  EXPECT_THAT(s.message(), HasSubstr("edge 'n0' (stage 1) -> 'n1' (stage 0)"));
}

TEST(SinkConstantsTest, ConstantsMoveToTheirLowestReader) {
  // c0 (constant) -> c1 (constant) -> n3 and c1 -> n4; n2 -> n3 -> n4.
  // Split: c0, c1, n2 on IPU 0; n3, n4 on IPU 1. Both constants follow
  // their readers to IPU 1, but then IPU 0 keeps n2.
  ShardingProblem p =
      MakeTestProblem(5, {{0, 1}, {1, 3}, {1, 4}, {2, 3}, {3, 4}},
                      {0, 0, 0, 0, 0}, {0, 0, 1, 1, 1});
  p.is_constant = {1, 1, 0, 0, 0};
  Assignment a;
  a.ipu = a.pipeline_stage = {0, 0, 0, 1, 1};
  Assignment sunk = SinkConstants(p, a);
  EXPECT_THAT(sunk.ipu, ElementsAre(1, 1, 0, 1, 1));
  EXPECT_THAT(sunk.pipeline_stage, ElementsAre(1, 1, 0, 1, 1));
  EXPECT_TRUE(ValidateAssignment(p, sunk).ok());
  // With n2 on IPU 1 too, IPU 0 would be left empty: unchanged.
  a.ipu = a.pipeline_stage = {0, 0, 1, 1, 1};
  EXPECT_THAT(SinkConstants(p, a).ipu, ElementsAre(0, 0, 1, 1, 1));
}

}  // namespace
}  // namespace autoshard
