#include "pod/weights_report.h"

#include "gtest/gtest.h"
#include "proto/plan.pb.h"

namespace autoshard::pod {
namespace {

// A plan that compared on-chip weights (chosen) with remote ones.
proto::Plan Compared(bool fits, double throughput_per_s) {
  proto::Plan plan;
  plan.set_fits(fits);
  proto::WeightLocations* w = plan.mutable_weight_locations();
  w->set_asked("auto");
  w->set_chosen("on-chip");
  w->set_throughput_per_s(throughput_per_s);
  w->set_other("remote");
  w->set_other_fits(false);
  return plan;
}

// The comparison line: the chosen side's throughput, or "does not fit" for
// a split that does not fit (whose throughput is 0), as for the other side.
TEST(WeightsReportTest, ASplitThatDoesNotFitHasNoThroughput) {
  EXPECT_EQ(WeightLocationsText(Compared(true, 12.5)),
            "weights: on-chip (--weights-location auto)\n"
            "weights on-chip: 12.5 samples/s; remote: does not fit\n");
  EXPECT_EQ(WeightLocationsText(Compared(false, 0)),
            "weights: on-chip (--weights-location auto)\n"
            "weights on-chip: does not fit; remote: does not fit\n");
}

}  // namespace
}  // namespace autoshard::pod
