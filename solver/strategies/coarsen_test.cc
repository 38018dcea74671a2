#include "solver/strategies/coarsen.h"

#include <random>

#include "gtest/gtest.h"
#include "tests/brute_force.h"
#include "tests/test_problems.h"

namespace autoshard {
namespace {

using ::autoshard::testing::BestMonotone;
using ::autoshard::testing::MakeTestProblem;
using ::autoshard::testing::RandomDag;
using ::autoshard::testing::ToyChip;

// n0 -> n1 -> n2 -> n3, and s -> n2 (s reads nothing, only n2 reads it);
// nodes in the order n0, s, n1, n2, n3, 1 s each on the toy chip.
ShardingProblem SideInput() {
  return MakeTestProblem(5, {{0, 2}, {2, 3}, {1, 3}, {3, 4}}, {0, 0, 0, 0, 0},
                         {1e9, 1e9, 1e9, 1e9, 1e9});
}

// Groups of at most 2 s: n0 and n1 (1 + 1 s); s alone, since n2 joining
// n0's group with s would make 4 s; n2 starts a group n3 joins (2 s).
TEST(CoarsenTest, MergesChainsUpToTheCap) {
  const ShardingProblem p = SideInput();
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  const Coarsened c = Coarsen(p, model, 2.0);
  EXPECT_EQ(c.group_of, (std::vector<int32_t>{0, 1, 0, 2, 2}));
  ASSERT_EQ(c.problem.num_nodes(), 3);
  EXPECT_EQ(c.problem.producers[2], (std::vector<int32_t>{0, 1}));
  // Splitting the groups {0, 1} | {2} is splitting the nodes {n0, s, n1} |
  // {n2, n3}: 3 s + 2 x 16 ns out, and 2 s + 32 ns in.
  DeviceModel coarse(c.problem, ToyChip(), Precision::kFp32);
  const double groups =
      coarse.EvaluatePerformance({0, 0, 1}, 2, 1).bottleneck_s;
  const std::vector<int32_t> ipu = Refine(p, c, {0, 0, 1});
  EXPECT_EQ(ipu, (std::vector<int32_t>{0, 0, 0, 1, 1}));
  EXPECT_NEAR(groups, 3.000000032, 1e-12);
  EXPECT_NEAR(model.EvaluatePerformance(ipu, 2, 1).bottleneck_s, groups, 1e-12);
}

// With 4 s the source joins too: {n0, s, n1, n2} (4 s) and {n3}.
TEST(CoarsenTest, ALoneSourceJoinsItsReader) {
  const ShardingProblem p = SideInput();
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  EXPECT_EQ(Coarsen(p, model, 4.0).group_of,
            (std::vector<int32_t>{0, 0, 0, 0, 1}));
}

// Host capability splits groups (issue 31): n0 runs only on the host (1 s
// there), n3 may (1 s), s, n1 and n2 may not. With 4 s n0 stays alone (a
// group of it and n1 could run nowhere), s joins n1's group with n2 (1 + 1
// + 1 s), and n3 stays alone (with them it would lose the host): {n0},
// {s, n1, n2}, {n3}; each group's host time is its members'.
TEST(CoarsenTest, NeverMergesNodesOfDifferentHostCapability) {
  ShardingProblem p = SideInput();
  p.num_host_devices = 1;
  p.host_time_s = {1, -1, -1, -1, 1};
  p.host_only = {1, 0, 0, 0, 0};
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  const Coarsened c = Coarsen(p, model, 4.0);
  EXPECT_EQ(c.group_of, (std::vector<int32_t>{0, 1, 1, 1, 2}));
  EXPECT_EQ(c.problem.host_only, (std::vector<uint8_t>{1, 0, 0}));
  EXPECT_EQ(c.problem.host_time_s, (std::vector<double>{1, -1, 1}));
}

// With 2 s and sources_always_join, s joins the group n2 starts (n2 cannot
// join n0's: 2 + 2 s): {n0, n1}, {s, n2}, {n3} (2 + 1 s would pass the cap),
// numbered by the node that made each (n0, n2, n3): a topological order.
TEST(CoarsenTest, ALoneSourceCanAlwaysJoinTheGroupItsReaderStarts) {
  const ShardingProblem p = SideInput();
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  const Coarsened c = Coarsen(p, model, 2.0, /*sources_always_join=*/true);
  EXPECT_EQ(c.group_of, (std::vector<int32_t>{0, 1, 0, 1, 2}));
  ASSERT_EQ(c.problem.num_nodes(), 3);
  EXPECT_EQ(c.problem.producers[1], (std::vector<int32_t>{0}));
  EXPECT_EQ(c.problem.producers[2], (std::vector<int32_t>{1}));
}

// On small random DAGs the groups come in topological order, and the best
// split of the groups (brute force) is a split of the nodes with the same
// bottleneck, so never better than the nodes' best.
TEST(CoarsenTest, GroupSplitsAreNodeSplitsOnRandomDags) {
  std::mt19937 rng(20261203);
  for (int trial = 0; trial < 60; ++trial) {
    const int n = 4 + static_cast<int>(rng() % 5);  // 4..8
    ShardingProblem p = RandomDag(rng, n, 8000);
    DeviceModel model(p, ToyChip(), Precision::kFp32);
    double total = 0;
    for (int32_t v = 0; v < n; ++v) total += model.NodeTime(v);
    const Coarsened c = Coarsen(p, model, total / 3);
    const ShardingProblem& q = c.problem;
    for (int32_t g = 0; g < q.num_nodes(); ++g)
      for (int32_t u : q.producers[g]) EXPECT_LT(u, g) << "trial " << trial;
    if (q.num_nodes() < 2) continue;
    DeviceModel coarse(q, ToyChip(), Precision::kFp32);
    // The first half of the groups on IPU 0: monotone, as they are in
    // topological order.
    std::vector<int32_t> half(q.num_nodes());
    for (int32_t g = 0; g < q.num_nodes(); ++g)
      half[g] = 2 * g < q.num_nodes() ? 0 : 1;
    EXPECT_NEAR(
        coarse.EvaluatePerformance(half, 2, 1).bottleneck_s,
        model.EvaluatePerformance(Refine(p, c, half), 2, 1).bottleneck_s, 1e-9)
        << "trial " << trial;
    const double groups = BestMonotone(q, coarse, 2).second;
    EXPECT_GE(groups, BestMonotone(p, model, 2).second * (1 - 1e-12))
        << "trial " << trial;
  }
}

}  // namespace
}  // namespace autoshard
