#include "costmodel/node_bound.h"

#include "costmodel/device_profile.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sharder/prepare.h"
#include "tests/test_util.h"

namespace autoshard {
namespace {

using ::testing::HasSubstr;

TEST(NodeBoundTest, ANodeNoIpuHolds) {
  // x: float[1,4]; a = MatMul(x, w0); b = Relu(a); c = Add(b, x);
  // y = MatMul(c, w1); w0, w1 float[4,4] (64 bytes each).
  const onnx::ModelProto model =
      testing::ParseModelText(testing::kResidualModelText);
  Options options;
  options.device = testing::Ipu2WithTiles(630);
  options.device.set_tiles_per_ipu(1);  // an IPU of 630 bytes
  absl::StatusOr<internal::Prepared> p = internal::Prepare(model, options);
  ASSERT_TRUE(p.ok()) << p.status();
  DeviceModel device(p->analysis->problem, p->analysis->device,
                     Precision::kFp32);
  // n3 = MatMul(c, w1): w1 64 + matmul code 538 (one tile; the calibrated
  // ipu2 profile, costmodel/builtin_profiles.cc) + c 16 + y 16.
  const int32_t n3 = p->analysis->dag.FindNode("n3");
  EXPECT_EQ(NodeBoundBytes(p->analysis->problem, device, n3),
            64 + 538 + 16 + 16);
  // n0 = MatMul(x, w0): x is a graph input, not counted: 64 + 538 + 16.
  EXPECT_EQ(NodeBoundBytes(p->analysis->problem, device,
                           p->analysis->dag.FindNode("n0")),
            618);
  // 634 > 630: n3 fits nowhere; n0 (618) would.
  std::optional<OverflowingNode> worst =
      NodeThatNoIpuHolds(p->analysis->problem, device);
  ASSERT_TRUE(worst.has_value());
  EXPECT_EQ(worst->node, n3);
  EXPECT_THAT(worst->message, HasSubstr("node 'n3' alone needs at least 634 "
                                        "bytes"));
  // With 640-byte IPUs every node fits alone.
  options.device.set_bytes_per_tile(640);
  p = internal::Prepare(model, options);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(
      NodeThatNoIpuHolds(p->analysis->problem,
                         DeviceModel(p->analysis->problem, p->analysis->device,
                                     Precision::kFp32))
          .has_value());
}

TEST(NodeBoundTest, PlanModelSaysSoAndSkipsTheSearch) {
  const onnx::ModelProto model =
      testing::ParseModelText(testing::kResidualModelText);
  Options options;
  options.device = testing::Ipu2WithTiles(630);
  options.device.set_tiles_per_ipu(1);
  options.num_ipus = kAutoIpus;
  options.max_ipus = 4;
  absl::StatusOr<Plan> plan = PlanModel(model, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // Every count but the last skipped: 1 and 2; 4 planned.
  EXPECT_THAT(plan->proto.num_ipus_skipped(), ::testing::ElementsAre(1, 2));
  EXPECT_THAT(plan->proto.num_ipus_tried(), ::testing::ElementsAre(4));
  EXPECT_FALSE(plan->proto.fits());
  EXPECT_THAT(plan->proto.search().stop_reason(),
              HasSubstr("node 'n3' alone needs at least 634 bytes"));
  EXPECT_THAT(plan->proto.warnings(),
              ::testing::Contains(HasSubstr("no split onto any number")));
}

}  // namespace
}  // namespace autoshard
