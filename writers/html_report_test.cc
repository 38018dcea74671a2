#include "writers/html_report.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace autoshard {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Two IPUs of 10 tiles x 1,000 bytes (10 kB each).
proto::DeviceProfile SmallDevice() {
  proto::DeviceProfile d;
  d.set_name("small");
  d.set_tiles_per_ipu(10);
  d.set_bytes_per_tile(1000);
  d.set_link_bytes_per_s(1000);
  return d;
}

proto::Plan TwoIpuPlan() {
  proto::Plan plan;
  plan.set_model("m<1>.onnx");
  plan.set_num_ipus(2);
  plan.set_strategy("raw");
  plan.set_fits(true);
  for (int i = 0; i < 2; ++i) {
    proto::IpuCost* ipu = plan.add_ipus();
    ipu->set_ipu(i);
    ipu->set_num_nodes(3);
    ipu->set_stage_time_s(i == 0 ? 2 : 1);
    ipu->set_cut_tensor_out_bytes(i == 0 ? 500 : 0);
    ipu->set_cut_tensor_in_bytes(i == 0 ? 0 : 500);
    proto::IpuMemory* m = ipu->mutable_memory();
    m->set_weight_bytes(4000);
    m->set_code_bytes(1000);
    m->set_total_bytes(5000);
    m->set_max_tile_bytes(750);
  }
  plan.mutable_performance()->set_bottleneck_s(2);
  plan.mutable_performance()->set_lower_bound_s(1.5);
  proto::CutTensor* t = plan.add_cut_tensors();
  t->set_tensor("t&1");
  t->set_producer("p");
  t->add_reader_ipus(1);
  t->set_bytes(500);
  plan.add_warnings("w <1>");
  return plan;
}

TEST(PlanHtmlTest, HasEveryChartAndTaggedFigures) {
  HtmlPageInputs in;
  in.device = SmallDevice();
  in.command_line = "autoshard shard m.onnx";
  // As the performance model counts them: 500 B out of IPU 0 and into IPU
  // 1 at 1,000 B/s, 0.5 s each.
  in.copy_s = {0.5, 0.5};
  const std::string page = PlanHtml(TwoIpuPlan(), in);
  for (const char* id :
       {"memory-chart", "tile-chart", "stage-chart", "timeline-chart",
        "ipu-table", "cut-table", "options-table"}) {
    EXPECT_THAT(page, HasSubstr(absl::StrCat("id=\"", id, "\""))) << id;
  }
  EXPECT_THAT(page, HasSubstr("<span data-field=\"ipus.1.memory.total_bytes\" "
                              "data-value=\"5000\">5.00 kB</span>"));
  EXPECT_THAT(page, HasSubstr("data-field=\"cut_tensors.0.bytes\" "
                              "data-value=\"500\">500 B</span>"));
  // Text from the plan is escaped.
  EXPECT_THAT(page, HasSubstr("m&lt;1&gt;.onnx"));
  EXPECT_THAT(page, HasSubstr("t&amp;1"));
  EXPECT_THAT(page, HasSubstr("<li>w &lt;1&gt;</li>"));
  EXPECT_THAT(page, Not(HasSubstr("m<1>")));
  // 5 kB of a 10 kB IPU is half: the capacity line is drawn.
  EXPECT_THAT(page, HasSubstr("data-line=\"IPU capacity 10.00 kB"));
  // The fullest tile, 750 of 1,000 bytes, leaves 250 (25.0%).
  EXPECT_THAT(page, HasSubstr("tile 0: margin 250 B (25.0%)"));
  // IPU 0 copies 500 B at 1,000 B/s: 0.5 s of its 2 s; 4 micro-batches x
  // 2 IPUs compute boxes, each with a copy box on IPU 0 and 1.
  EXPECT_THAT(page, HasSubstr("compute 1.500 s"));
  EXPECT_THAT(page, HasSubstr("<code>autoshard shard m.onnx</code>"));
  EXPECT_THAT(page, Not(HasSubstr("id=\"graph\"")));
}

// The split of a stage time into compute and copies is the plan's (the
// performance model's, with its fixed cost per copy), not the page's own
// bytes / bandwidth: 0.75 s of IPU 0's 2 s, none of IPU 1's 1 s, whatever the
// link.
TEST(PlanHtmlTest, CopySecondsComeFromThePlan) {
  HtmlPageInputs in;
  in.device = SmallDevice();
  in.copy_s = {0.75};
  const std::string page = PlanHtml(TwoIpuPlan(), in);
  EXPECT_THAT(page, HasSubstr("on IPU 0: compute 1.250 s"));
  EXPECT_THAT(page, HasSubstr("on IPU 1: compute 1.000 s"));
  EXPECT_THAT(page, Not(HasSubstr("data-copy=\"1\"")));
}

// Five stages on four IPUs, the last back on IPU 0 (GPT-2's LM head beside
// its tied embedding, issue 29). Stage seconds, compute + copies:
// stage 0: 1 + 0.5, stages 1-3: 2 + 0, stage 4: 1.5 + 0; IPU 0 runs stages 0
// and 4 every step, 1.5 + 1.5 = 3 s, the bottleneck.
proto::Plan RevisitingPlan() {
  proto::Plan plan;
  plan.set_model("gpt2.onnx");
  plan.set_num_ipus(4);
  plan.set_fits(true);
  for (int i = 0; i < 4; ++i) {
    proto::IpuCost* ipu = plan.add_ipus();
    ipu->set_ipu(i);
    ipu->set_stage_time_s(i == 0 ? 3 : 2);
  }
  plan.mutable_performance()->set_bottleneck_s(3);
  proto::StageLayout* st = plan.mutable_stages();
  st->set_num_stages(5);
  for (int d : {0, 1, 2, 3, 0}) st->add_stage_ipus(d);
  return plan;
}

TEST(PlanHtmlTest, TheTimelineDrawsARevisitingStageOnItsIpu) {
  HtmlPageInputs in;
  in.device = SmallDevice();
  in.copy_s = {0.5, 0, 0, 0};
  in.stage_compute_s = {1, 2, 2, 2, 1.5};
  in.stage_copy_s = {0.5, 0, 0, 0, 0};
  const std::string page = PlanHtml(RevisitingPlan(), in);
  EXPECT_THAT(page, HasSubstr("4 micro-batches, one step = the bottleneck; "
                              "5 stages on 4 IPUs"));
  EXPECT_THAT(page, HasSubstr(">IPU 0 (stages 0, 4)</text>"));
  EXPECT_THAT(page, HasSubstr("data-field=\"stages.num_stages\" "
                              "data-value=\"5\">5</span> stages on 4 IPUs "
                              "(stage 4 on IPU 0)"));
  // 4 micro-batches x 5 stages: 20 compute boxes, 4 of stage 4, each on
  // IPU 0's row.
  int boxes = 0, stage4 = 0;
  for (size_t at = page.find("data-micro-batch="); at != std::string::npos;
       at = page.find("data-micro-batch=", at + 1))
    ++boxes;
  for (size_t at = page.find("data-ipu=\"0\" data-stage=\"4\"");
       at != std::string::npos;
       at = page.find("data-ipu=\"0\" data-stage=\"4\"", at + 1))
    ++stage4;
  EXPECT_EQ(boxes, 20);
  EXPECT_EQ(stage4, 4);
  // Micro-batch 0 reaches stage 4 in step 4 (12 s) and runs after stage 0's
  // 1.5 s on IPU 0: 13.5 s to 15 s of the 3 x (4 + 5 - 1) = 24 s axis, so
  // x = 150 + 13.5 / 24 x 750 = 571.875, width 1.5 / 24 x 750 = 46.875
  // (written with two decimals), on lane 0 (y = 34 + 18 for the legend + 3
  // = 55).
  EXPECT_THAT(page, HasSubstr("<rect x=\"571.88\" y=\"55\" "
                              "width=\"46.88\""));
  EXPECT_THAT(page, HasSubstr("micro-batch 0, stage 4 on IPU 0: compute "
                              "1.500 s"));
  // Stage 0's copies follow its compute: 1 s to 1.5 s in step 0.
  EXPECT_THAT(page, HasSubstr("micro-batch 0, stage 0 on IPU 0: copies "
                              "500.000 ms"));
  // Without per-stage seconds (a writer that has none) the page still draws
  // one row per IPU, one stage each.
  in.stage_compute_s.clear();
  in.stage_copy_s.clear();
  EXPECT_THAT(PlanHtml(RevisitingPlan(), in),
              Not(HasSubstr("data-stage=\"4\"")));
}

TEST(PlanHtmlTest, StrategyTimesAndTheHeadlineBound) {
  proto::Plan plan = TwoIpuPlan();
  proto::StrategyResult* c = plan.add_candidates();
  c->set_strategy("raw");
  c->set_seconds(0.0002);  // 0.2 ms: "0.000 s" before
  plan.mutable_performance()->set_certified_bound_s(1.75);
  plan.mutable_performance()->set_bound_method("min-cut");
  HtmlPageInputs in;
  in.device = SmallDevice();
  const std::string page = PlanHtml(plan, in);
  EXPECT_THAT(page, HasSubstr("<td>200.000 us</td>"));
  EXPECT_THAT(page, Not(HasSubstr("<td>0.000 s</td>")));
  // The headline's bound is the best proven one, the cheap one after it.
  EXPECT_THAT(page, HasSubstr("no split is faster than <span data-field="
                              "\"performance.certified_bound_s\""));
  EXPECT_THAT(page, HasSubstr("(certified by min-cut; gap "));
}

TEST(PlanHtmlTest, SmallIpusPutTheCapacityOffTheScale) {
  HtmlPageInputs in;
  in.device = SmallDevice();
  in.device.set_bytes_per_tile(1000000);  // 10 MB per IPU, 5 kB used
  EXPECT_THAT(PlanHtml(TwoIpuPlan(), in), HasSubstr("is off the scale"));
}

TEST(PlanHtmlTest, EmbedsTheGraphOrSaysWhyNot) {
  HtmlPageInputs in;
  in.device = SmallDevice();
  in.graph_svg = "<svg id=\"g\"></svg>";
  EXPECT_THAT(PlanHtml(TwoIpuPlan(), in),
              HasSubstr("<div class=\"graph\"><svg id=\"g\"></svg></div>"));
  in.graph_svg.clear();
  in.graph_note = "install <dot>";
  EXPECT_THAT(PlanHtml(TwoIpuPlan(), in),
              HasSubstr("<p>install &lt;dot&gt;</p>"));
}

TEST(InspectHtmlTest, ShowsOneIpuAndOpTypes) {
  proto::InspectReport r;
  r.set_model("m.onnx");
  r.set_num_nodes(7);
  r.set_min_ipus(2);
  r.mutable_single_ipu_memory()->set_total_bytes(12000);
  r.mutable_single_ipu_memory()->set_weight_bytes(12000);
  r.mutable_single_ipu_memory()->set_max_tile_bytes(1200);
  proto::OpTypeSummary* conv = r.add_op_types();
  conv->set_op_type("Conv");
  conv->set_count(3);
  conv->set_flops(2e9);
  HtmlPageInputs in;
  in.device = SmallDevice();
  const std::string page = InspectHtml(r, in);
  for (const char* id :
       {"memory-chart", "tile-chart", "op-type-chart", "op-type-table"}) {
    EXPECT_THAT(page, HasSubstr(absl::StrCat("id=\"", id, "\""))) << id;
  }
  EXPECT_THAT(page, HasSubstr("data-field=\"op_types.0.flops\" "
                              "data-value=\"2000000000\">2.00 GFLOPs</span>"));
  // 1,200 bytes on a 1,000-byte tile.
  EXPECT_THAT(page, HasSubstr("OVER by 200 B"));
  EXPECT_THAT(page, HasSubstr("data-field=\"min_ipus\" data-value=\"2\""));
  r.set_min_ipus(0);
  r.set_min_ipus_strategy("auto");
  // As the text report: no "up to 64" of its own.
  EXPECT_THAT(InspectHtml(r, in),
              HasSubstr("fewest IPUs: none fits (planned as shard --num-ipus "
                        "auto plans: strategy auto)"));
}

}  // namespace
}  // namespace autoshard
