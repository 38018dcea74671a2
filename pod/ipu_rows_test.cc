#include "pod/ipu_rows.h"

#include <vector>

#include "gtest/gtest.h"

namespace autoshard::pod {
namespace {

// k IPUs of 10 nodes, 1 ms each, 100 bytes on the fullest tile, all fitting.
proto::Plan EvenPlan(int k) {
  proto::Plan plan;
  for (int d = 0; d < k; ++d) {
    proto::IpuCost* c = plan.add_ipus();
    c->set_ipu(d);
    c->set_num_nodes(10);
    c->set_flops(1e9);
    c->set_stage_time_s(1e-3);
    c->mutable_memory()->set_weight_bytes(1000);
    c->mutable_memory()->set_max_tile_bytes(100);
    c->mutable_memory()->set_fits(true);
  }
  return plan;
}

std::vector<std::pair<int, int>> Pairs(const std::vector<IpuRun>& runs) {
  std::vector<std::pair<int, int>> out;
  for (const IpuRun& r : runs) out.push_back({r.first, r.last});
  return out;
}

TEST(IpuRowsTest, SmallPlansAndVerboseKeepEveryRow) {
  EXPECT_EQ(IpuRows(EvenPlan(16), false).size(), 16u);
  EXPECT_EQ(IpuRows(EvenPlan(256), true).size(), 256u);
}

// A host row (issue 31: plan rows in chain order, the host's between IPUs
// 9 and 10) never folds: alone are rows 0, 1, 18, 19 and the host's 10; row
// 0 is also the slowest and the fullest (all equal).
TEST(IpuRowsTest, AHostRowStaysAlone) {
  proto::Plan plan = EvenPlan(20);
  for (int d = 11; d < 20; ++d) plan.mutable_ipus(d)->set_ipu(d - 1);
  plan.mutable_ipus(10)->set_ipu(-1);
  plan.mutable_ipus(10)->set_host(true);
  EXPECT_EQ(
      Pairs(IpuRows(plan, false)),
      (std::vector<std::pair<int, int>>{
          {0, 0}, {1, 1}, {2, 9}, {10, 10}, {11, 17}, {18, 18}, {19, 19}}));
}

TEST(IpuRowsTest, FoldsAroundTheIpusThatMatter) {
  proto::Plan plan = EvenPlan(256);
  plan.mutable_ipus(100)->set_stage_time_s(2e-3);  // the bottleneck
  plan.mutable_ipus(200)->mutable_memory()->set_max_tile_bytes(900);  // fullest
  for (int d : {50, 51, 52, 53, 54, 60}) {
    plan.mutable_ipus(d)->mutable_memory()->set_fits(false);
  }
  // Alone: 0, 1, 254, 255, the first 4 overflowing (50-53), 100 and 200.
  EXPECT_EQ(Pairs(IpuRows(plan, false)),
            (std::vector<std::pair<int, int>>{{0, 0},
                                              {1, 1},
                                              {2, 49},
                                              {50, 50},
                                              {51, 51},
                                              {52, 52},
                                              {53, 53},
                                              {54, 99},
                                              {100, 100},
                                              {101, 199},
                                              {200, 200},
                                              {201, 253},
                                              {254, 254},
                                              {255, 255}}));
  // 54-99: 46 IPUs of 10 nodes; 54 and 60 overflow; stage times max 1 ms.
  const proto::IpuCost folded = FoldIpus(plan, {54, 99});
  EXPECT_EQ(folded.num_nodes(), 460);
  EXPECT_EQ(folded.memory().weight_bytes(), 46000);
  EXPECT_FALSE(folded.memory().fits());
  EXPECT_DOUBLE_EQ(folded.stage_time_s(), 1e-3);
  EXPECT_TRUE(FoldIpus(plan, {101, 199}).memory().fits());
  EXPECT_EQ(OverflowSummary(plan), "6 of 256 IPUs overflow (50-54, 60)\n");
  EXPECT_EQ(OverflowSummary(EvenPlan(4)), "");
}

// IPUs whose stage time is 0 (host rows aside) are named in a warning.
TEST(IpuRowsTest, IdleIpusAreNamed) {
  proto::Plan plan = EvenPlan(5);
  EXPECT_EQ(IdleIpusWarning(plan), "");
  for (int d : {0, 1, 3}) plan.mutable_ipus(d)->set_stage_time_s(0);
  EXPECT_EQ(IdleIpusWarning(plan),
            "3 of 5 IPUs (0-1, 3) do no work: their nodes take 0 s (folded "
            "constants, say); fewer IPUs may give the same bottleneck (-n "
            "auto plans the fewest that fit)");
  // A host device's row is not an IPU, idle or not.
  plan.mutable_ipus(3)->set_host(true);
  EXPECT_EQ(IdleIpusWarning(plan).substr(0, 21), "2 of 4 IPUs (0-1) do ");
  EXPECT_EQ(IdleIpusWarning(EvenPlan(1)), "");
  proto::Plan one = EvenPlan(1);
  one.mutable_ipus(0)->set_stage_time_s(0);
  EXPECT_EQ(IdleIpusWarning(one), "");  // one IPU: nothing fewer to try
}

TEST(IpuRowsTest, OverflowSummaryListsAtMostEightRanges) {
  proto::Plan plan = EvenPlan(40);
  // Every other IPU overflows: 20 ranges of one.
  for (int d = 0; d < 40; d += 2)
    plan.mutable_ipus(d)->mutable_memory()->set_fits(false);
  EXPECT_EQ(OverflowSummary(plan),
            "20 of 40 IPUs overflow (0, 2, 4, 6, 8, 10, 12, 14, and 12 more "
            "ranges)\n");
}

}  // namespace
}  // namespace autoshard::pod
