// The library's promises to a caller that links it (DESIGN.md §6): plans made
// on several threads at once equal the same plans made one by one, and
// nothing is printed on stdout or stderr, whatever happens.
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "costmodel/device_profile.h"
#include "gmock/gmock.h"
#include "graph/model_io.h"
#include "gtest/gtest.h"
#include "sharder/autoshard.h"
#include "tests/test_graphs.h"
#include "tests/test_util.h"
#include "writers/emit.h"

namespace autoshard {
namespace {

onnx::ModelProto SqueezeNet() {
  auto loaded = LoadModel(std::string(AUTOSHARD_SOURCE_DIR) +
                          "/models/squeezenet1_1.onnx");
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  return loaded.ok() ? loaded->model : onnx::ModelProto();
}

// One library call and what it returned: the plan file's text without its
// timings, or the error; plus the annotated bytes for ShardModelBytes.
struct Job {
  onnx::ModelProto model;
  Options options;
  bool bytes_overload = false;

  std::string Run() const {
    absl::StatusOr<Plan> plan;
    std::string annotated;
    if (bytes_overload) {
      Plan out;
      auto bytes = ShardModelBytes(model.SerializeAsString(), options, &out);
      if (!bytes.ok()) return bytes.status().ToString();
      annotated = *bytes;
      plan = std::move(out);
    } else {
      plan = PlanModel(model, options);
    }
    if (!plan.ok()) return plan.status().ToString();
    plan->proto.mutable_summary()->clear_planning_s();
    plan->proto.mutable_search()->clear_seconds();
    plan->proto.mutable_optimal()->clear_seconds();
    plan->proto.mutable_performance()->clear_bound_seconds();
    for (auto& c : *plan->proto.mutable_candidates()) c.clear_seconds();
    return PlanJson(plan->proto) + annotated;
  }
};

// Eight different calls: SqueezeNet 1.1 (65 nodes) raw onto 2 and 4 IPUs,
// searched on tiles too small for its raw split (the CLI test's 65,753 B),
// with --optimal-perf, through the bytes overload; a residual model with
// unnamed nodes; chains of 40 and 300 If nodes.
std::vector<Job> EightJobs() {
  const onnx::ModelProto squeezenet = SqueezeNet();
  auto small = LoadDeviceProfile("ipu2");
  EXPECT_TRUE(small.ok()) << small.status();
  small->set_bytes_per_tile(65753);
  std::vector<Job> jobs(8);
  for (Job& job : jobs) {
    job.model = squeezenet;
    job.options.num_ipus = 2;
    job.options.shapes.batch_size = 1;
    job.options.max_search_s = 600;  // the candidate limit ends it, not time
    job.options.bound_s = 600;       // and the certified bound's, not time
  }
  jobs[1].options.num_ipus = 4;
  jobs[1].options.precision = Precision::kFp16;
  jobs[2].options.strategy = "search";
  jobs[2].options.device = *small;
  jobs[3] = jobs[2];
  jobs[3].options.optimal_perf = true;
  jobs[4].options.num_ipus = 3;
  jobs[4].bytes_overload = true;
  jobs[5].model = testing::ParseModelText(testing::kResidualModelText,
                                          /*name_nodes=*/false);
  for (int j : {6, 7}) {
    *jobs[j].model.mutable_graph() = testing::MakeIfChain(j == 6 ? 40 : 300);
    jobs[j].model.set_ir_version(8);
    jobs[j].model.add_opset_import()->set_version(13);
  }
  jobs[7].options.num_ipus = 5;
  return jobs;
}

TEST(LibraryTest, EightConcurrentPlansEqualTheirSingleThreadedResults) {
  const std::vector<Job> jobs = EightJobs();
  // Concurrently first, so that the first use of ONNX's schema registry (in
  // shape inference) happens on several threads at once; each thread plans
  // its model 3 times.
  std::vector<std::vector<std::string>> concurrent(jobs.size());
  std::latch start(static_cast<std::ptrdiff_t>(jobs.size()));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < jobs.size(); ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      for (int round = 0; round < 3; ++round) {
        concurrent[i].push_back(jobs[i].Run());
      }
    });
  }
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < jobs.size(); ++i) {
    SCOPED_TRACE("job " + std::to_string(i));
    const std::string alone = jobs[i].Run();
    EXPECT_THAT(alone, ::testing::HasSubstr("\"num_ipus\""));  // a plan
    for (const std::string& result : concurrent[i]) EXPECT_EQ(result, alone);
  }
  // The jobs differ: 8 different plans.
  std::vector<std::string> all;
  for (const auto& c : concurrent) all.push_back(c[0]);
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::unique(all.begin(), all.end()), all.end());
}

TEST(LibraryTest, PrintsNothingOnStdoutOrStderr) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  {
    // Warnings (unnamed nodes, unresolved dims), the search with its
    // progress callback unset, and errors of every layer.
    onnx::ModelProto squeezenet = SqueezeNet();
    Options options;
    options.num_ipus = 2;
    options.strategy = "search";
    auto small = LoadDeviceProfile("ipu2");
    small->set_bytes_per_tile(65753);
    options.device = *small;
    EXPECT_TRUE(PlanModel(squeezenet, options).ok());
    options = Options();
    options.num_ipus = 2;
    onnx::ModelProto residual = testing::ParseModelText(
        testing::kResidualModelText, /*name_nodes=*/false);
    auto plan = PlanModel(residual, options);
    ASSERT_TRUE(plan.ok());
    EXPECT_FALSE(plan->proto.warnings().empty());
    EXPECT_TRUE(ApplyPlan(*plan, &residual).ok());
    EXPECT_FALSE(ApplyPlan(*plan, &squeezenet).ok());  // another model
    EXPECT_FALSE(ShardModelBytes("garbage", options).ok());
    const std::string bytes = squeezenet.SerializeAsString();
    EXPECT_FALSE(ShardModelBytes(bytes.substr(0, bytes.size() / 2), options)
                     .ok());                             // truncated
    options.shapes.input_shapes["input"] = {1, 3, 224};  // rank 4
    EXPECT_FALSE(PlanModel(squeezenet, options).ok());
    options.shapes.input_shapes.clear();
    options.num_ipus = 1000;  // more IPUs than nodes
    EXPECT_FALSE(PlanModel(squeezenet, options).ok());
    options.num_ipus = 2;
    EXPECT_FALSE(
        PlanFromShardingPoints(squeezenet, options, {{"nope", 0, 0}}).ok());
    // Shape inference that fails inside ONNX (a MatMul of mismatched dims).
    onnx::ModelProto bad = testing::ParseModelText(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      g (float[2,3] x, float[4,5] w) => (float[2,5] y) {
        a = MatMul(x, w)
        y = Relu(a)
      })");
    (void)PlanModel(bad, options);
    // A device profile that does not parse (protobuf's text parser would
    // log the error on stderr without a collector).
    testing::TempDir dir;
    const std::string profile = (dir.path() / "bad.textproto").string();
    ASSERT_TRUE(WriteFileAtomically(profile, "tiles_per_ipu: x").ok());
    EXPECT_FALSE(LoadDeviceProfile(profile).ok());
  }
  const std::string out = ::testing::internal::GetCapturedStdout();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "");
  EXPECT_EQ(err, "");
}

}  // namespace
}  // namespace autoshard
