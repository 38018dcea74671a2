#include "sharder/calibrate.h"

#include <cstdlib>
#include <fstream>

#include "base/step_counts.h"
#include "costmodel/device_profile.h"
#include "google/protobuf/text_format.h"
#include "graph/model_io.h"
#include "gtest/gtest.h"
#include "tests/test_graphs.h"
#include "tests/test_util.h"

namespace autoshard {
namespace {

// A chip whose hidden memory constants differ from ipu2's: every class's
// code and codelet bytes x 2 and 60,000 fixed bytes per tile (ipu2: 2,074).
proto::DeviceProfile HiddenChip() {
  auto p = LoadDeviceProfile("ipu2");
  EXPECT_TRUE(p.ok()) << p.status();
  for (auto& c : *p->mutable_op_classes()) {
    c.set_code_bytes_per_tile(2 * c.code_bytes_per_tile());
    c.set_codelet_bytes_per_tile(2 * c.codelet_bytes_per_tile());
  }
  p->set_tile_fixed_bytes(60000);
  p->set_name("hidden");
  return *p;
}

std::string WriteProfile(const proto::DeviceProfile& p,
                         const std::filesystem::path& path) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(p, &text);
  std::ofstream(path) << text;
  return path.string();
}

// The fake compiler's verdict on `plan` applied to `model`: its exit code.
int CompileOnFakeChip(const onnx::ModelProto& model, const Plan& plan,
                      const std::filesystem::path& dir,
                      const std::string& chip) {
  onnx::ModelProto annotated = model;
  EXPECT_TRUE(ApplyPlan(plan, &annotated).ok());
  const std::filesystem::path path = dir / "annotated.onnx";
  std::ofstream out(path, std::ios::binary);
  annotated.SerializeToOstream(&out);
  out.close();
  const std::string cmd = "FAKE_DEVICE='" + chip + "' " FAKE_COMPILER " '" +
                          path.string() + "' > /dev/null";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// 16 blocks of d = 1024: 16 x 12 x 1024^2 x 4 B = 805 MB of weights, about
// 547 kB of each 624 kB tile of an ipu2. With ipu2's constants it fits one
// IPU; on the hidden chip (+58 kB fixed, twice the code) it does not.
TEST(CalibrateTest, RecoversTheHiddenChipsMemoryConstants) {
  testing::TempDir dir;
  const std::string chip = WriteProfile(HiddenChip(), dir.path() / "chip.txt");
  const onnx::ModelProto model = testing::MakeTransformerLike(16, 1024, 4);
  Options options;
  options.compile_cmd =
      "FAKE_DEVICE='" + chip + "' " + std::string(FAKE_COMPILER) + " {model}";
  options.model_dir = dir.path();
  auto result =
      CalibrateMemory({{"t.onnx", model, dir.path(), {}}}, options, {2, 4});
  ASSERT_TRUE(result.ok()) << result.status();
  // 1 + 2 + 4 figures from 3 compiles: the 1-IPU split overflows (one
  // figure), the others fit and print every IPU's fullest tile.
  EXPECT_EQ(result->compiles, 3);
  EXPECT_EQ(result->observations.size(), 7u);
  EXPECT_NEAR(result->code_scale, 2.0, 0.2);  // within 10%
  EXPECT_NEAR(static_cast<double>(result->tile_fixed_bytes), 60000, 6000);
  EXPECT_LT(result->max_relative_error, 0.02);
  EXPECT_GT(result->profile.calibration().memory_error_band(), 0);

  // The default profile's plan (one IPU) does not fit the chip; the
  // calibrated profile's does.
  Options plan_options;
  plan_options.num_ipus = kAutoIpus;
  plan_options.strategy = "raw";
  auto before = PlanModel(model, plan_options);
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(before->proto.num_ipus(), 1);
  EXPECT_EQ(CompileOnFakeChip(model, *before, dir.path(), chip), 1);
  plan_options.device = result->profile;
  auto after = PlanModel(model, plan_options);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_GT(after->proto.num_ipus(), 1);
  EXPECT_EQ(CompileOnFakeChip(model, *after, dir.path(), chip), 0);
}

TEST(CalibrateTest, NothingToFitIsAnError) {
  testing::TempDir dir;
  Options options;
  options.compile_cmd = "true {model}";  // fits, prints no figure
  auto result = CalibrateMemory(
      {{"t.onnx", testing::MakeTransformerLike(1, 8, 2), dir.path(), {}}},
      options, {});
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
}

// calibrate prepares each model once and plans its raw splits from that
// (PlanPrepared) and writes the candidates under its names: one naming for
// one model (before: 3 here, Prepare's, the 2-IPU PlanModel's and the
// compiler's copy).
TEST(CalibrateTest, NamesEachModelOnce) {
  const onnx::ModelProto model = testing::ParseModelText(
      testing::kResidualModelText, /*name_nodes=*/false);
  Options options;
  options.compile_cmd = "echo 'fullest tile 0: 50000 bytes'";
  ThreadStepCounts() = StepCounts();
  auto result = CalibrateMemory({{"r.onnx", model, "", {}}}, options, {2});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->compiles, 2);  // all on IPU 0, and the raw 2-IPU split
  EXPECT_EQ(ThreadStepCounts().node_namings, 1);
}

}  // namespace
}  // namespace autoshard
