#include "pod/no_fit.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sharder/autoshard.h"
#include "sharder/prepare.h"
#include "tests/test_util.h"

namespace autoshard::pod {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// x: float[1,4]; a = MatMul(x, w0); b = Relu(a); c = Add(b, x);
// y = MatMul(c, w1); w0, w1 float[4,4]: 128 bytes of weights.
absl::StatusOr<internal::Prepared> PrepareResidual(int64_t tile_bytes) {
  static const onnx::ModelProto model =
      testing::ParseModelText(testing::kResidualModelText);
  Options options;
  options.device = testing::Ipu2WithTiles(tile_bytes);
  options.device.set_tiles_per_ipu(1);  // an IPU of one tile
  return internal::Prepare(model, options);
}

TEST(NoFitTest, TheWeightsNeedMoreIpus) {
  absl::StatusOr<internal::Prepared> p = PrepareResidual(100);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->analysis->costs.total_weight_bytes, 128);
  const std::vector<int32_t> ipu(p->analysis->problem.num_nodes(), 0);
  // 128 B of weights on IPUs of 100 B: ceil(128 / 100) = 2 IPUs at least.
  const NoFit why = ExplainNoFit(p->analysis->problem, p->analysis->device,
                                 Precision::kFp32, 128, 1, 1, ipu, 0);
  EXPECT_EQ(why.reason,
            "the weights (128 B) need at least 2 IPUs (an IPU holds 100 B); "
            "the plan has 1");
  EXPECT_THAT(why.would_fit,
              ElementsAre(HasSubstr("--num-ipus 2 or more"),
                          "--precision fp16 (float weights halve: at least 1 "
                          "IPU)"));
  // fp16 already: no fp16 advice.
  EXPECT_EQ(ExplainNoFit(p->analysis->problem, p->analysis->device,
                         Precision::kFp16, 128, 1, 1, ipu, 0)
                .would_fit.size(),
            1u);
}

TEST(NoFitTest, ANodeNoIpuHoldsIsTheReasonInThePlan) {
  // node_bound_test: n3 needs 634 bytes, more than an IPU of 630.
  const onnx::ModelProto model =
      testing::ParseModelText(testing::kResidualModelText);
  Options options;
  options.device = testing::Ipu2WithTiles(630);
  options.device.set_tiles_per_ipu(1);
  options.num_ipus = 4;
  absl::StatusOr<Plan> plan = PlanModel(model, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->proto.fits());
  EXPECT_THAT(plan->proto.no_fit_reason(),
              HasSubstr("node 'n3' alone needs at least 634 bytes"));
  EXPECT_THAT(plan->proto.would_fit(),
              ElementsAre("--precision fp16 (halves float tensors)"));
}

TEST(NoFitTest, BytesText) {
  EXPECT_EQ(BytesText(999), "999 B");
  EXPECT_EQ(BytesText(721000), "721.00 kB");
  EXPECT_EQ(BytesText(13.49e9), "13.49 GB");
}

}  // namespace
}  // namespace autoshard::pod
