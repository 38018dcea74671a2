#include "solver/strategies/optimal_strategy.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <limits>
#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "solver/strategies/ideal_dp.h"
#include "solver/strategies/sharding_points.h"
#include "tests/brute_force.h"
#include "tests/test_problems.h"

namespace autoshard {
namespace {

using ::autoshard::testing::BestMonotone;
using ::autoshard::testing::Judged;
using ::autoshard::testing::JudgeSplit;
using ::autoshard::testing::MakeTestProblem;
using ::autoshard::testing::RandomDag;
using ::autoshard::testing::ToyChip;
using ::testing::ElementsAre;

constexpr double kInf = std::numeric_limits<double>::infinity();
const auto kNoDeadline = std::chrono::steady_clock::time_point::max();

std::vector<int32_t> IpusFromCuts(const SliceOrder& order,
                                  const std::vector<int32_t>& cuts, int n) {
  std::vector<int32_t> ipu(n, -1);
  for (size_t d = 0; d + 1 < cuts.size(); ++d)
    for (int32_t u = cuts[d]; u < cuts[d + 1]; ++u)
      for (int32_t node : order.units[u]) ipu[node] = static_cast<int32_t>(d);
  return ipu;
}

// n0 -> n1 -> n2 -> n3 taking 1, 2, 3, 4 s; 16 B cross each cut (16 ns at
// 1 GB/s, counted on both sides).
ShardingProblem Chain4(std::vector<int64_t> weights = {0, 0, 0, 0}) {
  return MakeTestProblem(4, {{0, 1}, {1, 2}, {2, 3}}, weights,
                         {1e9, 2e9, 3e9, 4e9});
}

TEST(OptimalStrategyTest, ChainSlicesByHand) {
  ShardingProblem p = Chain4();
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  const SliceOrder order = TopologicalNodeOrder(p, 100);
  // 2 IPUs: {0,1,2} | {3} gives max(6, 4) s, better than 3|7 and 1|9.
  SliceResult r = SliceOptimally(p, model, order, 2, false, kNoDeadline);
  ASSERT_TRUE(r.found);
  EXPECT_TRUE(r.fits);
  EXPECT_THAT(r.cuts, ElementsAre(0, 3, 4));
  EXPECT_NEAR(r.bottleneck_s, 6 + 16e-9, 1e-12);
  // 3 IPUs: {0,1} | {2} | {3}: max(3, 3, 4) s plus copies: 4 s + 16 ns.
  r = SliceOptimally(p, model, order, 3, false, kNoDeadline);
  EXPECT_THAT(r.cuts, ElementsAre(0, 2, 3, 4));
  EXPECT_NEAR(r.bottleneck_s, 4 + 16e-9, 1e-12);
  // 1 IPU: everything, 10 s.
  r = SliceOptimally(p, model, order, 1, false, kNoDeadline);
  EXPECT_THAT(r.cuts, ElementsAre(0, 4));
  EXPECT_NEAR(r.bottleneck_s, 10, 1e-12);
  // More IPUs than units: nothing.
  EXPECT_FALSE(SliceOptimally(p, model, order, 5, false, kNoDeadline).found);
}

TEST(OptimalStrategyTest, MemoryRulesOutTheFastestSlicing) {
  // The toy IPU holds 4 x 1000 B; n0..n2 read 1500 B of weights each, so
  // {0,1,2} cannot fit and the next best, {0,1} | {2,3} (7 s), wins.
  ShardingProblem p = Chain4({1500, 1500, 1500, 0});
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  const SliceOrder order = TopologicalNodeOrder(p, 100);
  SliceResult r = SliceOptimally(p, model, order, 2, false, kNoDeadline);
  ASSERT_TRUE(r.found);
  EXPECT_THAT(r.cuts, ElementsAre(0, 2, 4));
  EXPECT_NEAR(r.bottleneck_s, 7 + 16e-9, 1e-12);
  // Ignoring memory it is the 6 s slicing, flagged as not fitting.
  SliceResult fast = SliceOptimally(p, model, order, 2, true, kNoDeadline);
  EXPECT_THAT(fast.cuts, ElementsAre(0, 3, 4));
  EXPECT_FALSE(fast.fits);
  // With 600-byte tiles no IPU holds two 1500 B weights: no slicing onto 2
  // IPUs fits.
  DeviceModel small(p, ToyChip(600), Precision::kFp32);
  EXPECT_FALSE(SliceOptimally(p, small, order, 2, false, kNoDeadline).found);
}

TEST(OptimalStrategyTest, OrdersAreTopologicalAndDepthFirstKeepsBranches) {
  // Two branches off n0, given interleaved: n1 -> n3 and n2 -> n4, joined
  // by n5. Depth-first from the output takes n1, n3 before n2, n4.
  ShardingProblem p =
      MakeTestProblem(6, {{0, 1}, {0, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 5}},
                      {0, 0, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 1});
  auto flat = [](const SliceOrder& o) {
    std::vector<int32_t> v;
    for (const auto& u : o.units) v.insert(v.end(), u.begin(), u.end());
    return v;
  };
  EXPECT_THAT(flat(TopologicalNodeOrder(p, 100)),
              ElementsAre(0, 1, 2, 3, 4, 5));
  EXPECT_THAT(flat(DepthFirstNodeOrder(p, 100)), ElementsAre(0, 1, 3, 2, 4, 5));
  // Cut into at most 4 units: blocks of 2 nodes.
  SliceOrder blocks = DepthFirstNodeOrder(p, 4);
  EXPECT_EQ(blocks.units.size(), 3u);
  EXPECT_EQ(blocks.name, "depth-first nodes in blocks of 2 nodes");
}

TEST(OptimalStrategyTest, PassThroughCopiesAreCountedOnTheMiddleStage) {
  // n0 -> n1 -> n2 and n0 -> n2, 1 s each, one node per IPU: the middle IPU
  // receives n0's tensor and sends it on (48 B), as EvaluatePerformance says.
  ShardingProblem p =
      MakeTestProblem(3, {{0, 1}, {1, 2}, {0, 2}}, {0, 0, 0}, {1e9, 1e9, 1e9});
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  SliceResult r = SliceOptimally(p, model, TopologicalNodeOrder(p, 100), 3,
                                 false, kNoDeadline);
  EXPECT_NEAR(r.bottleneck_s, 1 + 48e-9, 1e-12);
  EXPECT_NEAR(r.bottleneck_s, JudgeSplit(model, {0, 1, 2}, 3).bottleneck_s,
              1e-15);
}

// Property (issue 5): on random small DAGs, the DP equals brute force over
// every contiguous slicing of the order, fits included; and it is compared
// with brute force over every monotone assignment (the gap is printed).
TEST(OptimalStrategyTest, EqualsBruteForceOnRandomDags) {
  std::mt19937 rng(20261130);
  int compared = 0, infeasible = 0, monotone_compared = 0;
  std::vector<double> gaps;
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 3 + static_cast<int>(rng() % 10);  // 3..12
    const int k = 2 + static_cast<int>(rng() % 3);   // 2..4
    if (k > n) continue;
    // Every third DAG has activations as large as a tile or more, so where
    // a slice's nodes run in its schedule (liveness) decides whether it fits.
    ShardingProblem p = RandomDag(rng, n, trial % 3 == 0 ? 8000 : 800);
    const int64_t bytes_per_tile = 300 + static_cast<int64_t>(rng() % 2000);
    DeviceModel model(p, ToyChip(bytes_per_tile), Precision::kFp32);
    const SliceOrder order = trial % 2 == 0 ? TopologicalNodeOrder(p, 100)
                                            : DepthFirstNodeOrder(p, 100);
    // Brute force over the k-1 cut positions in 1..n-1.
    double best = kInf;
    std::vector<int32_t> cuts(k + 1);
    cuts[0] = 0;
    cuts[k] = n;
    std::function<void(int)> choose = [&](int d) {
      if (d == k) {
        const Judged j = JudgeSplit(model, IpusFromCuts(order, cuts, n), k);
        if (j.fits) best = std::min(best, j.bottleneck_s);
        return;
      }
      for (int c = cuts[d - 1] + 1; c <= n - (k - d); ++c) {
        cuts[d] = c;
        choose(d + 1);
      }
    };
    choose(1);
    const SliceResult r =
        SliceOptimally(p, model, order, k, false, kNoDeadline);
    ASSERT_EQ(r.found, best < kInf) << "trial " << trial;
    ++compared;
    if (!r.found) {
      ++infeasible;
      continue;
    }
    EXPECT_NEAR(r.bottleneck_s, best, 1e-9 * best) << "trial " << trial;
    // The DP's own split is what it says.
    const Judged own = JudgeSplit(model, IpusFromCuts(order, r.cuts, n), k);
    EXPECT_TRUE(own.fits);
    EXPECT_NEAR(own.bottleneck_s, r.bottleneck_s, 1e-9 * best);

    // Every monotone assignment with every IPU used (small cases only).
    if (std::pow(k, n) > 20000) continue;
    const auto [monotone, any] = BestMonotone(p, model, k);
    ASSERT_LT(monotone, kInf);  // a contiguous slicing is monotone
    EXPECT_LE(monotone, r.bottleneck_s * (1 + 1e-9));
    // Issue 19: the ideal DP equals brute force over monotone assignments,
    // and its bound (memory ignored) is at most the optimum ignoring memory.
    const IdealDpResult ideal = IdealDpSplit(p, model, k, kInf, false, {});
    ASSERT_TRUE(ideal.complete && ideal.found) << "trial " << trial;
    EXPECT_NEAR(ideal.bottleneck_s, monotone, 1e-9 * monotone)
        << "trial " << trial;
    const Judged own_ideal = JudgeSplit(model, ideal.ipu, k);
    EXPECT_TRUE(own_ideal.fits) << "trial " << trial;
    EXPECT_NEAR(own_ideal.bottleneck_s, monotone, 1e-9 * monotone);
    const IdealDpResult bound = IdealDpBound(p, model, k, any, {});
    ASSERT_TRUE(bound.complete && bound.found) << "trial " << trial;
    EXPECT_LE(bound.bottleneck_s, any * (1 + 1e-9)) << "trial " << trial;
    EXPECT_GE(bound.bottleneck_s, model.LowerBound(k) * (1 - 1e-9));
    gaps.push_back((r.bottleneck_s / monotone - 1) * 100);
    ++monotone_compared;
  }
  EXPECT_GT(compared, 200);
  EXPECT_GT(compared - infeasible, 100);
  EXPECT_GT(monotone_compared, 50);
  std::sort(gaps.begin(), gaps.end());
  std::cout << "optimal vs brute force: " << compared << " DAGs, " << infeasible
            << " with no fitting slicing; vs every monotone "
            << "assignment on " << monotone_compared << " DAGs: median gap "
            << gaps[gaps.size() / 2] << "%, worst " << gaps.back() << "%, "
            << std::count(gaps.begin(), gaps.end(), 0.0) << " equal\n";
}

TEST(OptimalStrategyTest, AModelOfFoldedConstantsTakesNoTime) {
  // Three constants, no FLOPs, nothing crosses: every slicing takes 0 s.
  ShardingProblem p = MakeTestProblem(3, {}, {0, 0, 0}, {0, 0, 0});
  p.is_constant = {1, 1, 1};
  p.activation_bytes = {0, 0, 0};
  testing::RefreshTensors(&p);
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  SliceResult r = SliceOptimally(p, model, TopologicalNodeOrder(p, 100), 2,
                                 false, kNoDeadline);
  ASSERT_TRUE(r.found);
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.bottleneck_s, 0);
  EXPECT_EQ(r.cuts.size(), 3u);
}

TEST(OptimalStrategyTest, StrategyKeepsTheBestOrder) {
  // The interleaved branches of OrdersAreTopologicalAndDepthFirstKeepsBranches
  // with heavy activations: the depth-first order can cut where one branch
  // ends, the file order cannot avoid two crossing tensors.
  ShardingProblem p =
      MakeTestProblem(6, {{0, 1}, {0, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 5}},
                      {0, 0, 0, 0, 0, 0}, {1e9, 1e9, 1e9, 1e9, 1e9, 1e9});
  p.activation_bytes = {4, 400000000, 400000000, 4, 4, 4};
  p.largest_output_bytes = p.activation_bytes;
  testing::RefreshTensors(&p);
  proto::DeviceProfile chip = ToyChip(1000000000);
  DeviceModel model(p, chip, Precision::kFp32);
  absl::StatusOr<OptimalResult> r = OptimalStrategy(p, model, 2, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->fits);
  EXPECT_EQ(r->tried.size(), 3u);  // subgraphs, topological, depth-first
  for (const auto& t : r->tried) EXPECT_GE(t.bottleneck_s, r->bottleneck_s);
  const Judged j = JudgeSplit(model, r->assignment.ipu, 2);
  EXPECT_NEAR(j.bottleneck_s, r->bottleneck_s, 1e-9);
  // {0,1,3} | {2,4,5} in the depth-first order: 3 s per side, n0's and
  // n3's 4 B cross (8 ns each side); no 400 MB tensor crosses.
  EXPECT_EQ(r->order, "depth-first nodes");
  EXPECT_NEAR(r->bottleneck_s, 3 + 8e-9, 1e-12);
  EXPECT_FALSE(OptimalStrategy(p, model, 7, {}).ok());
}

}  // namespace
}  // namespace autoshard
