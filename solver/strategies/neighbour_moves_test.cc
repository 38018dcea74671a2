#include "solver/strategies/neighbour_moves.h"

#include <algorithm>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tests/brute_force.h"
#include "tests/test_problems.h"

namespace autoshard {
namespace {

using ::autoshard::testing::BestMonotone;
using ::autoshard::testing::MakeTestProblem;
using ::autoshard::testing::RandomDag;
using ::autoshard::testing::ToyChip;

// A chain n0 -> n1 -> n2 -> n3 of 1, 4, 1 and 2 s (toy chip: 1e9 FLOP/s,
// 1 GB/s, no fixed costs); n1's output is 3e9 B (3 s over the link), n0's
// and n2's 1e8 B (0.1 s). From {n0, n1} | {n2, n3}: IPU 0 takes 5 + 3 = 8 s
// (the bottleneck), IPU 1 3 + 3 = 6 s. Taking n1's reader n2 onto IPU 0
// gives 6 + 0.1 = 6.1 s and 2 + 0.1 = 2.1 s; giving n1 to IPU 1 only
// 1.1 s and 7.1 s. Then nothing lowers 6.1 s (n3 alone on IPU 1 cannot
// leave it; n2 back is 8 s). 6.1 s is the best monotone split.
TEST(NeighbourMovesTest, TheHeavyNodesReaderJoinsIt) {
  ShardingProblem p = MakeTestProblem(4, {{0, 1}, {1, 2}, {2, 3}}, {0, 0, 0, 0},
                                      {1e9, 4e9, 1e9, 2e9});
  p.activation_bytes = {100000000, 3000000000, 100000000, 16};
  testing::RefreshTensors(&p);
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  const NeighbourMovesResult r =
      ImproveByNeighbourMoves(p, model, 2, {0, 0, 1, 1}, {});
  EXPECT_EQ(r.ipu, (std::vector<int32_t>{0, 0, 0, 1}));
  EXPECT_NEAR(r.bottleneck_s, 6.1, 1e-9);
  EXPECT_EQ(r.moves, 1);
  EXPECT_NEAR(BestMonotone(p, model, 2).second, 6.1, 1e-9);
}

// Never slower than the start, and still a monotone split with every IPU
// used, on random DAGs from random contiguous splits of the topological
// order; its bottleneck is the split's.
TEST(NeighbourMovesTest, NeverSlowerThanTheStartOnRandomDags) {
  std::mt19937 rng(20261204);
  int improved = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 4 + static_cast<int>(rng() % 9);  // 4..12
    const int k = 2 + static_cast<int>(rng() % 3);  // 2..4
    if (k > n) continue;
    ShardingProblem p = RandomDag(rng, n, trial % 2 ? 4000000000 : 800000000);
    DeviceModel model(p, ToyChip(), Precision::kFp32);
    // k - 1 distinct cut points in 1..n-1 over the order 0..n-1.
    std::vector<int32_t> cuts;
    while (static_cast<int>(cuts.size()) < k - 1) {
      const int32_t c = 1 + static_cast<int32_t>(rng() % (n - 1));
      if (std::find(cuts.begin(), cuts.end(), c) == cuts.end())
        cuts.push_back(c);
    }
    std::sort(cuts.begin(), cuts.end());
    std::vector<int32_t> start(n, 0);
    for (int32_t x = 0; x < n; ++x)
      for (int32_t c : cuts) start[x] += x >= c ? 1 : 0;
    const double before = model.EvaluatePerformance(start, k, 1).bottleneck_s;
    const NeighbourMovesResult r =
        ImproveByNeighbourMoves(p, model, k, start, {});
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
    improved += r.bottleneck_s < before ? 1 : 0;
  }
  EXPECT_GT(improved, 20);
}

}  // namespace
}  // namespace autoshard
