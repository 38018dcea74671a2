// The compile oracle's candidates through the library's output step
// (sharder/compile_judge.h): planning's names, the plan's placement, the
// output guard.
#include "sharder/compile_judge.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "base/step_counts.h"
#include "graph/annotations.h"
#include "graph/model_io.h"
#include "gtest/gtest.h"
#include "tests/test_problems.h"
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

// Eight candidates written by the library's writer on four threads (the
// TSan build runs this test too). The fake compiler (tests/fake_compiler.cc)
// with FAKE_LIMIT=0 overflows tile 17 by 1,000 bytes per node on IPU 0, so
// each verdict shows which candidate it came from: candidate c puts its
// first c % 4 + 1 nodes on IPU 0, 700,000 + 1,000 x (c % 4 + 1) bytes.
TEST(CompileJudgeTest, FourThreadsWriteEachTheirCandidate) {
  const onnx::ModelProto model = testing::ParseModelText(
      testing::kResidualModelText, /*name_nodes=*/false);
  std::vector<std::vector<int32_t>> candidates;
  for (int c = 0; c < 8; ++c) {
    std::vector<int32_t> ipu(4, 1);
    for (int node = 0; node <= c % 4; ++node) ipu[node] = 0;
    candidates.push_back(ipu);
  }
  CompileOracle oracle(
      "FAKE_LIMIT=0 " FAKE_COMPILER " {model}",
      WriteCandidateOf(model, {"MatMul_0", "Relu_1", "Add_2", "MatMul_3"}), "",
      {}, /*jobs=*/4);
  absl::StatusOr<std::vector<CompileVerdict>> verdicts =
      oracle.Compile(candidates, 0.6);
  ASSERT_TRUE(verdicts.ok()) << verdicts.status();
  ASSERT_EQ(verdicts->size(), 8u);
  for (int c = 0; c < 8; ++c) {
    EXPECT_EQ((*verdicts)[c].tile, 17) << c;
    EXPECT_EQ((*verdicts)[c].bytes, 700000 + 1000 * (c % 4 + 1)) << c;
  }
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

// --compile-cmd with auto: the chosen split, then the runners-up in order;
// the first the compiler accepts is the result, marked chosen.
TEST(CompileJudgeTest, CompileInOrderTakesTheFirstAcceptedSplit) {
  // Chain 0 -> 1 -> 2 of 1 GFLOP each on the toy chip (4 x 1000-byte tiles).
  const ShardingProblem problem =
      testing::MakeTestProblem(3, {{0, 1}, {1, 2}}, {0, 0, 0}, {1e9, 1e9, 1e9});
  StrategyContext c;
  c.problem = &problem;
  c.device = testing::ToyChip();
  c.num_ipus = 2;
  StrategyResult r = Evaluated(c, Assignment{{0, 0, 1}, {0, 0, 1}}, 0.6);
  proto::StrategyResult* optimal = r.summary.add_candidates();
  optimal->set_strategy("optimal");
  optimal->set_chosen(true);
  r.summary.add_candidates()->set_strategy("raw");
  r.runners_up = {{"raw", Assignment{{0, 1, 1}, {0, 1, 1}}, 0.6}};
  std::vector<std::vector<int32_t>> compiled;
  // Refuses {0, 0, 1} (tile 5, 1200 bytes), accepts the rest.
  const SearchOracle oracle =
      [&](const std::vector<std::vector<int32_t>>& splits,
          double amp) -> absl::StatusOr<std::vector<OracleVerdict>> {
    EXPECT_EQ(amp, 0.6);
    std::vector<OracleVerdict> out;
    for (const auto& s : splits) {
      compiled.push_back(s);
      out.push_back({s != std::vector<int32_t>{0, 0, 1}, 5, 1200, ""});
    }
    return out;
  };
  absl::StatusOr<StrategyResult> got = CompileInOrder(c, r, oracle, "auto");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(compiled,
            (std::vector<std::vector<int32_t>>{{0, 0, 1}, {0, 1, 1}}));
  EXPECT_EQ(got->assignment.ipu, (std::vector<int32_t>{0, 1, 1}));
  EXPECT_EQ(got->compiler_fits, true);
  EXPECT_FALSE(got->summary.candidates(0).chosen());
  EXPECT_TRUE(got->summary.candidates(1).chosen());
  ASSERT_EQ(got->warnings.size(), 1u);
  EXPECT_EQ(got->warnings[0],
            "the compile command refused 1 split before accepting raw's: "
            "optimal: out of memory on tile 5 (1200 bytes)");
  // Every split refused: r as it was, compiler_fits false, each named.
  const SearchOracle none =
      [](const std::vector<std::vector<int32_t>>& splits,
         double) -> absl::StatusOr<std::vector<OracleVerdict>> {
    return std::vector<OracleVerdict>(splits.size(),
                                      OracleVerdict{false, -1, 0, "exit 1"});
  };
  got = CompileInOrder(c, r, none, "auto");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->assignment.ipu, (std::vector<int32_t>{0, 0, 1}));
  EXPECT_EQ(got->compiler_fits, false);
  EXPECT_EQ(got->compiler_message,
            "it refused all 2 candidate splits (optimal: exit 1; raw: exit 1)");
}

}  // namespace
}  // namespace autoshard::internal
