#include "solver/bound/filler_bound.h"

#include <limits>
#include <random>

#include "gtest/gtest.h"
#include "tests/brute_force.h"
#include "tests/test_problems.h"

namespace autoshard {
namespace {

using ::autoshard::testing::BestMonotone;
using ::autoshard::testing::JudgeSplit;
using ::autoshard::testing::MakeTestProblem;
using ::autoshard::testing::RandomDag;
using ::autoshard::testing::ToyChip;

// n0 -> n1 (2 s each on the toy chip, 1 GFLOP/s; n0's output 1e9 B, 1 s
// over the 1 GB/s link), and two sources n1 reads: f (0.5 s, 16 B out: a
// filler, 16 ns < 0.5 s <= 5.5 s / (4 x 2)) and w (1 s, 2e9 B out: 2 s >=
// 1 s, so it joins n1). n0 is a source too, but 2 s > 0.6875 s: it stays.
// Nodes: 0 n0, 1 f, 2 w, 3 n1.
ShardingProblem Sources() {
  ShardingProblem p = MakeTestProblem(4, {{0, 3}, {1, 3}, {2, 3}}, {0, 0, 0, 0},
                                      {2e9, 5e8, 1e9, 2e9});
  p.activation_bytes = {1000000000, 16, 2000000000, 16};
  testing::RefreshTensors(&p);
  return p;
}

// Reduced: n0 -> {w, n1} (3 s), a pool of 0.5 s. {n0} | {w, n1} takes
// 2 + 1 and 1 + 3 s: every stage <= T and 3 + 4 <= 2 T - 0.5 need T >= 4;
// {} | everything needs 5. So the bound is 4 s, above the cheap
// max(5.5 / 2, 2, 1 + 2) = 3 s; the best plan, {n0, f} | {w, n1}, takes
// 1 + 3 s and 16 ns more for f's 16 B.
TEST(FillerBoundTest, MergesHeavySourcesAndPoolsLightOnes) {
  const ShardingProblem p = Sources();
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  EXPECT_DOUBLE_EQ(model.LowerBound(2), 3.0);
  const double best = BestMonotone(p, model, 2).second;
  EXPECT_NEAR(best, 4 + 16e-9, 1e-12);
  EXPECT_NEAR(JudgeSplit(model, {0, 0, 1, 1}, 2).bottleneck_s, best, 1e-12);
  const FillerBoundResult r = FillerBound(p, model, 2, 3.0, best, {});
  ASSERT_TRUE(r.ran);
  EXPECT_EQ(r.merged, 1);
  EXPECT_EQ(r.fillers, 1);
  EXPECT_NEAR(r.bound_s, 4.0, 4e-4);  // bisection to 1e-4 x upper
  EXPECT_LE(r.bound_s, best);
}

// On small random DAGs (each a valid bound, never above the best monotone
// split of brute force), and above the cheap bound somewhere.
TEST(FillerBoundTest, NeverAboveBruteForceOnRandomDags) {
  std::mt19937 rng(20261204);
  int improved = 0;
  for (int trial = 0; trial < 150; ++trial) {
    const int n = 4 + static_cast<int>(rng() % 5);  // 4..8
    const int k = 2 + static_cast<int>(rng() % 3);  // 2..4
    ShardingProblem p =
        RandomDag(rng, n, trial % 2 == 0 ? 4000000000 : 800000000);
    DeviceModel model(p, ToyChip(), Precision::kFp32);
    const double any = BestMonotone(p, model, k).second;
    if (any == std::numeric_limits<double>::infinity()) continue;
    const double cheap = model.LowerBound(k);
    const FillerBoundResult r = FillerBound(p, model, k, cheap, any, {});
    EXPECT_LE(r.bound_s, any * (1 + 1e-9)) << "trial " << trial;
    EXPECT_GE(r.bound_s, cheap) << "trial " << trial;
    improved += r.bound_s > cheap * (1 + 1e-6) ? 1 : 0;
  }
  EXPECT_GT(improved, 10);
}

// The bigger pools of Note [Filler bound] (k' below k, down to 1): every
// source of at most Σ time / 4k' pooled. Each still never above brute
// force; with a lattice cap of 6 ideals the retries run (some only at a
// smaller k') and still prove more than the cheap bound somewhere.
TEST(FillerBoundTest, BiggerPoolsNeverAboveBruteForce) {
  std::mt19937 rng(20261205);
  int retried = 0, improved = 0;
  for (int trial = 0; trial < 150; ++trial) {
    const int n = 4 + static_cast<int>(rng() % 5);  // 4..8
    const int k = 2 + static_cast<int>(rng() % 3);  // 2..4
    ShardingProblem p =
        RandomDag(rng, n, trial % 2 == 0 ? 4000000000 : 800000000);
    DeviceModel model(p, ToyChip(), Precision::kFp32);
    const double any = BestMonotone(p, model, k).second;
    if (any == std::numeric_limits<double>::infinity()) continue;
    const double cheap = model.LowerBound(k);
    FillerBoundOptions whole;
    whole.first_share_ipus = 1;  // every source of <= Σ time / 4 pooled
    const FillerBoundResult w = FillerBound(p, model, k, cheap, any, whole);
    EXPECT_LE(w.bound_s, any * (1 + 1e-9)) << "trial " << trial;
    FillerBoundOptions capped;
    capped.max_ideals = 6;
    const FillerBoundResult c = FillerBound(p, model, k, cheap, any, capped);
    EXPECT_LE(c.bound_s, any * (1 + 1e-9)) << "trial " << trial;
    EXPECT_GE(c.bound_s, cheap) << "trial " << trial;
    if (c.ran && c.share_ipus < k) {
      ++retried;
      improved += c.bound_s > cheap * (1 + 1e-6) ? 1 : 0;
    }
  }
  EXPECT_GT(retried, 5);
  EXPECT_GT(improved, 0);
}

}  // namespace
}  // namespace autoshard
