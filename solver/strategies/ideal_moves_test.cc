#include "solver/strategies/ideal_moves.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "solver/strategies/optimal_strategy.h"
#include "tests/brute_force.h"
#include "tests/test_problems.h"

namespace autoshard {
namespace {

using ::autoshard::testing::BestMonotone;
using ::autoshard::testing::MakeTestProblem;
using ::autoshard::testing::RandomDag;
using ::autoshard::testing::RefreshTensors;
using ::autoshard::testing::ToyChip;
using ::autoshard::testing::TwoBranches;

TEST(IdealMovesTest, LeavesTheFixedOrderForABetterIdeal) {
  ShardingProblem p = TwoBranches();
  DeviceModel model(p, ToyChip(1000000000), Precision::kFp32);
  // From the best slicing of the order 0..5, {0, 1, 2} | {3, 4, 5}: 5 s a
  // side plus n0's 0.5 s and n2's 16 ns crossing -> 5.500000016 s.
  const std::vector<int32_t> start = {0, 0, 0, 1, 1, 1};
  EXPECT_NEAR(model.EvaluatePerformance(start, 2, 1).bottleneck_s, 5.500000016,
              1e-12);
  // The one pair's sets S are the ideals but {} and all: 11 - 2 = 9. The
  // best is {0, 1, 3} | {2, 4, 5}: 1 + 2 + 2 = 5 s and 2 + 2 + 1 = 5 s, with
  // n1's and n3's outputs crossing, 0.2 s a side -> 5.2 s; one move, then a
  // sweep that finds nothing better.
  const IdealMovesResult r = ImproveByIdealMoves(p, model, 2, start, {});
  EXPECT_NEAR(r.bottleneck_s, 5.2, 1e-12);
  EXPECT_EQ(r.ipu, (std::vector<int32_t>{0, 0, 1, 0, 1, 1}));
  EXPECT_EQ(r.moves, 1);
  // Too many sets for the limit (9 > 2): the first 3 the enumeration meets,
  // {}, {0} and {0, 3}, then IPU 0's set {0, 1, 2} less n1 or n2 and their
  // descendants there ({0}, {0, 1}), or with n3 or n4 and their ancestors
  // on IPU 1 ({0, 1, 2, 3}, {0, 1, 2, 3, 4}). The best, {0, 1, 2, 3}, takes
  // 7 s + n2's 16 ns and n3's 0.1 s on IPU 0: worse, so nothing moves.
  IdealMovesOptions few;
  few.max_ideals_per_pair = 2;
  const IdealMovesResult none = ImproveByIdealMoves(p, model, 2, start, few);
  EXPECT_EQ(none.ipu, start);
  EXPECT_EQ(none.moves, 0);
  EXPECT_NEAR(none.bottleneck_s, 5.500000016, 1e-12);
}

// A chain n0 -> n1 -> n2 -> n3, 1, 1, 1, 3 s, 16 B tensors (16 ns a copy),
// onto 2 IPUs from {0} | {1, 2, 3} (1 s + 16 ns | 5 s + 16 ns), one set
// allowed: the enumeration stops after {} and {0}; IPU 0's set with n1 or
// n2 and their ancestors on IPU 1 gives {0, 1} (2 | 4 s) and {0, 1, 2} (3 |
// 3 s, plus 16 ns each): one move, to 3 s + 16 ns, the optimum.
TEST(IdealMovesTest, TriesClosuresWhenTheSetsAreTooMany) {
  ShardingProblem p = MakeTestProblem(4, {{0, 1}, {1, 2}, {2, 3}}, {0, 0, 0, 0},
                                      {1e9, 1e9, 1e9, 3e9});
  DeviceModel model(p, ToyChip(1000000000), Precision::kFp32);
  IdealMovesOptions one;
  one.max_ideals_per_pair = 1;
  const IdealMovesResult r =
      ImproveByIdealMoves(p, model, 2, {0, 1, 1, 1}, one);
  EXPECT_NEAR(r.bottleneck_s, 3 + 16e-9, 1e-15);
  EXPECT_EQ(r.ipu, (std::vector<int32_t>{0, 0, 0, 1}));
  EXPECT_EQ(r.moves, 1);
}

// A chain n0 -> n1 -> n2 -> n3, 1, 1, 1, 3 s, 16 B tensors (16 ns a copy),
// onto 3 IPUs from {0} | {1} | {2, 3}: 1 s + 16 ns, 1 s + 32 ns, 4 s + 16 ns.
// Sweep 1: pair (0, 1) has one set, S = {0}, the current one. Pair (1, 2):
// S = {1} (1 s + 32 ns | 4 s + 16 ns) or {1, 2} (2 s + 32 ns | 3 s + 16 ns):
// a move. Sweep 2: pair (0, 1) over n0..n2: S = {0} (1 s + 16 ns | 2 s + 32
// ns) or {0, 1} (2 s + 16 ns | 1 s + 32 ns), a smaller largest: a move. Pair
// (1, 2) has one set. Sweep 3 moves nothing: {0, 1} | {2} | {3}, 3 s + 16
// ns (n3 alone takes 3 s: the optimum), after 2 moves.
TEST(IdealMovesTest, SweepsUntilNoPairImproves) {
  ShardingProblem p = MakeTestProblem(4, {{0, 1}, {1, 2}, {2, 3}}, {0, 0, 0, 0},
                                      {1e9, 1e9, 1e9, 3e9});
  DeviceModel model(p, ToyChip(1000000000), Precision::kFp32);
  const IdealMovesResult r = ImproveByIdealMoves(p, model, 3, {0, 1, 2, 2}, {});
  EXPECT_NEAR(r.bottleneck_s, 3 + 16e-9, 1e-15);
  EXPECT_EQ(r.ipu, (std::vector<int32_t>{0, 0, 1, 2}));
  EXPECT_EQ(r.moves, 2);
}

// Property: on small random DAGs, from the optimal strategy's split the
// moves give a monotone split with every IPU used, never slower than the
// start and never faster than brute force over every monotone assignment;
// on 2 IPUs (one pair, every set tried) they equal brute force.
TEST(IdealMovesTest, NeverWorseThanTheStartNorBetterThanBruteForce) {
  std::mt19937 rng(20261201);
  int compared = 0, improved = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 3 + static_cast<int>(rng() % 6);  // 3..8
    const int k = 2 + static_cast<int>(rng() % 3);  // 2..4
    if (k > n) continue;
    ShardingProblem p = RandomDag(rng, n, trial % 2 == 0 ? 4000000000 : 800);
    DeviceModel model(p, ToyChip(1000000000), Precision::kFp32);
    absl::StatusOr<OptimalResult> start = OptimalStrategy(p, model, k, {});
    ASSERT_TRUE(start.ok()) << start.status();
    const std::vector<int32_t>& from = start->assignment.ipu;
    const double before = model.EvaluatePerformance(from, k, 1).bottleneck_s;
    const IdealMovesResult r = ImproveByIdealMoves(p, model, k, from, {});
    std::vector<bool> used(k, false);
    for (int32_t v = 0; v < n; ++v) {
      used[r.ipu[v]] = true;
      for (int32_t u : p.producers[v])
        EXPECT_LE(r.ipu[u], r.ipu[v]) << "trial " << trial;
    }
    EXPECT_EQ(std::count(used.begin(), used.end(), true), k);
    EXPECT_NEAR(model.EvaluatePerformance(r.ipu, k, 1).bottleneck_s,
                r.bottleneck_s, 1e-12 * before);
    EXPECT_LE(r.bottleneck_s, before * (1 + 1e-12)) << "trial " << trial;
    const double any = BestMonotone(p, model, k).second;
    EXPECT_GE(r.bottleneck_s, any * (1 - 1e-12)) << "trial " << trial;
    if (k == 2) {
      EXPECT_NEAR(r.bottleneck_s, any, 1e-9 * any) << "trial " << trial;
    }
    improved += r.bottleneck_s < before * (1 - 1e-9) ? 1 : 0;
    ++compared;
  }
  EXPECT_GT(compared, 150);
  EXPECT_GT(improved, 5);
}

// Note [Unchanged pairs]: skipping a pair whose inputs did not change since
// it found no move makes the same moves. On random DAGs of 10-16 nodes
// onto 3-5 IPUs, from the topological order's slicing, the splits and move
// counts with and without skipping are identical.
TEST(IdealMovesTest, SkippingUnchangedPairsMakesTheSameMoves) {
  std::mt19937 rng(4242);
  int moved = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const int n = 10 + static_cast<int>(rng() % 7);
    const int k = 3 + static_cast<int>(rng() % 3);
    ShardingProblem p = RandomDag(rng, n, trial % 2 == 0 ? 4000000000 : 800);
    // Sources read by others become passive constants half the time:
    // PlaceConstants moves them with their earliest reader.
    for (int v = 0; v < n; ++v) {
      if (p.producers[v].empty() && !p.consumers[v].empty() && rng() % 2) {
        p.is_constant[v] = 1;
        p.flops[v] = 0;
      }
    }
    DeviceModel model(p, ToyChip(1000000000), Precision::kFp32);
    std::vector<int32_t> from(n);
    for (int v = 0; v < n; ++v) from[v] = static_cast<int32_t>(v * k / n);
    IdealMovesOptions skip, all;
    all.skip_unchanged = false;
    const IdealMovesResult a = ImproveByIdealMoves(p, model, k, from, skip);
    const IdealMovesResult b = ImproveByIdealMoves(p, model, k, from, all);
    EXPECT_EQ(a.ipu, b.ipu) << "trial " << trial;
    EXPECT_EQ(a.moves, b.moves) << "trial " << trial;
    EXPECT_EQ(a.bottleneck_s, b.bottleneck_s) << "trial " << trial;
    moved += a.moves > 1 ? 1 : 0;
  }
  EXPECT_GT(moved, 30);  // several moves, so later sweeps skip some pairs
}

// A review's counter-example to an earlier Note [Unchanged pairs], which
// left the bottleneck out: Beats' tolerance is 1e-12 of the bottleneck,
// which a move at a far pair lowers. A chain of six nodes with no bytes,
// 100, 1, 100 + 1.5e-10, 10, 100 and 100 s, onto 4 IPUs from {n0} |
// {n1, n2} | {n3} | {n4, n5}: 100 | 101 + 1.5e-10 | 10 | 200 s. Sweep 1:
// pair 0's best, {n0, n1} | {n2} (101 | 100 + 1.5e-10), lowers the pair's
// larger time by 1.5e-10 s, under the tolerance 2e-10: rejected; pair 2
// moves n4 (200 -> 110 s). Sweep 2: the tolerance is 1.1e-10, so pair 0's
// move is kept, with skipping too: {n0, n1} | {n2} | {n3, n4} | {n5}.
TEST(IdealMovesTest, SkippingUnchangedPairsWaitsForALowerBottleneck) {
  ShardingProblem p =
      MakeTestProblem(6, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}},
                      {0, 0, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 1});
  p.activation_bytes.assign(6, 0);
  p.largest_output_bytes = p.activation_bytes;
  RefreshTensors(&p);
  p.node_time_s = {100, 1, 100 + 1.5e-10, 10, 100, 100};
  DeviceModel model(p, ToyChip(1000000000), Precision::kFp32);
  const std::vector<int32_t> from = {0, 1, 1, 2, 3, 3};
  IdealMovesOptions skip, all;
  all.skip_unchanged = false;
  const IdealMovesResult a = ImproveByIdealMoves(p, model, 4, from, skip);
  const IdealMovesResult b = ImproveByIdealMoves(p, model, 4, from, all);
  EXPECT_EQ(b.ipu, (std::vector<int32_t>{0, 0, 1, 2, 2, 3}));
  EXPECT_EQ(b.moves, 2);
  EXPECT_EQ(a.ipu, b.ipu);
  EXPECT_EQ(a.moves, b.moves);
}

}  // namespace
}  // namespace autoshard
