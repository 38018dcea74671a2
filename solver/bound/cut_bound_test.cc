#include "solver/bound/cut_bound.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "solver/bound/certify.h"
#include "solver/strategies/closure_cuts.h"
#include "solver/strategies/optimal_strategy.h"
#include "tests/brute_force.h"
#include "tests/test_problems.h"

namespace autoshard {
namespace {

using ::autoshard::testing::BestMonotone;
using ::autoshard::testing::MakeTestProblem;
using ::autoshard::testing::RandomDag;
using ::autoshard::testing::ToyChip;
using ::autoshard::testing::TwoBranches;

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

// CertifyBound on the same problem: the heavy-node bound, first in the
// cascade, is within 1% of the plan {n0, n1} | {n2, n3} (3 s + 16 ns): n0's
// IPU sends its 1e9 bytes (1 s) to n3 unless all join it, so it pays 2 s
// alone, the other IPU then the 3 s left (Note [Heavy node and the rest]),
// 3 s with n1, 4 s with more. Nothing else runs, and the result is the same
// on every call (no clock decides it).
TEST(CutBoundTest, CertifyStopsAtTheHeavyNodeBound) {
  const ShardingProblem p = SkipConnection();
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  const std::vector<int32_t> plan = {0, 0, 1, 1};
  const Certificate a = CertifyBound(p, model, 2, plan, 3.000000016, true, 10);
  const Certificate b = CertifyBound(p, model, 2, plan, 3.000000016, true, 10);
  EXPECT_EQ(a.method, "heavy node");
  EXPECT_NEAR(a.bound_s, 3.0, 1e-4);
  EXPECT_EQ(a.bound_s, b.bound_s);
  EXPECT_EQ(a.method, b.method);
}

// TwoBranches (tests/test_problems.h) on 2 IPUs: no node weighs near the
// plan {n0, n1, n3} | {n2, n4, n5} (5.2 s), so the heavy-node bound proves
// nothing and the min-cut bound, next, is what stops the cascade within 1%.
TEST(CutBoundTest, CertifyStopsAtTheMinCutBound) {
  const ShardingProblem p = TwoBranches();
  DeviceModel model(p, ToyChip(1000000000), Precision::kFp32);
  const std::vector<int32_t> plan = {0, 0, 1, 0, 1, 1};
  const double bottleneck = model.EvaluatePerformance(plan, 2, 1).bottleneck_s;
  ASSERT_NEAR(bottleneck, 5.2, 1e-6);
  const Certificate a = CertifyBound(p, model, 2, plan, bottleneck, true, 10);
  EXPECT_EQ(a.method, "min-cut");
  EXPECT_GE(a.bound_s, bottleneck / 1.01);
  EXPECT_LE(a.bound_s, bottleneck);
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

// A fan: s -> p1..p4 -> t, 1 s each (W = 6 s); s's output, 1000 B, is read
// by every p, each p's, 1 B, by t (toy chip: 1 GB/s, no fixed cost). On 2
// IPUs the best split is {s, p1, p2} | {p3, p4, t}: 3 s + 1002 B (1.002 us)
// a side. The plain min-cut of a bucket near 3 s holds s and not t (Note
// [Cut bound]) and finds {s, p1..p4}: 4 B, though its compute is 5 s — a
// bound of 3 s + 4 ns. Note [Window cuts] on the 16 buckets of [2.90625,
// 3] s: the smallest such ideal, P0 = 5 s > hi = 3 s, so nu > 0, first
// 1000 B / (5 - 3) s = 500 B/s ({s}: 1000 + 500 - 1500 = 0, P = 1 s: stop
// widening), then bisected: 250 gives min({s}: 1000 + 250 - 750 = 500,
// {s..p4}: 4 + 1250 - 750 = 504) = 500 B, the best of the five. On [3,
// 3.09375] s the same steps from 1000 / 1.90625 give at best 468.3 B (nu =
// 245.9: 4 + 5 x 245 - 245.9 x 3.09375). The chain's best boundary is at 3
// s either side: 3 s + min(500, 468.3) B / 1 GB/s, less the 6 ns tolerance.
TEST(CutBoundTest, WindowCutsKnowTheBoundarysCompute) {
  ShardingProblem p = MakeTestProblem(
      6, {{0, 1}, {0, 2}, {0, 3}, {0, 4}, {1, 5}, {2, 5}, {3, 5}, {4, 5}},
      {0, 0, 0, 0, 0, 0}, {1e9, 1e9, 1e9, 1e9, 1e9, 1e9});
  p.activation_bytes = {1000, 1, 1, 1, 1, 1};
  testing::RefreshTensors(&p);
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  EXPECT_NEAR(BestMonotone(p, model, 2).second, 3 + 1.002e-6, 1e-12);
  // Any split bounds the search; {s, p1..p4} | {t} takes 5 s + 4 ns.
  // Without Note [Exact end windows] (off by default; the last check turns
  // it on).
  CutBoundOptions windows;
  CutBoundOptions plain = windows;
  plain.window_groups = 0;
  EXPECT_NEAR(CutBound(p, model, 2, 5.000000004, plain).bound_s, 3 + 4e-9,
              1e-8);
  const CutBoundResult r = CutBound(p, model, 2, 5.000000004, windows);
  EXPECT_NEAR(r.bound_s, 3 + 0.4683e-6 - 6e-9, 2e-10);
  EXPECT_FALSE(r.out_of_work);
  // Note [Exact end windows]: on 2 IPUs H = W, so every bucket gets its
  // least cut; at 3 s that is {s, p1, p2}'s 1002 B: the optimum, less the
  // tolerance.
  CutBoundOptions ends;
  ends.end_ideals = 20000;
  EXPECT_NEAR(CutBound(p, model, 2, 5.000000004, ends).bound_s,
              3 + 1.002e-6 - 6e-9, 2e-10);
}

// The same fan with 1e12 B out of s and 1e9 B out of each p, and a window
// [3, 5 s - 1.01 tolerances] that the plain least cut's ideal {s, p1..p4}
// (5 s, 4e9 B) misses by 1.01 tolerances: the first multiplier, 1e12 B
// over 6.06e-9 s, made int64 weights of 1.6e20 (undefined behaviour) before
// |nu| was capped. The ideals inside the window hold s and 2 or 3 p's (3 or
// 4 s): s's 1e12 B cross and 2e9 or 3e9 more, so the true least cut is
// 1.002e12 B; the window cut lies between the plain cut and it.
TEST(CutBoundTest, WindowCutOfAHugeTensorStaysInRange) {
  ShardingProblem p = MakeTestProblem(
      6, {{0, 1}, {0, 2}, {0, 3}, {0, 4}, {1, 5}, {2, 5}, {3, 5}, {4, 5}},
      {0, 0, 0, 0, 0, 0}, {1e9, 1e9, 1e9, 1e9, 1e9, 1e9});
  p.activation_bytes = {1000000000000, 1000000000, 1000000000,
                        1000000000,    1000000000, 1};
  testing::RefreshTensors(&p);
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  ClosureCuts cuts(p, model);
  ASSERT_NEAR(cuts.tolerance_s(), 6e-9, 1e-15);
  const double hi = 5 - 1.01 * cuts.tolerance_s();
  const int64_t plain = cuts.MinCut(3, hi);
  const double window = cuts.WindowCut(3, hi);
  EXPECT_GE(window, static_cast<double>(plain));
  EXPECT_LE(window, 1.002e12);
}

// Two branches between n0 and n5: n0 -> n1 -> n2 -> n5, n0 -> n3 -> n4 ->
// n5, 1, 2, 2, 2, 2, 1 s (W = 10 s, windows of 10 / 64 s); n0's output is
// 5e8 B, n1's and n3's 1e8 B, the others 16. Until hi reaches 3 s, n1 and
// n3 have too much ancestry (3 s) and the least cut's ideal is {n0} (first
// in the window [0.9375, 1.09375] s: rank 6); from [2.96875, 3.125] s
// (rank 19) it is {n0, n1, n3} (2e8 B, not n0's 5e8), while n2 and n4 (5 s
// of ancestors) must stay out; from [4.84375, 5] s (rank 31) {n0..n4} (32
// B); n5 only in the last window (rank 63). So the order is n0, n1, n3, n2,
// n4, n5, whose slicing {n0, n1, n3} | {n2, n4, n5} takes 5 s + 2e8 B a
// side (5.2 s), where the file order's best is 5.500000016 s.
TEST(CutBoundTest, MinCutOrderPutsTheSmallCutFirst) {
  ShardingProblem p = TwoBranches();
  DeviceModel model(p, ToyChip(1000000000), Precision::kFp32);
  const std::vector<int32_t> order = MinCutOrder(p, model, 64);
  EXPECT_EQ(order, (std::vector<int32_t>{0, 1, 3, 2, 4, 5}));
  SliceOrder slices{"min-cut order", {}};
  for (int32_t v : order) slices.units.push_back({v});
  const SliceResult r = SliceOptimally(
      p, model, slices, 2, false,
      std::chrono::steady_clock::now() + std::chrono::seconds(60));
  ASSERT_TRUE(r.found);
  EXPECT_NEAR(r.bottleneck_s, 5.2, 1e-12);
}

// The chain DP of Note [Cut bound] on 4 buckets of 1 s (W = 4 s), each
// boundary copying 0.25 s, onto 3 IPUs. Chains (b_0, b_1) and their stages
// (lo_0 + 0.25, max(0, lo_1 - hi_0) + 0.5, 4 - hi_1 + 0.25):
// (1, 2): 1.25, 0.5, 1.25 -> 1.25, the least; (0, 2): 0.25, 1.5, 1.25;
// (1, 3): 1.25, 1.5, 0.25; (0, 3): 0.25, 2.5, 0.25. A cap at or above 1.25
// changes nothing (Note [Capped chain DP]); one below is the result.
TEST(ChainBoundTest, FindsTheLeastChainUnderAnyCap) {
  const std::vector<double> lo = {0, 1, 2, 3}, hi = {1, 2, 3, 4},
                            copy_s(4, 0.25);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (double cap : {kInf, 4.0, 1.25}) {
    std::vector<int> chain;
    EXPECT_DOUBLE_EQ(internal::ChainBound(lo, hi, copy_s, 4, 3, cap, &chain),
                     1.25)
        << cap;
    EXPECT_EQ(chain, (std::vector<int>{1, 2})) << cap;
  }
  EXPECT_DOUBLE_EQ(internal::ChainBound(lo, hi, copy_s, 4, 3, 0.1), 0.1);
  // Without copies (0, 2), (1, 2) and (1, 3) all reach 1 s: the first
  // minimum in the order the uncapped DP scanned (the smallest earlier
  // bucket, then the smallest last one) is kept, (0, 2).
  std::vector<int> chain;
  EXPECT_DOUBLE_EQ(internal::ChainBound(lo, hi, std::vector<double>(4, 0), 4, 3,
                                        kInf, &chain),
                   1.0);
  EXPECT_EQ(chain, (std::vector<int>{0, 2}));
}

// Against every chain of buckets (brute force) on random buckets, copies
// (some infinite: no ideal) and caps: exact, with a chain of that value,
// when the least is at most the cap; else the cap.
TEST(ChainBoundTest, CappedMatchesEveryChainBruteForce) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::mt19937 rng(20261205);
  std::uniform_real_distribution<double> unit(0, 1);
  int capped = 0, exact = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int nb = 1 + static_cast<int>(rng() % 7), k = 2 + trial % 4;
    std::vector<double> lo(nb), hi(nb), copy_s(nb);
    double at = 0;
    for (int b = 0; b < nb; ++b) {
      lo[b] = at;
      at += 0.1 + unit(rng);
      hi[b] = at;
      copy_s[b] = rng() % 6 == 0 ? kInf : unit(rng) * 0.5;
    }
    const double total = at;
    // The largest stage of chain b_0 <= ... <= b_{k-2}.
    auto stages = [&](const std::vector<int>& c) {
      double most = lo[c[0]] + copy_s[c[0]];
      for (size_t d = 1; d < c.size(); ++d)
        most = std::max(most, std::max(0.0, lo[c[d]] - hi[c[d - 1]]) +
                                  copy_s[c[d - 1]] + copy_s[c[d]]);
      return std::max(most, total - hi[c.back()] + copy_s[c.back()]);
    };
    double brute = kInf;
    std::vector<int> c(k - 1, 0);
    while (true) {
      brute = std::min(brute, stages(c));
      int d = k - 2;
      while (d >= 0 && c[d] == nb - 1) --d;
      if (d < 0) break;
      ++c[d];
      for (int e = d + 1; e < k - 1; ++e) c[e] = c[d];
    }
    for (double cap : {kInf, brute, brute * 0.6, unit(rng) * total}) {
      std::vector<int> chain;
      const double r =
          internal::ChainBound(lo, hi, copy_s, total, k, cap, &chain);
      if (brute <= cap) {
        ++exact;
        EXPECT_DOUBLE_EQ(r, brute) << "trial " << trial << " cap " << cap;
        if (brute < kInf) {
          ASSERT_EQ(chain.size(), static_cast<size_t>(k - 1));
          EXPECT_TRUE(std::is_sorted(chain.begin(), chain.end()));
          EXPECT_DOUBLE_EQ(stages(chain), brute) << "trial " << trial;
        }
      } else {
        ++capped;
        EXPECT_DOUBLE_EQ(r, cap) << "trial " << trial;
      }
    }
  }
  EXPECT_GT(capped, 100);
  EXPECT_GT(exact, 400);
}

// The bound never exceeds the best monotone split (brute force) on small
// random DAGs, with either copy model, and never falls below the cheap one.
TEST(CutBoundTest, NeverAboveBruteForceOnRandomDags) {
  std::mt19937 rng(20261202);
  int improved = 0, windowed = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const int n = 4 + static_cast<int>(rng() % 5);  // 4..8
    const int k = 2 + static_cast<int>(rng() % 3);  // 2..4
    ShardingProblem p =
        RandomDag(rng, n, trial % 2 == 0 ? 4000000000 : 800000000);
    p.copies_through_host = trial % 3 == 0;
    DeviceModel model(p, ToyChip(), Precision::kFp32);
    const double any = BestMonotone(p, model, k).second;
    if (any == std::numeric_limits<double>::infinity()) continue;
    // With Note [Exact end windows] on, then off (the default), to see
    // what Note [Window cuts] adds.
    CutBoundOptions ends;
    ends.end_ideals = 20000;
    EXPECT_LE(CutBound(p, model, k, any, ends).bound_s, any * (1 + 1e-9))
        << "trial " << trial;
    CutBoundOptions windows;
    const CutBoundResult r = CutBound(p, model, k, any, windows);
    EXPECT_LE(r.bound_s, any * (1 + 1e-9)) << "trial " << trial;
    EXPECT_GE(r.bound_s, model.LowerBound(k)) << "trial " << trial;
    improved += r.improved ? 1 : 0;
    // Note [Window cuts] only adds: never below the plain bound.
    CutBoundOptions plain = windows;
    plain.window_groups = 0;
    const double without = CutBound(p, model, k, any, plain).bound_s;
    // (Less only where it stopped within 1% of the plan, before Note [Late
    // branches] could add more.)
    EXPECT_GE(r.bound_s, std::min(without, 0.99 * any)) << "trial " << trial;
    windowed += r.bound_s > without * (1 + 1e-9) ? 1 : 0;
  }
  EXPECT_GT(improved, 10);  // the large tensors make it count
  EXPECT_GT(windowed, 3);
}

// Note [Late branches]: n0 -> n1 -> n2 and n0 -> n3, of 1, 4, 1 and 0.5 s
// (toy chip: 1e9 FLOP/s). Heaviest paths out: n3 0.5 s, n2 1 s, n1 5 s, n0
// 6 s. With 0.75 s only n3 goes (n0's tensor is then read by n1 alone); with
// 1 s n2 too (n1's tensor has no reader left), 1.5 s in all.
TEST(CutBoundTest, DropsTheLateBranches) {
  ShardingProblem p = MakeTestProblem(4, {{0, 1}, {1, 2}, {0, 3}}, {0, 0, 0, 0},
                                      {1e9, 4e9, 1e9, 0.5e9});
  const DeviceModel model(p, ToyChip(), Precision::kFp32);
  double dropped = 0;
  ShardingProblem r = DropLateBranches(p, model, 0.75, &dropped);
  EXPECT_DOUBLE_EQ(dropped, 0.5);
  EXPECT_EQ(r.consumers[0], std::vector<int32_t>({1}));
  EXPECT_EQ(r.output_consumers[0][0], std::vector<int32_t>({1}));
  EXPECT_TRUE(r.producers[3].empty());
  EXPECT_TRUE(r.input_tensors[3].empty());
  EXPECT_TRUE(r.is_constant[3]);
  EXPECT_DOUBLE_EQ(r.node_time_s[1], 4.0);
  EXPECT_DOUBLE_EQ(r.node_time_s[3], 0.0);
  r = DropLateBranches(p, model, 1.0, &dropped);
  EXPECT_DOUBLE_EQ(dropped, 1.5);
  EXPECT_TRUE(r.consumers[1].empty());
  EXPECT_TRUE(r.output_consumers[1][0].empty());
  EXPECT_TRUE(r.is_constant[2]);
  EXPECT_FALSE(r.is_constant[1]);
}

// Note [Reach DP] and Note [Late branches] are valid on small random DAGs,
// a third with output branches (DagWithSinkBranches): never above the best
// monotone split (brute force), with few buckets (4 to
// 64: the boundaries' positions within a bucket matter) and late_share up to
// 1 (much of the graph dropped), either copy model, with and without a fixed
// cost per copy. Each proves more than the bound without it somewhere (the
// reach DP on 26 of 240, the late branches on 7). A bound 5% higher would
// fail 70 of the 240 checks (counted: the check can fail).
TEST(CutBoundTest, ReachAndLateBranchesNeverAboveBruteForce) {
  std::mt19937 rng(20261204);
  int reach_more = 0, late_more = 0, inflated_fails = 0, tried = 0;
  for (int trial = 0; trial < 240; ++trial) {
    const int n = 4 + static_cast<int>(rng() % 4);  // 4..7
    const int k = 2 + static_cast<int>(rng() % 3);  // 2..4
    const int64_t bytes = trial % 2 == 0 ? 4000000000 : 800000000;
    ShardingProblem p = trial % 3 == 2
                            ? testing::DagWithSinkBranches(rng, n + 1, 2, bytes)
                            : RandomDag(rng, n, bytes);
    p.copies_through_host = trial % 5 == 0;
    proto::DeviceProfile chip = ToyChip();
    if (trial % 4 >= 2) chip.set_transfer_fixed_s(0.3);
    const DeviceModel model(p, chip, Precision::kFp32);
    const double best = BestMonotone(p, model, k).second;
    if (best == std::numeric_limits<double>::infinity()) continue;
    ++tried;
    CutBoundOptions o;
    o.buckets = 4 << (trial % 5);  // 4..64
    o.window_groups = trial % 3 == 0 ? 0 : o.buckets;
    o.late_share = 0.25 * (trial % 5);  // 0..1
    // Above the best split, so the 1% stops do not hide a bound that is
    // too high.
    const double upper = 1.5 * best;
    const CutBoundResult r = CutBound(p, model, k, upper, o);
    EXPECT_LE(r.bound_s, best * (1 + 1e-9)) << "trial " << trial;
    inflated_fails += 1.05 * r.bound_s > best * (1 + 1e-9) ? 1 : 0;
    CutBoundOptions no_reach = o;
    no_reach.reach_dp = false;
    no_reach.late_share = 0;
    CutBoundOptions no_late = o;
    no_late.late_share = 0;
    const double without_late = CutBound(p, model, k, upper, no_late).bound_s;
    const double plain = CutBound(p, model, k, upper, no_reach).bound_s;
    EXPECT_GE(without_late, plain * (1 - 1e-12)) << "trial " << trial;
    reach_more += without_late > plain * (1 + 1e-6) ? 1 : 0;
    late_more += r.bound_s > without_late * (1 + 1e-6) ? 1 : 0;
  }
  EXPECT_GT(tried, 150);
  EXPECT_GT(reach_more, 5);
  EXPECT_GT(late_more, 0);
  EXPECT_GT(inflated_fails, 10);
}

// Note [Pooled late branches] is valid on small random DAGs with much of
// the graph dropped (late_share 0.5 to 1): never above the best monotone
// split (brute force), never below the bound without it; the counts below
// show it proves more somewhere and that a bound 5% higher fails checks.
TEST(CutBoundTest, PooledLateBranchesNeverAboveBruteForce) {
  std::mt19937 rng(20261205);
  int pooled_more = 0, inflated_fails = 0, tried = 0;
  for (int trial = 0; trial < 240; ++trial) {
    const int n = 4 + static_cast<int>(rng() % 4);  // 4..7
    const int k = 2 + static_cast<int>(rng() % 3);  // 2..4
    const int64_t bytes = trial % 2 == 0 ? 4000000000 : 800000000;
    ShardingProblem p = trial % 2 == 1
                            ? testing::DagWithSinkBranches(rng, n + 1, 2, bytes)
                            : RandomDag(rng, n, bytes);
    proto::DeviceProfile chip = ToyChip();
    if (trial % 4 >= 2) chip.set_transfer_fixed_s(0.3);
    const DeviceModel model(p, chip, Precision::kFp32);
    const double best = BestMonotone(p, model, k).second;
    if (best == std::numeric_limits<double>::infinity()) continue;
    ++tried;
    CutBoundOptions o;
    o.buckets = 4 << (trial % 5);  // 4..64
    o.window_groups = trial % 3 == 0 ? 0 : o.buckets;
    o.late_share = 0.5 + 0.25 * (trial % 3);  // 0.5..1
    o.reach_dp = trial % 7 != 0;
    const double upper = 1.5 * best;
    // Note [Exact end windows] on, then off (the default) to see what
    // pooling adds.
    CutBoundOptions ends = o;
    ends.end_ideals = 20000;
    EXPECT_LE(CutBound(p, model, k, upper, ends).bound_s, best * (1 + 1e-9))
        << "trial " << trial;
    const CutBoundResult r = CutBound(p, model, k, upper, o);
    EXPECT_LE(r.bound_s, best * (1 + 1e-9)) << "trial " << trial;
    inflated_fails += 1.05 * r.bound_s > best * (1 + 1e-9) ? 1 : 0;
    CutBoundOptions unpooled = o;
    unpooled.pool_late = false;
    const double without = CutBound(p, model, k, upper, unpooled).bound_s;
    EXPECT_GE(r.bound_s, without * (1 - 1e-12)) << "trial " << trial;
    pooled_more += r.bound_s > without * (1 + 1e-6) ? 1 : 0;
  }
  printf("pooled: tried %d, more %d, inflated fails %d\n", tried, pooled_more,
         inflated_fails);
  EXPECT_GT(tried, 150);
  EXPECT_GT(pooled_more, 0);
  EXPECT_GT(inflated_fails, 10);
}

}  // namespace
}  // namespace autoshard
