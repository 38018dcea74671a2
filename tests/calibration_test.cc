// The calibration test (docs/calibration.md §4): every published fact of
// costmodel/calibration/facts.textproto rebuilt in memory and predicted with
// the built-in profile it is about, within the bands the doc states. A change
// of constants or of the models that breaks a band fails here.
#include <cmath>
#include <string>

#include "costmodel/device_profile.h"
#include "gtest/gtest.h"
#include "sharder/prepare.h"
#include "tests/calibration_cases.h"
#include "tests/calibration_models.h"

namespace autoshard::testing {
namespace {

// The bands docs/calibration.md states.
constexpr double kThroughputBand = 0.15;

proto::CalibrationFacts Facts() {
  auto facts = LoadCalibrationFacts(AUTOSHARD_SOURCE_DIR
                                    "/costmodel/calibration/facts.textproto");
  EXPECT_TRUE(facts.ok()) << facts.status();
  return facts.ok() ? *facts : proto::CalibrationFacts();
}

// MACs of a calibration model at fp32 (they do not depend on precision).
double Macs(const std::string& name, int64_t batch, int64_t seq) {
  auto model = BuildCalibrationModel(name, batch, seq);
  EXPECT_TRUE(model.ok()) << model.status();
  if (!model.ok()) return 0;
  auto prepared = internal::Prepare(*model, Options());
  EXPECT_TRUE(prepared.ok()) << prepared.status();
  if (!prepared.ok()) return 0;
  EXPECT_EQ(prepared->analysis->costs.nodes_with_unknown_shapes, 0) << name;
  double macs = 0;
  for (const auto& n : prepared->analysis->costs.nodes) macs += n.macs;
  return macs;
}

// The models are the published architectures: their MACs per sample are the
// published counts.
TEST(CalibrationModels, MacsArePublishedCounts) {
  // torchvision's ResNet-50: 4.089 GMACs ("GFLOPS" 4.09 in its docs).
  EXPECT_NEAR(Macs("resnet50", 1, 1) / 1e9, 4.089, 0.001);
  // ViT-B/16: torchvision 17.56; Swin-T: 4.49 (MACs, its docs' "GFLOPS").
  EXPECT_NEAR(Macs("vit_b16", 1, 1) / 1e9, 17.56, 0.01);
  EXPECT_NEAR(Macs("swin_tiny", 1, 1) / 1e9, 4.49, 0.01);
  // BERT-Base SL128: 12 x (4 x 128 x 768^2 + 2 x 128^2 x 768 + 2 x 128 x 768
  // x 3072) = 12 x 931,135,488, + the pooler's 768^2 = 11,174,215,680.
  EXPECT_DOUBLE_EQ(Macs("bert_base", 1, 128), 11174215680.0);
  // RoFormerV2 small: 6 x (4 x 128 x 384^2 + 2 x 128^2 x 384 + 2 x 128 x 384
  // x 1536) = 6 x 239,075,328, + the head's 384^2 + 384 x 2 = 1,434,600,192.
  EXPECT_DOUBLE_EQ(Macs("roformer_v2_small", 1, 128), 1434600192.0);
  // Dense: 16 x 4096 x 1024.
  EXPECT_DOUBLE_EQ(Macs("dense_4096_1024", 16, 1), 16.0 * 4096 * 1024);
}

TEST(Calibration, BuiltinsStateTheirCalibration) {
  for (const char* name : {"ipu2", "ipu21", "c600"}) {
    auto p = LoadDeviceProfile(name);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_NE(p->calibration().status(), "") << name;
    EXPECT_DOUBLE_EQ(p->calibration().throughput_error_band(), kThroughputBand)
        << name;
    EXPECT_GT(p->calibration().memory_error_band(), 0) << name;
  }
}

class CalibrationFactTest
    : public ::testing::TestWithParam<proto::CalibrationFact> {};

TEST_P(CalibrationFactTest, PredictedWithinBand) {
  const proto::CalibrationFact& fact = GetParam();
  auto profile = LoadDeviceProfile(fact.device());
  ASSERT_TRUE(profile.ok()) << profile.status();
  auto plan = PlanFact(fact, *profile);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const double predicted = PredictedFigure(fact, *plan);
  const proto::IpuMemory& m = plan->proto.ipus(0).memory();
  if (fact.kind() == "throughput" || fact.kind() == "latency") {
    EXPECT_NEAR(predicted / fact.figure(), 1.0, kThroughputBand)
        << fact.id() << ": predicted " << predicted << ", published "
        << fact.figure();
  } else if (fact.kind() == "fits") {
    EXPECT_TRUE(plan->proto.fits())
        << fact.id() << ": fullest tile " << m.max_tile_bytes();
  } else {
    // The Dense layer's report: the fitted code and per-tile bytes reproduce
    // what the report lists besides parameters and temporaries (within 2%:
    // integer division of the fit), the weights its parameters (within 5%:
    // the report counts more than W and b).
    const double listed_other = static_cast<double>(
        MemoryFigure(fact, "total") - MemoryFigure(fact, "parameters") -
        MemoryFigure(fact, "peak_temporaries"));
    const double predicted_other =
        static_cast<double>(m.code_bytes() + m.activation_bytes());
    EXPECT_NEAR(predicted_other / listed_other, 1.0, 0.02) << fact.id();
    EXPECT_NEAR(static_cast<double>(m.weight_bytes()) /
                    static_cast<double>(MemoryFigure(fact, "parameters")),
                1.0, 0.05)
        << fact.id();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Facts, CalibrationFactTest, ::testing::ValuesIn(Facts().facts()),
    [](const ::testing::TestParamInfo<proto::CalibrationFact>& info) {
      return info.param.id();
    });

}  // namespace
}  // namespace autoshard::testing
