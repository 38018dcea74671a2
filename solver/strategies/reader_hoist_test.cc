#include "solver/strategies/reader_hoist.h"

#include <algorithm>
#include <chrono>
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
using ::autoshard::testing::ToyChip;

// A trunk p -> a1 -> a2 -> a3 -> a4 -> j and a head h reading p, joining at
// j (nodes 0..6: p, a1, a2, a3, a4, h, j): p, h and j take 1 s, each a 2 s
// (toy chip: 1e9 FLOP/s, 1 GB/s, no fixed costs; memory ample). p's output
// is 1e9 B (1 s over a link), the others' 1e8 B (0.1 s).
// The topological order p a1 a2 a3 a4 h j is best sliced {p, a1, a2} {a3}
// {a4, h, j}, p's output passing through IPU 1: IPU 0 takes 5 s + out
// (p's, a2's: 1.1 s) = 6.1 s, IPU 1 2 + 1.1 + 1.1 (p's, a3's) = 4.2 s,
// IPU 2 4 + 1.1 = 5.1 s. Hoisting h to right after p (p h a1 a2 a3 a4 j;
// what goes on towards j is h's 1e8 B instead of p's 1e9) the DP slices
// {p, h, a1} {a2, a3} {a4, j}: 4 + 0.2 = 4.2 s, 4 + 0.2 + 0.2 = 4.4 s (h's
// output passes IPU 1) and 3 + 0.2 = 3.2 s; 4.4 s, the best monotone split.
TEST(ReaderHoistTest, TheHeadComesAfterItsProducer) {
  ShardingProblem p = MakeTestProblem(
      7, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {0, 5}, {4, 6}, {5, 6}},
      {0, 0, 0, 0, 0, 0, 0}, {1e9, 2e9, 2e9, 2e9, 2e9, 1e9, 1e9});
  p.activation_bytes = {1000000000, 100000000, 100000000, 100000000,
                        100000000,  100000000, 16};
  testing::RefreshTensors(&p);
  DeviceModel model(p, ToyChip(int64_t{1} << 40), Precision::kFp32);
  const SliceResult topological = SliceOptimally(
      p, model, TopologicalNodeOrder(p, 100), 3, /*ignore_memory=*/false,
      std::chrono::steady_clock::time_point::max());
  ASSERT_TRUE(topological.found);
  EXPECT_EQ(topological.cuts, (std::vector<int32_t>{0, 3, 4, 7}));
  EXPECT_NEAR(topological.bottleneck_s, 6.1, 1e-9);
  const std::vector<int32_t> start = {0, 0, 0, 1, 2, 2, 2};
  EXPECT_NEAR(model.EvaluatePerformance(start, 3, 1).bottleneck_s, 6.1, 1e-9);
  const ReaderHoistResult r =
      ImproveByReaderHoisting(p, model, 3, start, ReaderHoistOptions{});
  EXPECT_EQ(r.ipu, (std::vector<int32_t>{0, 0, 1, 1, 2, 0, 2}));
  EXPECT_NEAR(r.bottleneck_s, 4.4, 1e-9);
  EXPECT_EQ(r.hoists, 1);
  EXPECT_NEAR(BestMonotone(p, model, 3).first, 4.4, 1e-9);
}

// Nothing passes through an IPU on 2 IPUs: the start comes back.
TEST(ReaderHoistTest, TwoIpusAreLeftAlone) {
  ShardingProblem p =
      MakeTestProblem(3, {{0, 1}, {1, 2}, {0, 2}}, {0, 0, 0}, {1e9, 1e9, 1e9});
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  const ReaderHoistResult r =
      ImproveByReaderHoisting(p, model, 2, {0, 1, 1}, ReaderHoistOptions{});
  EXPECT_EQ(r.ipu, (std::vector<int32_t>{0, 1, 1}));
  EXPECT_EQ(r.hoists, 0);
}

// Never slower than the start, always a monotone split with every IPU used
// whose bottleneck is the one reported, and fitting whenever it is not the
// start (memory judged), on random DAGs from random contiguous splits of
// the topological order: half with memory judged on a slow link (800 B
// tensors, 200 B/s), half with memory ample and tensors up to 4 GB. (71 of
// the 300 start splits get faster.)
TEST(ReaderHoistTest, NeverSlowerAndAlwaysValidOnRandomDags) {
  std::mt19937 rng(20261204);
  int improved = 0, trials = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 5 + static_cast<int>(rng() % 9);  // 5..13
    const int k = 3 + static_cast<int>(rng() % 2);  // 3..4
    const bool judged = trial % 2 == 0;
    ShardingProblem p = RandomDag(rng, n, judged ? 800 : 4000000000);
    proto::DeviceProfile chip = ToyChip(judged ? 1000 : int64_t{1} << 40);
    if (judged) chip.set_link_bytes_per_s(200);
    DeviceModel model(p, chip, Precision::kFp32);
    std::vector<int32_t> cuts;
    while (static_cast<int>(cuts.size()) < k - 1) {
      const int32_t c = 1 + static_cast<int32_t>(rng() % (n - 1));
      if (std::find(cuts.begin(), cuts.end(), c) == cuts.end())
        cuts.push_back(c);
    }
    std::vector<int32_t> start(n, 0);
    for (int32_t x = 0; x < n; ++x)
      for (int32_t c : cuts) start[x] += x >= c ? 1 : 0;
    const double before = model.EvaluatePerformance(start, k, 1).bottleneck_s;
    ReaderHoistOptions options;
    options.ignore_memory = !judged;
    const ReaderHoistResult r =
        ImproveByReaderHoisting(p, model, k, start, options);
    ++trials;
    EXPECT_LE(r.bottleneck_s, before) << "trial " << trial;
    EXPECT_DOUBLE_EQ(r.bottleneck_s,
                     model.EvaluatePerformance(r.ipu, k, 1).bottleneck_s);
    std::vector<int> used(k, 0);
    for (int32_t x = 0; x < n; ++x) {
      ++used[r.ipu[x]];
      for (int32_t u : p.producers[x])
        EXPECT_LE(r.ipu[u], r.ipu[x]) << "trial " << trial;
    }
    for (int d = 0; d < k; ++d) EXPECT_GT(used[d], 0) << "trial " << trial;
    if (r.ipu != start) {
      EXPECT_GT(r.hoists, 0) << "trial " << trial;
      EXPECT_LT(r.bottleneck_s, before) << "trial " << trial;
      if (judged) {
        for (int d = 0; d < k; ++d)
          EXPECT_TRUE(model.EvaluateMemory(r.ipu, d).fits)
              << "trial " << trial << " IPU " << d;
      }
    }
    improved += r.bottleneck_s < before ? 1 : 0;
  }
  EXPECT_GT(improved, trials / 10);
}

}  // namespace
}  // namespace autoshard
