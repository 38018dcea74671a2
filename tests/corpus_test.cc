// Runs the library over real models: the bundled default model always, and
// every .onnx under $AUTOSHARD_CORPUS_DIR when set (CI sets it to
// ../shared/models). For 2 and 4 IPUs each model must give a valid plan:
// every node annotated, IPU in range, no edge to an earlier stage, the ONNX
// checker passing where it passes on the input, and the sharding config
// reproducing the same assignment through `apply`; and its problem file,
// solved, must give the same plan (issue 31).
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "graph/graph.h"
#include "graph/model_io.h"
#include "gtest/gtest.h"
#include "sharder/autoshard.h"
#include "sharder/problem_file.h"
#include "tests/test_util.h"
#include "writers/emit.h"

namespace autoshard {
namespace {

namespace fs = std::filesystem;

// Whether folders `a` and `b` are on one file system (a hard link between
// them can be made).
bool OnOneFileSystem(const fs::path& a, const fs::path& b) {
  struct stat sa, sb;
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 &&
         sa.st_dev == sb.st_dev;
}

// Written elsewhere (`out`), external data is linked beside the output and
// the output passes the checker where the input did; across file systems
// (TMPDIR on another device) no link can be made, and the output is refused
// with that reason (README, "External data").
void ExpectSavedElsewhere(const onnx::ModelProto& annotated,
                          const LoadedModel& loaded, const fs::path& input,
                          const fs::path& out, bool input_passes_checker) {
  const absl::Status saved =
      SaveModel(annotated, out, input.parent_path(), loaded.external_files);
  if (!loaded.external_files.empty() &&
      !OnOneFileSystem(out.parent_path(), input.parent_path())) {
    EXPECT_THAT(saved.message(),
                ::testing::HasSubstr("write the output on the model's file "
                                     "system"));
    return;
  }
  ASSERT_TRUE(saved.ok()) << saved;
  if (input_passes_checker) {
    EXPECT_TRUE(CheckModelFile(out).ok()) << CheckModelFile(out);
  }
}

std::vector<std::string> CorpusModels() {
  std::vector<std::string> models = {std::string(AUTOSHARD_SOURCE_DIR) +
                                     "/models/squeezenet1_1.onnx"};
  const char* dir = std::getenv("AUTOSHARD_CORPUS_DIR");
  if (dir != nullptr && *dir != '\0' && fs::is_directory(dir)) {
    std::vector<std::string> found;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (e.is_regular_file() && e.path().extension() == ".onnx") {
        found.push_back(e.path().string());
      }
    }
    std::sort(found.begin(), found.end());
    models.insert(models.end(), found.begin(), found.end());
  }
  return models;
}

class CorpusTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusTest, ShardsOntoTwoAndFourIpus) {
  auto loaded = LoadModel(GetParam());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const bool input_passes_checker = CheckModelFile(GetParam()).ok();
  testing::TempDir out_dir;
  for (int k : {2, 4}) {
    SCOPED_TRACE("num_ipus=" + std::to_string(k));
    Options options;
    options.num_ipus = k;
    options.shapes.batch_size = 1;
    options.bound_s = 3;  // the certified bound's solver, briefly
    auto plan = PlanModel(loaded->model, options);
    if (!plan.ok()) {
      // Only a model with fewer nodes than IPUs may refuse, and says so.
      EXPECT_LT(loaded->model.graph().node_size(), k) << plan.status();
      EXPECT_THAT(plan.status().message(),
                  ::testing::HasSubstr("every IPU needs"));
      continue;
    }
    // The performance model's lower bound holds for the plan it made.
    const auto& perf = plan->proto.performance();
    EXPECT_GT(perf.lower_bound_s(), 0);
    EXPECT_GE(perf.bottleneck_s(), perf.lower_bound_s() * (1 - 1e-12));
    // The certified bound (issue 19) holds too, and is no weaker.
    EXPECT_GE(perf.certified_bound_s(), perf.lower_bound_s());
    EXPECT_GE(perf.bottleneck_s(), perf.certified_bound_s() * (1 - 1e-9))
        << perf.bound_method();
    for (const auto& ipu : plan->proto.ipus()) {
      const auto& m = ipu.memory();
      EXPECT_EQ(m.total_bytes(), m.weight_bytes() + m.code_bytes() +
                                     m.exchange_bytes() + m.activation_bytes() +
                                     m.temporary_bytes());
      EXPECT_LE(m.max_tile_bytes(), m.total_bytes());
    }
    onnx::ModelProto annotated = loaded->model;
    ASSERT_TRUE(ApplyPlan(*plan, &annotated).ok());
    auto graph = Graph::Build(annotated.graph());
    ASSERT_TRUE(graph.ok()) << graph.status();
    std::vector<int> seen(k, 0);
    for (int i = 0; i < annotated.graph().node_size(); ++i) {
      int ipu = -1, stage = -1;
      for (const auto& attr : annotated.graph().node(i).attribute()) {
        if (attr.name() == kIpuAttribute) ipu = static_cast<int>(attr.i());
        if (attr.name() == kStageAttribute) stage = static_cast<int>(attr.i());
      }
      ASSERT_TRUE(ipu >= 0 && ipu < k) << annotated.graph().node(i).name();
      // Stage k on IPU k, but a last stage may return to IPU 0 (issue 29).
      if (plan->placement.RevisitsAnIpu()) {
        ASSERT_EQ(plan->proto.stages().stage_ipus(stage), ipu);
      } else {
        ASSERT_EQ(stage, ipu);
      }
      ++seen[ipu];
      for (NodeId c : graph->consumers(i)) {
        ASSERT_LE(stage, plan->placement.pipeline_stage[c])
            << "backward edge from node " << i;
      }
    }
    for (int d = 0; d < k; ++d)
      EXPECT_GT(seen[d], 0) << "IPU " << d << " is empty";
    ExpectSavedElsewhere(annotated, *loaded, GetParam(),
                         out_dir.path() / ("k" + std::to_string(k) + ".onnx"),
                         input_passes_checker);
    auto points =
        ParseShardingConfigYaml(ShardingConfigYaml(plan->proto), "config");
    ASSERT_TRUE(points.ok()) << points.status();
    auto applied = PlanFromShardingPoints(loaded->model, options, *points);
    ASSERT_TRUE(applied.ok()) << applied.status();
    EXPECT_EQ(applied->placement.ipu, plan->placement.ipu);
  }
}

// Options under which two plans of a model can be compared whatever the
// machine's load, at batch 1 on `num_ipus` IPUs: a candidate budget, not a
// time limit, so searches stop at the same split; and no solver, since the
// splits are compared, not the bound (up to --bound-seconds per plan).
Options ComparableOptions(int num_ipus) {
  Options options;
  options.num_ipus = num_ipus;
  options.shapes.batch_size = 1;
  options.max_candidates = 3000;
  options.max_search_s = 600;
  options.bound_s = 0;
  return options;
}

// DESIGN.md §4.4: auto is never worse than raw, search or optimal, on ipu2 and
// on an ipu2 whose tiles hold 80% of the raw split's fullest tile (so raw
// overflows), for 2, 4 and 8 IPUs.
TEST_P(CorpusTest, AutoIsNeverWorseThanRawSearchOrOptimal) {
  auto loaded = LoadModel(GetParam());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  for (int k : {2, 4, 8}) {
    if (loaded->model.graph().node_size() < k) continue;
    Options options = ComparableOptions(k);
    std::map<std::string, Plan> on_ipu2 =
        testing::ExpectAutoNoWorse(loaded->model, options);
    ASSERT_EQ(on_ipu2.size(), 4u);
    options.device =
        testing::Ipu2WithTiles(testing::FullestTile(on_ipu2["raw"]) * 8 / 10);
    SCOPED_TRACE("num_ipus=" + std::to_string(k) + ", tiles at 80%");
    testing::ExpectAutoNoWorse(loaded->model, options);
  }
}

// Issue 31: `shard --write-problem` then `solve` gives shard's plan: the
// problem file carries all the planner reads, and solve runs its planner.
TEST_P(CorpusTest, SolveGivesShardsPlan) {
  auto loaded = LoadModel(GetParam());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  for (int k : {2, 4}) {
    if (loaded->model.graph().node_size() < k) continue;
    SCOPED_TRACE("num_ipus=" + std::to_string(k));
    Options options = ComparableOptions(k);
    options.keep_problem = true;
    auto shard = PlanModel(loaded->model, options);
    ASSERT_TRUE(shard.ok()) << shard.status();
    auto problem = FromProblemProto(shard->problem, "written.json");
    ASSERT_TRUE(problem.ok()) << problem.status();
    auto solve = SolveProblem(*problem, options);
    ASSERT_TRUE(solve.ok()) << solve.status();
    EXPECT_EQ(solve->placement.ipu, shard->placement.ipu);
    EXPECT_EQ(solve->proto.fits(), shard->proto.fits());
    EXPECT_DOUBLE_EQ(solve->proto.performance().bottleneck_s(),
                     shard->proto.performance().bottleneck_s());
  }
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = fs::path(info.param).parent_path().filename().string() +
                     "_" + fs::path(info.param).stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Models, CorpusTest,
                         ::testing::ValuesIn(CorpusModels()), TestName);

}  // namespace
}  // namespace autoshard
