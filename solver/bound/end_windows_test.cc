#include "solver/bound/end_windows.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "solver/bound/cut_bound.h"
#include "solver/strategies/ideal_lattice.h"
#include "tests/brute_force.h"
#include "tests/test_problems.h"

namespace autoshard {
namespace {

using ::autoshard::testing::BestMonotone;
using ::autoshard::testing::MakeTestProblem;
using ::autoshard::testing::RandomDag;
using ::autoshard::testing::RefreshTensors;
using ::autoshard::testing::ToyChip;

// Buckets of equal compute over [0, total], as the cut bound makes them.
void Buckets(double total, int nb, std::vector<double>* lo,
             std::vector<double>* hi) {
  lo->assign(nb, 0);
  hi->assign(nb, 0);
  for (int b = 0; b < nb; ++b) {
    (*lo)[b] = total * b / nb;
    (*hi)[b] = b + 1 == nb ? total : total * (b + 1) / nb;
  }
}

// Two branches from the graph's start: n0 -> n1 and n2 -> n3, both read by
// n4; 1 s each (toy chip: 1 GFLOP/s). n0 and n2 write 1000 bytes, n1 and
// n3 100. Ideals of compute 1 s: {n0} or {n2}, 1000 bytes over their
// boundary; 2 s: {n0, n1} or {n2, n3}, 100 bytes, or {n0, n2}, 2000; 3 s:
// {n0, n1, n2} and alike, 1100. The plain cut of the bucket [0.5, 1] is 0
// (nothing is forced in: the empty ideal), the exact one 1000.
TEST(EndWindowsTest, CountsTheIdealsOfTwoBranches) {
  ShardingProblem p =
      MakeTestProblem(5, {{0, 1}, {2, 3}, {1, 4}, {3, 4}}, {0, 0, 0, 0, 0},
                      {1e9, 1e9, 1e9, 1e9, 1e9});
  p.activation_bytes = {1000, 100, 1000, 100, 16};
  RefreshTensors(&p);
  const DeviceModel model(p, ToyChip(1000000000), Precision::kFp32);
  // Buckets of 0.5 s: [0, 0.5], [0.5, 1], [1, 1.5], ...
  std::vector<double> lo, hi;
  Buckets(5, 10, &lo, &hi);
  const EndWindows e = ExactEndWindows(p, model, 1, lo, hi, 1e-9, 1000);
  ASSERT_EQ(e.front_s, 5);            // H = min(W, 4 W / k): every ideal
  EXPECT_EQ(e.least_bytes[0], 0);     // the empty ideal
  EXPECT_EQ(e.least_bytes[1], 1000);  // compute 1 s, on its upper edge
  EXPECT_EQ(e.least_bytes[2], 1000);  // and its lower edge
  EXPECT_EQ(e.least_bytes[3], 100);   // 2 s: one branch done
  EXPECT_EQ(e.least_bytes[5], 1100);  // 3 s
  EXPECT_EQ(e.least_bytes[9], 0);     // 5 s: everything
}

// Against every ideal (brute force over node subsets closed under
// producers) of random DAGs, some sources passive constants: each bucket
// the ends cover gets the least cut of the ideals whose compute lies in it
// (as ClosureCuts counts a cut: tensors of non-constant producers inside
// read by non-constant nodes outside), none meaning none; with a small
// budget H halves and fewer buckets are covered, still exactly. The cut
// bound with the ends on is never above the best monotone split.
TEST(EndWindowsTest, MatchesEveryIdealBruteForce) {
  std::mt19937 rng(20261205);
  int covered = 0, nonzero = 0, halved = 0;
  for (int trial = 0; trial < 150; ++trial) {
    const int n = 5 + static_cast<int>(rng() % 7);  // 5..11
    ShardingProblem p = RandomDag(rng, n, trial % 2 ? 4000000000 : 800);
    for (int v = 0; v < n; ++v) {
      if (p.producers[v].empty() && !p.consumers[v].empty() && rng() % 3 == 0) {
        p.is_constant[v] = 1;
        p.flops[v] = 0;
      }
    }
    const DeviceModel model(p, ToyChip(1000000000), Precision::kFp32);
    const std::vector<uint8_t> passive = PassiveConstants(p);
    double total = 0;
    for (int v = 0; v < n; ++v)
      if (!passive[v]) total += model.NodeTime(v);
    if (!(total > 0)) continue;
    const int nb = 4 + static_cast<int>(rng() % 12);
    std::vector<double> lo, hi;
    Buckets(total, nb, &lo, &hi);
    const double tolerance = 1e-9 * total;
    std::vector<int64_t> least(nb, EndWindows::kNoIdeal);
    for (uint32_t mask = 0; mask < (1u << n); ++mask) {
      auto in = [&](int v) { return (mask >> v) & 1; };
      bool ideal = true;
      double compute = 0;
      int64_t bytes = 0;
      for (int v = 0; v < n && ideal; ++v) {
        if (!in(v)) continue;
        if (passive[v]) ideal = false;  // constants are outside the lattice
        for (int u : p.producers[v]) ideal &= passive[u] || in(u);
        compute += model.NodeTime(v);
        for (size_t s = 0; s < p.output_bytes[v].size(); ++s) {
          bool out = false;
          for (int c : p.output_consumers[v][s]) out |= !passive[c] && !in(c);
          if (out) bytes += p.output_bytes[v][s];
        }
      }
      if (!ideal) continue;
      for (int b = 0; b < nb; ++b) {
        if (lo[b] - tolerance <= compute && compute <= hi[b] + tolerance)
          least[b] = std::min(least[b], bytes);
      }
    }
    const int k = 1 + static_cast<int>(rng() % 4);
    const int64_t budget = trial % 3 == 0 ? 3 : 100000;
    const EndWindows e =
        ExactEndWindows(p, model, k, lo, hi, tolerance, budget);
    for (int b = 0; b < nb; ++b) {
      if (e.least_bytes[b] < 0) continue;
      ++covered;
      nonzero +=
          e.least_bytes[b] > 0 && e.least_bytes[b] < EndWindows::kNoIdeal;
      EXPECT_EQ(e.least_bytes[b], least[b]) << "trial " << trial << " b " << b;
    }
    halved +=
        e.front_s > 0 && e.front_s < std::min(total, 4 * total / k) ? 1 : 0;
    if (k >= 2) {
      const double best = BestMonotone(p, model, k).second;
      if (best < std::numeric_limits<double>::infinity()) {
        CutBoundOptions ends;
        ends.end_ideals = 100000;
        EXPECT_LE(CutBound(p, model, k, best, ends).bound_s, best * (1 + 1e-9))
            << "trial " << trial;
      }
    }
  }
  EXPECT_GT(covered, 500);
  EXPECT_GT(nonzero, 200);
  EXPECT_GT(halved, 5);
}

}  // namespace
}  // namespace autoshard
