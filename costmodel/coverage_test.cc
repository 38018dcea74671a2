// CoverageNotes (costmodel/calibration.h): what a plan's conditions are that
// the calibration's facts did not check.
#include <string>
#include <vector>

#include "costmodel/calibration.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace autoshard {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

proto::DeviceProfile Covered() {
  proto::DeviceProfile p;
  p.set_name("chip");
  proto::Calibration* c = p.mutable_calibration();
  c->set_status("fitted to some facts");
  c->set_min_batch(1);
  c->set_max_batch(356);
  c->add_precisions("fp16");
  c->add_op_classes("matmul");
  c->add_op_classes("elementwise");
  c->set_max_ipus(1);
  return p;
}

TEST(CoverageNotesTest, InsideSaysNothing) {
  PlanConditions plan;
  plan.batch = 356;
  plan.precision = "fp16";
  plan.class_time_share = {{"matmul", 0.9}, {"elementwise", 0.1}};
  EXPECT_THAT(CoverageNotes(Covered(), plan), IsEmpty());
}

TEST(CoverageNotesTest, EachConditionOutsideIsNamed) {
  PlanConditions plan;
  plan.batch = 512;
  plan.precision = "fp32";
  plan.num_ipus = 4;
  // control_flow at 12% is named; "other" at 0.5% is under 1%: not named.
  plan.class_time_share = {
      {"matmul", 0.875}, {"control_flow", 0.12}, {"other", 0.005}};
  EXPECT_THAT(
      CoverageNotes(Covered(), plan),
      ElementsAre("batch 512 (the facts: 1 to 356)", "fp32 (the facts: fp16)",
                  "4 IPUs (the facts ran on 1: inter-IPU copies unchecked)",
                  "op class control_flow (12% of the time; no fact has it)"));
}

TEST(CoverageNotesTest, AProfileWithoutCoverageSaysNothing) {
  proto::DeviceProfile p;
  p.mutable_calibration()->set_status("fitted by autoshard calibrate");
  PlanConditions plan;
  plan.batch = 100000;
  plan.precision = "fp32";
  plan.num_ipus = 64;
  plan.class_time_share = {{"other", 1.0}};
  EXPECT_THAT(CoverageNotes(p, plan), IsEmpty());
}

}  // namespace
}  // namespace autoshard
