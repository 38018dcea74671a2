// `solve` is `shard`'s planner (issue 31): a model's problem file solved
// gives the model's plan, and what auto's steps gave up on is reported.
#include <string>
#include <vector>

#include "costmodel/model_analysis.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
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

// A problem file with a host device and a colocate group (issue 31):
// load -> a -> b -> c -> d taking 4, 3, 1, 1, 3 ms on an IPU, load 2 ms on
// the host (the others cannot run there), {b, c} on one device, each copy
// 0.1 ms. The IPUs alone: {load, a} | {b, c, d}, 7 + 0.1 = 7.1 ms (|
// 5 + 0.1). With the host: load there (2 ms, no copies), {a} on one IPU
// (3 + 0.1 in + 0.1 out = 3.2 ms), {b, c, d} on the other (5 + 0.1 =
// 5.1 ms): 5.1 ms, and no split is faster (the DP's bound).
TEST(SolveProblemTest, PutsANodeOnTheHostDevice) {
  proto::Problem in;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        num_ipus: 2
        num_host_devices: 1
        copy_model: COPY_MODEL_HOST
        capacity_bytes: 1000000
        nodes { name: "load" compute_s: 0.004 host_compute_s: 0.002 }
        nodes { name: "a" compute_s: 0.003 }
        nodes { name: "b" compute_s: 0.001 }
        nodes { name: "c" compute_s: 0.001 }
        nodes { name: "d" compute_s: 0.003 }
        tensors { producer: 0 consumers: 1 copy_s: 0.0001 }
        tensors { producer: 1 consumers: 2 copy_s: 0.0001 }
        tensors { producer: 2 consumers: 3 copy_s: 0.0001 }
        tensors { producer: 3 consumers: 4 copy_s: 0.0001 }
        colocate { name: "bc" nodes: 2 nodes: 3 }
      )pb",
      &in));
  *in.mutable_device_profile() = testing::ToyChip(1000000);
  in.mutable_device_profile()->set_transfer_fixed_s(0);
  auto loaded = FromProblemProto(in, "host.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  Options options;
  options.num_ipus = 2;
  auto plan = SolveProblem(*loaded, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const proto::Plan& out = plan->proto;
  EXPECT_NEAR(out.performance().bottleneck_s(), 0.0051, 1e-9);
  EXPECT_NEAR(out.performance().certified_bound_s(), 0.0051, 1e-9);
  EXPECT_EQ(out.num_host_devices(), 1);
  ASSERT_EQ(out.ipus_size(), 3);
  EXPECT_TRUE(out.ipus(0).host());
  EXPECT_NEAR(out.ipus(0).stage_time_s(), 0.002, 1e-9);
  EXPECT_NEAR(out.ipus(1).stage_time_s(), 0.0032, 1e-9);
  EXPECT_EQ(plan->placement.ipu, (std::vector<int32_t>{0, 1, 2, 2, 2}));
  // Note [Host stages in a plan]: IPU numbers name IPUs (2 of them), the
  // host's node says so; pipeline stages are chain positions.
  EXPECT_EQ(out.num_ipus(), 2);
  ASSERT_EQ(out.nodes_size(), 5);
  EXPECT_EQ(out.nodes(0).ipu(), -1);
  EXPECT_TRUE(out.nodes(0).on_host());
  EXPECT_EQ(out.nodes(0).host_device(), 0);
  EXPECT_EQ(out.nodes(0).pipeline_stage(), 0);
  EXPECT_EQ(out.nodes(1).ipu(), 0);
  EXPECT_EQ(out.nodes(1).pipeline_stage(), 1);
  EXPECT_FALSE(out.nodes(1).on_host());
  for (int v = 2; v < 5; ++v) {
    EXPECT_EQ(out.nodes(v).ipu(), 1) << v;
    EXPECT_EQ(out.nodes(v).pipeline_stage(), 2) << v;
  }
  EXPECT_EQ(out.ipus(0).ipu(), -1);
  EXPECT_EQ(out.ipus(0).host_device(), 0);
  EXPECT_EQ(out.ipus(1).ipu(), 0);
  EXPECT_EQ(out.ipus(2).ipu(), 1);
  // The host sends load's output to IPU 0: its row says what it sends.
  EXPECT_GT(out.ipus(0).cut_tensor_out_bytes(), 0);
  EXPECT_EQ(out.ipus(0).cut_tensor_out_bytes(),
            out.ipus(1).cut_tensor_in_bytes());
  // Two cut tensors: load's (host to IPU 0) and a's (IPU 0 to IPU 1).
  ASSERT_EQ(out.cut_tensors_size(), 2);
  int from_host = 0;
  for (const proto::CutTensor& t : out.cut_tensors()) {
    if (t.producer() == "load") {
      ++from_host;
      EXPECT_TRUE(t.from_host());
      EXPECT_EQ(t.from_ipu(), -1);
      EXPECT_THAT(t.reader_ipus(), ::testing::ElementsAre(0));
    } else {
      EXPECT_FALSE(t.from_host() || t.to_host());
      EXPECT_EQ(t.from_ipu(), 0);
      EXPECT_THAT(t.reader_ipus(), ::testing::ElementsAre(1));
    }
  }
  EXPECT_EQ(from_host, 1);
  const std::string report = ReportText(out);
  EXPECT_THAT(report,
              ::testing::HasSubstr("host: stage 0 runs on host: 1 nodes"));
  EXPECT_THAT(report, ::testing::HasSubstr("IPUs: 2 + 1 host "));
  EXPECT_THAT(report, ::testing::HasSubstr("; 1 of them ("));
  EXPECT_THAT(report, ::testing::HasSubstr(") to or from the host)"));
  EXPECT_THAT(report, ::testing::HasSubstr("\nhost "));
  EXPECT_THAT(report, ::testing::Not(::testing::HasSubstr("\n2 ")))
      << "the rows are IPUs 0 and 1 and the host";
  // Without the host device: the IPUs alone, 7.1 ms.
  in.set_num_host_devices(0);
  loaded = FromProblemProto(in, "host.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  plan = SolveProblem(*loaded, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_NEAR(plan->proto.performance().bottleneck_s(), 0.0071, 1e-9);
}

// A review's counterexample: a -> b -> c taking 1, 2, 1 ms on an IPU, 100
// ms on the host, no copy time, 2 IPUs and a host. Over chains the best is
// 3 ms ({a, b} | {c}), but with variable weights auto may return to IPU 0:
// {a, c} on IPU 0 and {b} on IPU 1 take 2 ms. So the certified bound is the
// host work bound: max(largest node 2 ms, 4 ms of IPU work / 2) = 2 ms, not
// the chain bound's 3 ms.
TEST(SolveProblemTest, HostBoundHoldsForPlansThatReturnToIpuZero) {
  proto::Problem in;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        num_ipus: 2
        num_host_devices: 1
        copy_model: COPY_MODEL_HOST
        capacity_bytes: 1000000
        nodes { name: "a" compute_s: 0.001 host_compute_s: 0.1 }
        nodes { name: "b" compute_s: 0.002 host_compute_s: 0.1 }
        nodes { name: "c" compute_s: 0.001 host_compute_s: 0.1 }
        tensors { producer: 0 consumers: 1 copy_s: 0 }
        tensors { producer: 1 consumers: 2 copy_s: 0 }
      )pb",
      &in));
  *in.mutable_device_profile() = testing::ToyChip(1000000);
  in.mutable_device_profile()->set_transfer_fixed_s(0);
  auto loaded = FromProblemProto(in, "revisit.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  Options options;
  options.num_ipus = 2;
  options.weights = "variable";
  auto plan = SolveProblem(*loaded, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const proto::Performance& perf = plan->proto.performance();
  // No weight is shared here, so the plan itself is a chain's (3 ms); the
  // bound still holds for the plans auto may return to IPU 0 elsewhere.
  EXPECT_NEAR(perf.bottleneck_s(), 0.003, 1e-9);
  EXPECT_NEAR(perf.certified_bound_s(), 0.002, 1e-9);
  EXPECT_THAT(perf.bound_method(), ::testing::HasSubstr("host work bound"));
  // Constant weights: no plan returns to IPU 0, and the chains' 3 ms holds.
  options.weights = "constant";
  plan = SolveProblem(*loaded, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_NEAR(plan->proto.performance().bottleneck_s(), 0.003, 1e-9);
  EXPECT_NEAR(plan->proto.performance().certified_bound_s(), 0.003, 1e-9);
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
