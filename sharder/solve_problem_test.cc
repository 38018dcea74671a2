// `solve` is `shard`'s planner (issue 31): a model's problem file solved
// gives the model's plan, and what auto's steps gave up on is reported.
#include <string>
#include <vector>

#include "costmodel/model_analysis.h"
#include "gmock/gmock.h"
#include "graph/model_io.h"
#include "gtest/gtest.h"
#include "sharder/autoshard.h"
#include "sharder/problem_file.h"
#include "tests/test_problems.h"
#include "tests/test_util.h"
#include "writers/emit.h"

namespace autoshard {
namespace {

const char kSqueezenet[] = AUTOSHARD_SOURCE_DIR "/models/squeezenet1_1.onnx";

// Plans `model` with `options` (keeping its problem), solves that problem
// with the same options, and expects the same split, figures and candidates.
void ExpectSolveGivesShardsPlan(const onnx::ModelProto& model,
                                Options options) {
  options.keep_problem = true;
  auto shard = PlanModel(model, options);
  ASSERT_TRUE(shard.ok()) << shard.status();
  auto loaded = FromProblemProto(shard->problem, "written.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  // What the file says, as shard solved it.
  EXPECT_EQ(loaded->problem.topo_order, shard->analysis->problem.topo_order);
  EXPECT_EQ(loaded->problem.num_activation_inputs,
            shard->analysis->problem.num_activation_inputs);
  EXPECT_EQ(loaded->problem.activation_bytes,
            shard->analysis->problem.activation_bytes);
  EXPECT_EQ(loaded->problem.consumers, shard->analysis->problem.consumers);
  auto solve = SolveProblem(*loaded, options);
  ASSERT_TRUE(solve.ok()) << solve.status();
  EXPECT_EQ(solve->placement.ipu, shard->placement.ipu);
  EXPECT_EQ(solve->proto.strategy(), shard->proto.strategy());
  EXPECT_EQ(solve->proto.num_ipus(), shard->proto.num_ipus());
  EXPECT_EQ(solve->proto.fits(), shard->proto.fits());
  EXPECT_DOUBLE_EQ(solve->proto.performance().bottleneck_s(),
                   shard->proto.performance().bottleneck_s());
  EXPECT_DOUBLE_EQ(solve->proto.performance().lower_bound_s(),
                   shard->proto.performance().lower_bound_s());
  ASSERT_EQ(solve->proto.candidates_size(), shard->proto.candidates_size());
  for (int i = 0; i < solve->proto.candidates_size(); ++i) {
    EXPECT_EQ(solve->proto.candidates(i).strategy(),
              shard->proto.candidates(i).strategy());
    EXPECT_EQ(solve->proto.candidates(i).chosen(),
              shard->proto.candidates(i).chosen());
  }
  EXPECT_THAT(solve->proto.num_ipus_tried(),
              ::testing::ElementsAreArray(shard->proto.num_ipus_tried()));
}

TEST(SolveProblemTest, GivesShardsPlanOfTheBundledModel) {
  auto loaded = LoadModel(kSqueezenet);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  for (const char* strategy : {"auto", "raw", "search", "optimal"}) {
    for (int k : {2, 4}) {
      SCOPED_TRACE(std::string(strategy) + " on " + std::to_string(k));
      Options options;
      options.num_ipus = k;
      options.strategy = strategy;
      options.shapes.batch_size = 1;
      options.bound_s = 0;  // the cheap bound: the splits are compared
      ExpectSolveGivesShardsPlan(loaded->model, options);
    }
  }
}

TEST(SolveProblemTest, AutoIpusTriesTheSameCounts) {
  // An ipu2 whose 1472 tiles hold 2,000 B each (2.9 MB): squeezenet's
  // 4.9 MB of weights need 2 IPUs at least, so --num-ipus auto tries
  // several counts (and skips 1).
  auto loaded = LoadModel(kSqueezenet);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  Options options;
  options.num_ipus = kAutoIpus;
  options.max_ipus = 8;
  options.device = testing::Ipu2WithTiles(2000);
  options.shapes.batch_size = 1;
  options.bound_s = 0;
  ExpectSolveGivesShardsPlan(loaded->model, options);
}

TEST(SolveProblemTest, SaysWhyTheIdealDpGaveUp) {
  // 14 independent nodes (1 s each) read by a 15th: 2^14 = 16,384 ideals of
  // the 14, above the DP's 5,000, so only the coarsened graph's DP runs.
  std::vector<std::pair<int, int>> edges;
  for (int v = 0; v < 14; ++v) edges.emplace_back(v, 14);
  ShardingProblem p = testing::MakeTestProblem(
      15, edges, std::vector<int64_t>(15, 0), std::vector<double>(15, 1e9));
  LoadedProblem loaded;
  loaded.problem = p;
  loaded.device = testing::ToyChip(1000000);
  loaded.num_ipus = 2;
  Options options;
  options.num_ipus = 2;
  options.bound_s = 0;
  auto plan = SolveProblem(loaded, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->proto.gave_up_size(), 1);
  EXPECT_THAT(plan->proto.gave_up(0),
              ::testing::HasSubstr("ideal: the exact DP did not run: more "
                                   "ideals than its limit (5000"));
  EXPECT_THAT(ReportText(plan->proto),
              ::testing::HasSubstr("auto: ideal: the exact DP did not run"));
}

TEST(SolveProblemTest, RefusesACompileCommandAndBadOptions) {
  LoadedProblem loaded;
  loaded.problem = testing::MakeTestProblem(2, {{0, 1}}, {0, 0}, {1e9, 1e9});
  loaded.device = testing::ToyChip();
  Options options;
  options.num_ipus = 2;
  options.compile_cmd = "true {model}";
  EXPECT_THAT(SolveProblem(loaded, options).status().message(),
              ::testing::HasSubstr("a problem file has none"));
  options.compile_cmd.clear();
  options.num_ipus = 3;
  EXPECT_THAT(SolveProblem(loaded, options).status().message(),
              ::testing::HasSubstr("exceeds"));
  options.num_ipus = 2;
  options.strategy = "greedy";
  EXPECT_FALSE(SolveProblem(loaded, options).ok());
}

}  // namespace
}  // namespace autoshard
