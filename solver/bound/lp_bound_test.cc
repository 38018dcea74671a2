#include "solver/bound/lp_bound.h"

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
using ::autoshard::testing::TwoBranches;

// The two-branch problem (tests/test_problems.h): n0 -> {n1 -> n2, n3 -> n4}
// -> n5, 1, 2, 2, 2, 2, 1 s; n0's output 0.5 s over the link, n1's and n3's
// 0.1 s, the others 16 ns. The optimum is {0, 1, 3} | {2, 4, 5}: 5.2 s.
TEST(MipBoundTest, CountsTheCopiesOfTheBestSplit) {
  ShardingProblem p = TwoBranches();
  DeviceModel model(p, ToyChip(1000000000), Precision::kFp32);
  const MipBoundResult r = MipBound(p, model, 2, {}, {});
  ASSERT_TRUE(r.solved) << r.note;
  EXPECT_TRUE(r.proven_optimal);
  // 5.2 s, less the margin of 1e-4 (0.52 ms); the cheap bound is 5 s.
  EXPECT_NEAR(r.bound_s, 5.2 * (1 - kMipBoundMargin), 1e-5);
  EXPECT_LE(r.bound_s, 5.2);
  EXPECT_NEAR(r.incumbent_s, 5.2, 1e-5);
}

// n0 -> n1 -> n2 -> n3, 1 s each; weights 2500, 2500, 10, 10 bytes on a
// chip of 4 x 1000 bytes: n0 and n1 cannot share an IPU (5000 > 4000), so
// the best split is {n0} | {n1, n2, n3}: 3 s (+ 16 ns in). Without the
// memory rows the bound is 2 s (+ 16 ns each way), the cheap bound's 4 / 2.
TEST(MipBoundTest, CountsWhatMemoryForbids) {
  ShardingProblem p = MakeTestProblem(
      4, {{0, 1}, {1, 2}, {2, 3}}, {2500, 2500, 10, 10}, {1e9, 1e9, 1e9, 1e9});
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  const MipBoundResult with = MipBound(p, model, 2, {0, 1, 1, 1}, {});
  ASSERT_TRUE(with.solved) << with.note;
  EXPECT_NEAR(with.bound_s, 3.0 * (1 - kMipBoundMargin), 1e-5);
  MipBoundOptions no_memory;
  no_memory.memory = false;
  const MipBoundResult without = MipBound(p, model, 2, {}, no_memory);
  ASSERT_TRUE(without.solved);
  // 2 s + 16 ns, less the margin: below the cheap bound 2 s, so 2 s.
  EXPECT_NEAR(without.bound_s, 2.0, 1e-5);
}

// The bound never exceeds the best monotone split (brute force), with or
// without memory, on small random DAGs.
TEST(MipBoundTest, NeverAboveBruteForceOnRandomDags) {
  std::mt19937 rng(20261201);
  int compared = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int n = 3 + static_cast<int>(rng() % 6);  // 3..8
    const int k = 2 + static_cast<int>(rng() % 2);  // 2..3
    if (k > n) continue;
    ShardingProblem p = RandomDag(rng, n, trial % 3 == 0 ? 8000 : 800);
    DeviceModel model(p, ToyChip(300 + static_cast<int64_t>(rng() % 2000)),
                      Precision::kFp32);
    const auto [fitting, any] = BestMonotone(p, model, k);
    MipBoundOptions free;
    free.memory = false;
    const MipBoundResult r = MipBound(p, model, k, {}, free);
    EXPECT_LE(r.bound_s, any * (1 + 1e-9)) << "trial " << trial;
    EXPECT_GE(r.bound_s, model.LowerBound(k));
    if (fitting < std::numeric_limits<double>::infinity()) {
      const MipBoundResult m = MipBound(p, model, k, {}, {});
      EXPECT_LE(m.bound_s, fitting * (1 + 1e-9)) << "trial " << trial;
      EXPECT_GE(m.bound_s, r.bound_s * (1 - 2 * kMipBoundMargin))
          << "trial " << trial;
    }
    ++compared;
  }
  EXPECT_GT(compared, 40);
}

}  // namespace
}  // namespace autoshard
