// The compile oracle's candidates through the library's output step
// (sharder/compile_judge.h): planning's names, the plan's placement, the
// output guard.
#include "sharder/compile_judge.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "graph/annotations.h"
#include "graph/model_io.h"
#include "graph/step_counts.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace autoshard::internal {
namespace {
namespace fs = std::filesystem;

// The residual model (4 nodes) with no node names: planning names them.
TEST(CompileJudgeTest, TheCandidateTakesThePlansNamesAndPlacement) {
  const onnx::ModelProto model = testing::ParseModelText(
      testing::kResidualModelText, /*name_nodes=*/false);
  Options options;
  options.num_ipus = 1;
  absl::StatusOr<Plan> plan = PlanModel(model, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const CandidateWriter write = WriteCandidateOf(model, plan->node_names);
  testing::TempDir dir;
  const fs::path path = dir.path() / "candidate.onnx";
  ThreadStepCounts() = StepCounts();
  ASSERT_TRUE(write({0, 0, 1, 1}, path, {}).ok());
  EXPECT_EQ(ThreadStepCounts().node_namings, 0);  // the plan's names
  absl::StatusOr<LoadedModel> written = LoadModel(path);
  ASSERT_TRUE(written.ok()) << written.status();
  const onnx::GraphProto& graph = written->model.graph();
  ASSERT_EQ(graph.node_size(), 4);
  const int expected_ipu[] = {0, 0, 1, 1};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(graph.node(i).name(), plan->node_names[i]);
    EXPECT_FALSE(graph.node(i).name().empty());
    for (const char* attribute : {kIpuAttribute, kStageAttribute}) {
      absl::StatusOr<int> value = PlacementAttr(graph.node(i), i, attribute);
      ASSERT_TRUE(value.ok()) << value.status();
      EXPECT_EQ(*value, expected_ipu[i]) << i << attribute;
    }
  }
  // Only the candidate is left: no temporary name, no backup.
  int files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path()))
    ++files;
  EXPECT_EQ(files, 1);
}

// Compiles one candidate (every node on IPU 0) of the residual model with a
// weight stored in `data_file` of `source_dir`, with `true` as the compiler.
absl::Status CompileWithDataFile(const fs::path& source_dir,
                                 const std::string& data_file) {
  onnx::ModelProto model = testing::ParseModelText(testing::kResidualModelText);
  testing::AddExternalWeight(model.mutable_graph(), "w2", data_file, 0);
  CompileOracle oracle("true",
                       WriteCandidateOf(model, {"n0", "n1", "n2", "n3"}),
                       source_dir, {data_file}, /*jobs=*/1);
  return oracle.Compile({{0, 0, 0, 0}}, 0.6).status();
}

// External data named like the candidate: before, the candidate was renamed
// over its own data link and the compiler read a model whose weights were
// the model itself. The output guard refuses it; the link stays.
TEST(CompileJudgeTest, ACandidateNeverReplacesItsDataLink) {
  testing::TempDir source;
  std::ofstream(source.path() / "candidate.onnx", std::ios::binary)
      << std::string(64, '\0');  // float[4,4]: 64 bytes
  const absl::Status status =
      CompileWithDataFile(source.path(), "candidate.onnx");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "is an input")) << status;
  EXPECT_EQ(fs::file_size(source.path() / "candidate.onnx"), 64u);
}

// A data file gone since the model was loaded: an error naming it, as
// SaveModel gave before, not a candidate whose weights are missing.
TEST(CompileJudgeTest, AMissingDataFileIsAnError) {
  testing::TempDir source;
  const absl::Status status = CompileWithDataFile(source.path(), "gone.bin");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(),
                                "external data 'gone.bin' is missing"))
      << status;
}

}  // namespace
}  // namespace autoshard::internal
