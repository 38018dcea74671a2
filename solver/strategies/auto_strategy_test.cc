#include "solver/strategies/auto_strategy.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "solver/strategies/registry.h"
#include "tests/test_problems.h"

namespace autoshard {
namespace {

using ::autoshard::testing::MakeTestProblem;
using ::autoshard::testing::ToyChip;
using ::testing::ElementsAre;

// n0 -> n1 -> n2 -> n3 taking 1, 2, 3, 4 s on the toy chip (1 GFLOP/s);
// 16 B cross each cut (16 ns at 1 GB/s, counted on both sides).
ShardingProblem Chain4(std::vector<int64_t> weights = {0, 0, 0, 0}) {
  return MakeTestProblem(4, {{0, 1}, {1, 2}, {2, 3}}, weights,
                         {1e9, 2e9, 3e9, 4e9});
}

StrategyContext ContextFor(const ShardingProblem& p, int num_ipus) {
  StrategyContext c;
  c.problem = &p;
  c.device = ToyChip();
  c.num_ipus = num_ipus;
  return c;
}

std::vector<std::string> Names(const StrategyResult& r) {
  std::vector<std::string> names;
  for (const auto& c : r.summary.candidates()) names.push_back(c.strategy());
  return names;
}

int Chosen(const StrategyResult& r) {
  int chosen = -1, count = 0;
  for (int i = 0; i < r.summary.candidates_size(); ++i) {
    if (r.summary.candidates(i).chosen()) chosen = i, ++count;
  }
  return count == 1 ? chosen : -1;
}

TEST(AutoStrategyTest, IsTheRegisteredDefault) {
  EXPECT_EQ(Strategies().front().strategy->name(), "auto");
  EXPECT_EQ(FindStrategy("auto"), Strategies().front().strategy);
  EXPECT_THAT(StrategyNames(), ElementsAre("auto", "optimal", "search", "raw"));
  EXPECT_EQ(FindStrategy("greedy"), nullptr);
}

TEST(AutoStrategyTest, KeepsTheFastestSplitOfAChain) {
  const ShardingProblem p = Chain4();
  absl::StatusOr<StrategyResult> r =
      FindStrategy("auto")->Run(ContextFor(p, 2));
  ASSERT_TRUE(r.ok()) << r.status();
  // Every candidate, in the order tried; optimal's split fits, so its
  // polish ran too, and a 4-node chain's 5 ideals are few enough for the
  // ideal DP (solver/strategies/ideal_dp.h).
  EXPECT_THAT(Names(*r), ElementsAre("raw", "search", "optimal",
                                     "optimal+search", "ideal"));
  ASSERT_GE(Chosen(*r), 0);
  // {0,1,2} | {3}: max(1+2+3, 4) s plus one 16 B copy at each end of the
  // cut, 16 ns; no split of 10 s onto 2 IPUs does better.
  EXPECT_TRUE(r->evaluation.fits);
  EXPECT_NEAR(r->evaluation.performance.bottleneck_s, 6 + 16e-9, 1e-12);
  EXPECT_THAT(r->assignment.ipu, ElementsAre(0, 0, 0, 1));
  // The chosen candidate's figures are the result's, and none is better.
  const auto& chosen = r->summary.candidates(Chosen(*r));
  EXPECT_DOUBLE_EQ(chosen.bottleneck_s(),
                   r->evaluation.performance.bottleneck_s);
  for (const auto& c : r->summary.candidates()) {
    EXPECT_GE(c.bottleneck_s(), chosen.bottleneck_s()) << c.strategy();
  }
  ASSERT_TRUE(r->summary.has_search());
  ASSERT_TRUE(r->summary.has_optimal());
  EXPECT_TRUE(r->summary.optimal().fits());
}

TEST(AutoStrategyTest, PrefersASplitThatFits) {
  // The toy IPU holds 4 x 1000 B; n0..n2 read 1500 B of weights each, so
  // {0,1,2} | {3} (6 s) does not fit and {0,1} | {2,3} (3 s and 7 s, with
  // 3000 B of weights on each IPU) is the fastest that does.
  const ShardingProblem p = Chain4({1500, 1500, 1500, 0});
  absl::StatusOr<StrategyResult> r =
      FindStrategy("auto")->Run(ContextFor(p, 2));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->evaluation.fits);
  EXPECT_THAT(r->assignment.ipu, ElementsAre(0, 0, 1, 1));
  EXPECT_NEAR(r->evaluation.performance.bottleneck_s, 7 + 16e-9, 1e-12);
}

TEST(AutoStrategyTest, OneIpuComparesRawAndOptimalOnly) {
  const ShardingProblem p = Chain4();
  absl::StatusOr<StrategyResult> r =
      FindStrategy("auto")->Run(ContextFor(p, 1));
  ASSERT_TRUE(r.ok()) << r.status();
  // No search on one IPU, and no polish (nothing to move between IPUs).
  EXPECT_THAT(Names(*r), ElementsAre("raw", "optimal"));
  EXPECT_FALSE(r->summary.has_search());
  EXPECT_NEAR(r->evaluation.performance.bottleneck_s, 10, 1e-12);  // 1+2+3+4
}

StrategyResult Figures(bool fits, double bottleneck_s, int64_t max_tile_bytes,
                       double proportion) {
  StrategyResult r;
  r.evaluation.fits = fits;
  r.evaluation.performance.bottleneck_s = bottleneck_s;
  r.evaluation.max_tile_bytes = max_tile_bytes;
  r.available_memory_proportion = proportion;
  return r;
}

TEST(AutoStrategyTest, BetterResultOrdersByFitThenBottleneck) {
  // A split that fits beats a faster one that does not.
  EXPECT_TRUE(
      BetterResult(Figures(true, 9, 900, 0.6), Figures(false, 1, 1100, 0.6)));
  // Both fit: the smaller bottleneck, whatever the tiles.
  EXPECT_TRUE(
      BetterResult(Figures(true, 2, 999, 0.6), Figures(true, 3, 100, 0.6)));
  // Same bottleneck: the device's proportion beats a lowered one.
  EXPECT_TRUE(BetterResult(Figures(true, 2, 0, 0.6), Figures(true, 2, 0, 0.3)));
  EXPECT_FALSE(
      BetterResult(Figures(true, 2, 0, 0.3), Figures(true, 2, 0, 0.6)));
  // Neither fits: the smaller fullest tile, whatever the bottleneck.
  EXPECT_TRUE(
      BetterResult(Figures(false, 9, 1100, 0.6), Figures(false, 1, 1200, 0.6)));
  // Neither fits, the same fullest tile: the smaller bottleneck.
  EXPECT_TRUE(
      BetterResult(Figures(false, 1, 1100, 0.6), Figures(false, 9, 1100, 0.6)));
  EXPECT_FALSE(
      BetterResult(Figures(false, 9, 1100, 0.6), Figures(false, 1, 1100, 0.6)));
  // Equal: neither is better.
  EXPECT_FALSE(
      BetterResult(Figures(true, 2, 5, 0.6), Figures(true, 2, 5, 0.6)));
}

}  // namespace
}  // namespace autoshard
