#include "solver/bound/bound.h"

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "solver/bound/certify.h"
#include "tests/test_problems.h"

namespace autoshard {
namespace {

using ::autoshard::testing::MakeTestProblem;
using ::autoshard::testing::ToyChip;

TEST(BoundTest, TheCascadeIsHeavyNodeCutLateBranchesBlockDpIdealDpCbc) {
  std::vector<std::string> names;
  for (const Bound* b : CertifyBounds()) names.emplace_back(b->name());
  EXPECT_EQ(names, (std::vector<std::string>{
                       "heavy node", "min-cut", "min-cut without late branches",
                       "block DP", "ideal DP", "CBC MIP"}));
}

// A chain n0 -> n1 -> n2 -> n3 of 1, 1, 1 and 3 s (1e9 FLOPs each at the toy
// chip's 1 GFLOP/s, n3 3e9), 16-byte tensors. On 2 IPUs the best split is
// {n0, n1, n2} | {n3}: 3 s a side, plus 16 ns of copies. Every bound of the
// cascade is valid: at most that, and at least the cheap bound's 6 / 2 = 3 s
// (the costliest node is 3 s too); the ideal DP is exact on 5 ideals.
TEST(BoundTest, EveryBoundIsValidOnAChain) {
  ShardingProblem p = MakeTestProblem(4, {{0, 1}, {1, 2}, {2, 3}}, {0, 0, 0, 0},
                                      {1e9, 1e9, 1e9, 3e9});
  const DeviceModel model(p, ToyChip(), Precision::kFp32);
  const std::vector<int32_t> plan = {0, 0, 0, 1};
  const double bottleneck = model.EvaluatePerformance(plan, 2, 1).bottleneck_s;
  BoundProblem asked{&p, &model, 2, &plan, bottleneck, true, 0};
  const BoundBudget budget{std::chrono::steady_clock::now(), 10};
  for (const Bound* b : CertifyBounds()) {
    const BoundValue v = b->Run(asked, budget);
    EXPECT_LE(v.bound_s, bottleneck * (1 + 1e-9)) << b->name();
    if (b->name() == "ideal DP") {
      EXPECT_EQ(v.stop, BoundStop::kExact);
      EXPECT_NEAR(v.bound_s, bottleneck, bottleneck * 1e-9);
      EXPECT_EQ(v.method, "ideal DP");
    }
  }
  const Certificate c = CertifyBound(p, model, 2, plan, bottleneck, true, 10);
  EXPECT_GE(c.bound_s, 3.0 - 1e-9);
  EXPECT_LE(c.bound_s, bottleneck * (1 + 1e-9));
}

// The deadlines are shares of the one budget from its start: 40% of 10 s
// is 4 s after it, 80% 8 s, however late the bound starts.
TEST(BoundTest, DeadlinesAreSharesOfTheOneBudget) {
  const BoundBudget budget{std::chrono::steady_clock::now(), 10};
  EXPECT_EQ(budget.Until(kBlockDpShare) - budget.start,
            std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                std::chrono::duration<double>(4)));
  EXPECT_EQ(budget.Until(kIdealDpShare) - budget.start,
            std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                std::chrono::duration<double>(8)));
}

// n0 read by 15 parallel nodes n1..n15, all read by n16: 2^15 + 2 ideals,
// over the ideal DP's 20,000, so the ideal DP does not run and the filler
// bound would; told the block DP solved its relaxation, it is skipped.
TEST(BoundTest, FillerBoundSkippedWhenTheBlockDpSolvedItsRelaxation) {
  std::vector<std::pair<int, int>> edges;
  for (int i = 1; i <= 15; ++i) {
    edges.emplace_back(0, i);
    edges.emplace_back(i, 16);
  }
  ShardingProblem p = MakeTestProblem(17, edges, std::vector<int64_t>(17, 0),
                                      std::vector<double>(17, 1e9));
  const DeviceModel model(p, ToyChip(), Precision::kFp32);
  std::vector<int32_t> plan(17, 0);
  for (int i = 9; i < 17; ++i) plan[i] = 1;
  const double bottleneck = model.EvaluatePerformance(plan, 2, 1).bottleneck_s;
  BoundProblem asked{&p, &model, 2, &plan, bottleneck, true, 0};
  const BoundBudget budget{std::chrono::steady_clock::now(), 10};
  const Bound* ideal = nullptr;
  for (const Bound* b : CertifyBounds())
    if (b->name() == "ideal DP") ideal = b;
  ASSERT_NE(ideal, nullptr);
  const std::string skipped = "fillers not run";
  EXPECT_EQ(ideal->Run(asked, budget).note.find(skipped), std::string::npos);
  asked.at_most_k_relaxation_solved = true;
  const BoundValue v = ideal->Run(asked, budget);
  EXPECT_NE(v.note.find(skipped), std::string::npos) << v.note;
  EXPECT_EQ(v.bound_s, 0);
}

}  // namespace
}  // namespace autoshard
