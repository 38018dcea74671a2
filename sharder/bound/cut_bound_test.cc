#include "sharder/bound/cut_bound.h"

#include <limits>
#include <random>

#include "gtest/gtest.h"
#include "sharder/bound/certify.h"
#include "tests/brute_force.h"
#include "tests/test_problems.h"

namespace autoshard {
namespace {

using ::autoshard::testing::BestMonotone;
using ::autoshard::testing::MakeTestProblem;
using ::autoshard::testing::RandomDag;
using ::autoshard::testing::ToyChip;

// A skip connection: n0 -> n1 -> n2 -> n3 and n0 -> n3, 1 s each; n0's
// output is 1e9 bytes (1 s over the toy chip's 1 GB/s link), the others 16.
// On 2 IPUs every split cuts n0's tensor: {n0, n1} | {n2, n3} is best, 2 s
// + 1 s + 16 ns on each side. The cheap bound is 4 / 2 = 2 s. The cut
// bound: an ideal with compute strictly between 0 and 4 s holds n0 (W -
// P(desc n0) = 0) and not n3 (P(anc n3) = 4 s), so 1e9 bytes cross, 1 s on
// both IPUs; the best chain of buckets is 2 s of compute a side: 3 s.
ShardingProblem SkipConnection() {
  ShardingProblem p = MakeTestProblem(4, {{0, 1}, {1, 2}, {2, 3}, {0, 3}},
                                      {0, 0, 0, 0}, {1e9, 1e9, 1e9, 1e9});
  p.activation_bytes = {1000000000, 16, 16, 16};
  testing::RefreshTensors(&p);
  return p;
}

TEST(CutBoundTest, CountsTheSkipConnectionEverySplitCuts) {
  const ShardingProblem p = SkipConnection();
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  ASSERT_DOUBLE_EQ(model.LowerBound(2), 2.0);
  const double best = BestMonotone(p, model, 2).second;
  EXPECT_NEAR(best, 3.000000016, 1e-12);
  const CutBoundResult r = CutBound(p, model, 2, best, {});
  EXPECT_TRUE(r.improved);
  // The ideals' compute (1, 2, 3 s) falls on the edges of the DP's buckets
  // (multiples of 4 / 1024 s), so it loses nothing but the tolerance.
  EXPECT_NEAR(r.bound_s, 3.0, 1e-4);
  EXPECT_LE(r.bound_s, best);
}

// CertifyBound on the same problem: the min-cut bound is within 1% of the
// plan {n0, n1} | {n2, n3} (3 s + 16 ns), so neither the ideal DP nor CBC
// runs, and the result is the same on every call (no clock decides it).
TEST(CutBoundTest, CertifyStopsAtTheMinCutBound) {
  const ShardingProblem p = SkipConnection();
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  const std::vector<int32_t> plan = {0, 0, 1, 1};
  const Certificate a = CertifyBound(p, model, 2, plan, 3.000000016, true, 10);
  const Certificate b = CertifyBound(p, model, 2, plan, 3.000000016, true, 10);
  EXPECT_EQ(a.method, "min-cut");
  EXPECT_NEAR(a.bound_s, 3.0, 1e-4);
  EXPECT_EQ(a.bound_s, b.bound_s);
  EXPECT_EQ(a.method, b.method);
}

// A chain of equal nodes with small tensors: the cuts cost 16 ns, so the
// bound stays at the cheap bound's 4 / 2 = 2 s... plus at most those 16 ns.
TEST(CutBoundTest, AChainWithSmallTensorsGainsLittle) {
  ShardingProblem p = MakeTestProblem(4, {{0, 1}, {1, 2}, {2, 3}}, {0, 0, 0, 0},
                                      {1e9, 1e9, 1e9, 1e9});
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  const CutBoundResult r = CutBound(p, model, 2, 2.000000016, {});
  EXPECT_GE(r.bound_s, 2.0);
  EXPECT_LE(r.bound_s, 2.000000016);
}

// The bound never exceeds the best monotone split (brute force) on small
// random DAGs, with either copy model, and never falls below the cheap one.
TEST(CutBoundTest, NeverAboveBruteForceOnRandomDags) {
  std::mt19937 rng(20261202);
  int improved = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const int n = 4 + static_cast<int>(rng() % 5);  // 4..8
    const int k = 2 + static_cast<int>(rng() % 3);  // 2..4
    ShardingProblem p =
        RandomDag(rng, n, trial % 2 == 0 ? 4000000000 : 800000000);
    p.copies_through_host = trial % 3 == 0;
    DeviceModel model(p, ToyChip(), Precision::kFp32);
    const double any = BestMonotone(p, model, k).second;
    if (any == std::numeric_limits<double>::infinity()) continue;
    const CutBoundResult r = CutBound(p, model, k, any, {});
    EXPECT_LE(r.bound_s, any * (1 + 1e-9)) << "trial " << trial;
    EXPECT_GE(r.bound_s, model.LowerBound(k)) << "trial " << trial;
    improved += r.improved ? 1 : 0;
  }
  EXPECT_GT(improved, 10);  // the large tensors make it count
}

}  // namespace
}  // namespace autoshard
