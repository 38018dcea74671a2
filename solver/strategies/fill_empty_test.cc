// Note [Filling empty IPUs] (constraints.h): FillEmptyIpus and Evaluated.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "solver/strategies/constraints.h"
#include "solver/strategies/ideal_lattice.h"
#include "solver/strategies/sharding_points.h"
#include "solver/strategies/strategy.h"
#include "tests/brute_force.h"
#include "tests/test_problems.h"

namespace autoshard {
namespace {

using ::autoshard::testing::MakeTestProblem;
using ::autoshard::testing::RandomDag;
using ::autoshard::testing::RefreshTensors;
using ::autoshard::testing::ToyChip;

// n0 -> n3 -> n4, and constants n1 (1e9 B: 1 s over the toy chip's 1 GB/s
// link) and n2 (16 B) read by n3. n0, n3, n4 take 1, 2, 3 s.
ShardingProblem TwoConstants() {
  ShardingProblem p = MakeTestProblem(5, {{0, 3}, {1, 3}, {2, 3}, {3, 4}},
                                      {0, 0, 0, 0, 0}, {1e9, 0, 0, 2e9, 3e9});
  p.is_constant = {0, 1, 1, 0, 0};
  p.activation_bytes = {16, 1000000000, 16, 16, 16};
  RefreshTensors(&p);
  return p;
}

// The split {n0} | {n1} | {n2, n3} | {n4} is a plan; putting the constants
// with their reader (PlaceConstants) leaves IPU 1 empty. Only a constant can
// go back there (n3 reads from IPU 2), and n2 costs 16 ns alone against
// n1's 1 s; without a model the first in node order, n1, goes.
TEST(FillEmptyIpusTest, TakesTheNodeCheapestAlone) {
  const ShardingProblem p = TwoConstants();
  const DeviceModel model(p, ToyChip(1000000000), Precision::kFp32);
  std::vector<int32_t> ipu = {0, 1, 2, 2, 3};
  ASSERT_TRUE(ValidateAssignment(p, Assignment{ipu, ipu}).ok());
  PlaceConstants(p, PassiveConstants(p), &ipu);
  ASSERT_EQ(ipu, (std::vector<int32_t>{0, 2, 2, 2, 3}));
  std::vector<int32_t> filled = ipu;
  ASSERT_TRUE(FillEmptyIpus(p, &model, 4, &filled));
  EXPECT_EQ(filled, (std::vector<int32_t>{0, 2, 1, 2, 3}));
  filled = ipu;
  ASSERT_TRUE(FillEmptyIpus(p, nullptr, 4, &filled));
  EXPECT_EQ(filled, (std::vector<int32_t>{0, 1, 2, 2, 3}));
  // Five nodes cannot fill six IPUs.
  filled = ipu;
  EXPECT_FALSE(FillEmptyIpus(p, &model, 6, &filled));
}

// A review's counter-example: IPUs 0 = {n0, n1}, 2 = {n2, n3}, 4 = {n4}
// with n0 -> n3 and n1 -> n3, n2 the cheapest node (no compute). IPU 1
// taking n2 would leave IPU 3 nothing to take (n0 and n1 feed IPU 2, n3 is
// then IPU 2's last node); in node order n0 goes to IPU 1 and n2 to IPU 3.
TEST(FillEmptyIpusTest, FallsBackToNodeOrder) {
  const ShardingProblem p = MakeTestProblem(
      5, {{0, 3}, {1, 3}}, {0, 0, 0, 0, 0}, {1e9, 1e9, 0, 1e9, 1e9});
  const DeviceModel model(p, ToyChip(1000000000), Precision::kFp32);
  std::vector<int32_t> ipu = {0, 0, 2, 2, 4};
  ASSERT_TRUE(FillEmptyIpus(p, &model, 5, &ipu));
  EXPECT_EQ(ipu, (std::vector<int32_t>{1, 0, 3, 2, 4}));
  EXPECT_TRUE(ValidateAssignment(p, Assignment{ipu, ipu}).ok());
}

// Evaluated fills the empty IPU of a split whose stages are its IPUs, and
// leaves a split with every IPU used as it is.
TEST(FillEmptyIpusTest, EvaluatedTurnsASplitWithAnEmptyIpuIntoAPlan) {
  const ShardingProblem p = TwoConstants();
  StrategyContext c;
  c.problem = &p;
  c.device = ToyChip(1000000000);
  c.num_ipus = 4;
  const std::vector<int32_t> gap = {0, 2, 2, 2, 3};
  const StrategyResult r = Evaluated(c, Assignment{gap, gap}, 0.5);
  EXPECT_EQ(r.assignment.ipu, (std::vector<int32_t>{0, 2, 1, 2, 3}));
  EXPECT_TRUE(ValidateAssignment(p, r.assignment).ok());
  const std::vector<int32_t> plan = {0, 1, 2, 2, 3};
  EXPECT_EQ(Evaluated(c, Assignment{plan, plan}, 0.5).assignment.ipu, plan);
}

// On random DAGs, splits with empty IPUs of two kinds: (even trials) a
// slicing of the topological order onto up to n / 2 IPUs with its constants
// (most sources) put with their readers; (odd) a slicing without constants
// whose IPUs are renumbered, in order, into a larger range with gaps. When
// FillEmptyIpus succeeds the split is a plan on all k IPUs, every IPU that
// was empty holds exactly one node, and only nodes now on such IPUs moved;
// and it succeeds whenever the fill in node order (no model) does.
TEST(FillEmptyIpusTest, FilledSplitsArePlansOnRandomDags) {
  std::mt19937 rng(20261205);
  int filled[2] = {0, 0};
  for (int trial = 0; trial < 400; ++trial) {
    const int n = 6 + static_cast<int>(rng() % 10);
    const bool gaps = trial % 2 == 1;
    int k = 2 + static_cast<int>(rng() % (n / 2));
    ShardingProblem p = RandomDag(rng, n);
    for (int v = 0; v < n && !gaps; ++v) {
      if (p.producers[v].empty() && !p.consumers[v].empty() && rng() % 4) {
        p.is_constant[v] = 1;
        p.flops[v] = 0;
      }
    }
    const DeviceModel model(p, ToyChip(1000000000), Precision::kFp32);
    std::vector<int32_t> ipu(n);
    for (int v = 0; v < n; ++v) ipu[v] = static_cast<int32_t>(v * k / n);
    if (gaps) {
      // IPU d becomes label[d]: k of the values 0..k+1, in order.
      std::vector<int32_t> label(k + 2);
      for (int d = 0; d < k + 2; ++d) label[d] = d;
      std::shuffle(label.begin(), label.end(), rng);
      label.resize(k);
      std::sort(label.begin(), label.end());
      for (int32_t& d : ipu) d = label[d];
      k += 2;
    } else {
      PlaceConstants(p, PassiveConstants(p), &ipu);
    }
    std::vector<int32_t> count(k, 0);
    for (int32_t d : ipu) ++count[d];
    std::vector<int32_t> out = ipu, in_order = ipu;
    const bool any = FillEmptyIpus(p, nullptr, k, &in_order);
    EXPECT_EQ(FillEmptyIpus(p, &model, k, &out), any) << "trial " << trial;
    if (!any) continue;
    const Assignment a{out, out};
    ASSERT_TRUE(ValidateAssignment(p, a).ok()) << "trial " << trial;
    EXPECT_EQ(a.num_ipus(), k) << "trial " << trial;
    std::vector<int32_t> after(k, 0);
    for (int32_t d : out) ++after[d];
    for (int d = 0; d < k; ++d) {
      if (count[d] == 0) {
        EXPECT_EQ(after[d], 1) << "trial " << trial;
      }
    }
    for (int v = 0; v < n; ++v) {
      if (out[v] != ipu[v]) {
        EXPECT_EQ(count[out[v]], 0) << "trial " << trial;
      }
    }
    filled[gaps] += out != ipu ? 1 : 0;
  }
  EXPECT_GT(filled[0], 10);
  EXPECT_GT(filled[1], 50);
}

}  // namespace
}  // namespace autoshard
