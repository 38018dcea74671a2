#include "writers/report_text.h"

#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "writers/emit.h"

namespace autoshard {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Two IPUs of a toy chip: 4 tiles of 1,000 bytes (capacity 4 kB). IPU 0's
// fullest tile is tile 2 (global 2) with 500 bytes: 50.0% used; IPU 1's is
// tile 3 (global 1 x 4 + 3 = 7) with 1,200 bytes: 120.0%, it overflows.
// IPU 0 sends one 2,500-byte cut tensor to IPU 1. auto chose optimal.
proto::Plan TwoIpuPlan() {
  proto::Plan plan;
  plan.set_model("m.onnx");
  plan.set_num_ipus(2);
  plan.set_tiles_per_ipu(4);
  plan.set_bytes_per_tile(1000);
  for (int d = 0; d < 2; ++d) {
    proto::IpuCost* c = plan.add_ipus();
    c->set_ipu(d);
    c->set_num_nodes(3);
    c->set_stage_time_s(d == 0 ? 2.5e-3 : 4e-7);
    proto::IpuMemory* m = c->mutable_memory();
    m->set_max_tile_bytes(d == 0 ? 500 : 1200);
    m->set_max_tile(d == 0 ? 2 : 7);
    m->set_max_tile_on_ipu(d == 0 ? 2 : 3);
    m->set_fits(d == 0);
  }
  plan.mutable_ipus(0)->set_cut_tensor_out_bytes(2500);
  plan.mutable_ipus(1)->set_cut_tensor_in_bytes(2500);
  proto::CutTensor* t = plan.add_cut_tensors();
  t->set_tensor("x");
  t->set_from_ipu(0);
  t->add_reader_ipus(1);
  t->set_bytes(2500);
  plan.mutable_search()->set_candidates(7);
  plan.mutable_search()->set_max_tile_bytes(1500);
  plan.mutable_search()->set_raw_max_tile_bytes(1800);
  proto::StrategyResult* chosen = plan.add_candidates();
  chosen->set_strategy("optimal");
  chosen->set_chosen(true);
  plan.add_candidates()->set_strategy("search");
  return plan;
}

TEST(ReportTextTest, ShowsCapacityTileAsIpuAndLocalIndexAndCutBytes) {
  const std::string text = ReportText(TwoIpuPlan());
  EXPECT_THAT(text, HasSubstr("IPU capacity: 4.00 kB = 4 tiles x 1.00 kB"));
  // 1,200 of 1,000 bytes: 120.0%; the local tile 3, not the global 7.
  EXPECT_THAT(text, HasSubstr("fullest tile: IPU 1 tile 3, 1.20 kB of 1.00 kB "
                              "(120.0% used)\n"));
  EXPECT_THAT(text, HasSubstr("1 of 2 IPUs overflow (1)\n"));
  EXPECT_THAT(text, HasSubstr("cut tensors: 1 (2.50 kB, one copy each); "
                              "largest 2.50 kB from IPU 0: x\n"));
  // A tensor passed along: the rows send 2.50 + 2.50 kB of the one copy.
  proto::Plan passed = TwoIpuPlan();
  passed.mutable_ipus(1)->set_cut_tensor_out_bytes(2500);
  // (The report wraps at 100 columns with a two-space indent.)
  EXPECT_THAT(absl::StrReplaceAll(ReportText(passed), {{"\n  ", " "}}),
              HasSubstr("cut tensors: 1 (2.50 kB, one copy each; 5.00 kB "
                        "sent, some relayed through the IPUs between); "
                        "largest 2.50 kB from IPU 0: x\n"));
  // IPU 0's row: tile 2, 50.0% used, 2.5 ms, 2.50 kB sent.
  EXPECT_THAT(text, HasSubstr("   2   50.0%  yes"));
  EXPECT_THAT(text, HasSubstr("2.500 ms   2.50 kB\n"));
  // 4e-7 s is 400 ns, with its own prefix.
  EXPECT_THAT(text, HasSubstr("400.000 ns"));
}

// Note [Splits that do not fit]: when auto chose a faster split over one
// with a smaller fullest tile (neither fits), the line says why.
TEST(ReportTextTest, AutoLineSaysWhyAFullerSplitWasChosen) {
  proto::Plan plan = TwoIpuPlan();
  proto::StrategyResult* optimal = plan.mutable_candidates(0);
  optimal->set_bottleneck_s(2e-3);
  optimal->set_max_tile_bytes(1200);
  proto::StrategyResult* search = plan.mutable_candidates(1);
  search->set_bottleneck_s(3e-3);
  search->set_max_tile_bytes(1100);
  std::string text = ReportText(plan);
  EXPECT_THAT(text, HasSubstr("chose optimal (the fastest of the splits"));
  EXPECT_THAT(text, HasSubstr("memory error band of the smallest)\n"));
  // The search split faster: a smaller tile did not lose to speed.
  search->set_bottleneck_s(1e-3);
  text = ReportText(plan);
  EXPECT_THAT(text, HasSubstr("chose optimal\n"));
  EXPECT_THAT(text, Not(HasSubstr("memory error band")));
}

TEST(ReportTextTest, SearchLineSaysItsSplitIsNotTheOneShown) {
  const std::string text = ReportText(TwoIpuPlan());
  EXPECT_THAT(text, HasSubstr("search (not the split shown: auto chose "
                              "optimal): 7 candidates"));
  EXPECT_THAT(text, HasSubstr("its fullest tile 1.50 kB (raw split's: "
                              "1.80 kB)"));
  proto::Plan search_only = TwoIpuPlan();
  search_only.clear_candidates();
  EXPECT_THAT(ReportText(search_only), Not(HasSubstr("not the split shown")));
}

TEST(ReportTextTest, EveryLineWithin100Columns) {
  proto::Plan plan = TwoIpuPlan();
  plan.set_calibration(std::string(30, 'a') + " " + std::string(90, 'b') + " " +
                       std::string(60, 'c'));
  for (bool verbose : {false, true}) {
    for (absl::string_view line :
         absl::StrSplit(ReportText(plan, verbose), '\n')) {
      EXPECT_LE(line.size(), kReportColumns) << line;
    }
  }
}

// A revisiting plan with no other plan to weigh it against (--weights
// variable: none that keeps stage k on IPU k is allowed) says so without
// the "this ... saves" wording of a comparison.
TEST(ReportTextTest, AShareWithNothingToCompareReadsAsASentence) {
  proto::Plan plan = TwoIpuPlan();
  proto::StageLayout* st = plan.mutable_stages();
  st->set_num_stages(3);
  for (int d : {0, 1, 0}) st->add_stage_ipus(d);
  st->set_shared_weight("wte");
  st->set_shared_weight_bytes(2000);
  st->set_weights("variable");
  st->set_choice("revisit");
  std::string text = ReportText(plan);
  absl::StrReplaceAll({{"\n  ", " "}}, &text);
  EXPECT_THAT(text, HasSubstr("stages: 3 stages on 2 IPUs (stage 2 on IPU 0)"));
  EXPECT_THAT(text, HasSubstr("the last stage returns to IPU 0, which holds "
                              "it once; no split that keeps stage k on IPU k "
                              "is allowed or fits"));
  EXPECT_THAT(text, Not(HasSubstr("this no split")));
}

TEST(ReportTextTest, WrapsAtTheLastSpaceWithAnIndent) {
  // "aaa bbb ccc" in 7 columns: "aaa bbb", then "  ccc".
  EXPECT_EQ(WrapReportLines("aaa bbb ccc\nd\n", 7), "aaa bbb\n  ccc\nd\n");
  // A word longer than the line stays whole.
  EXPECT_EQ(WrapReportLines("abcdefghij\n", 4), "abcdefghij\n");
}

TEST(HumanSecondsTest, PrefixPerFigure) {
  EXPECT_EQ(HumanSeconds(0), "0 s");
  EXPECT_EQ(HumanSeconds(1.5), "1.500 s");
  EXPECT_EQ(HumanSeconds(0.0125), "12.500 ms");
  EXPECT_EQ(HumanSeconds(1.25e-4), "125.000 us");
  EXPECT_EQ(HumanSeconds(3e-8), "30.000 ns");
}

}  // namespace
}  // namespace autoshard
