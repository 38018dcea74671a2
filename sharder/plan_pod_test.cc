#include "sharder/plan_pod.h"

#include <string>
#include <vector>

#include "costmodel/device_profile.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace autoshard::pod {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// kResidualModelText with a symbolic batch N: x: float[N,4], 4 nodes,
// weights w0, w1 float[4,4] (128 bytes).
onnx::ModelProto BatchedResidual() {
  std::string text = testing::kResidualModelText;
  const std::string fixed = "(float[1,4] x) => (float[1,4] y)";
  text.replace(text.find(fixed), fixed.size(),
               "(float[N,4] x) => (float[N,4] y)");
  return testing::ParseModelText(text);
}

Options Defaults(int num_ipus) {
  Options options;
  options.num_ipus = num_ipus;
  options.max_search_s = 5;
  return options;
}

TEST(PodPlannerTest, FixedIpusPerReplica) {
  const onnx::ModelProto model = BatchedResidual();
  PodOptions pod;
  pod.total_ipus = 8;
  Options options = Defaults(2);
  options.shapes.batch_size = 4;
  absl::StatusOr<Plan> plan = PlanPod(model, options, pod);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const proto::Replication& r = plan->proto.replication();
  // 8 IPUs / 2 per replica = 4 replicas.
  EXPECT_EQ(r.total_ipus(), 8);
  EXPECT_EQ(r.ipus_per_replica(), 2);
  EXPECT_EQ(r.replicas(), 4);
  const double replica = plan->proto.performance().throughput_per_s();
  EXPECT_GT(replica, 0);
  EXPECT_DOUBLE_EQ(r.replica_throughput_per_s(), replica);
  EXPECT_DOUBLE_EQ(r.pod_throughput_per_s(), 4 * replica);
  ASSERT_EQ(r.tried_size(), 1);
  EXPECT_TRUE(r.tried(0).chosen());
  EXPECT_EQ(r.tried(0).batch_size(), 4);
  EXPECT_THAT(PodReportText(plan->proto),
              HasSubstr("POD: 8 IPUs = 4 replicas x 2 IPUs per replica, "
                        "micro-batch 4"));
}

TEST(PodPlannerTest, RefusesTotalsThatAreNotAMultiple) {
  const onnx::ModelProto model = BatchedResidual();
  PodOptions pod;
  pod.total_ipus = 6;
  // 6 % 4 != 0.
  EXPECT_THAT(PlanPod(model, Defaults(4), pod).status().message(),
              HasSubstr("--total-ipus 6 is not a multiple of --num-ipus 4"));
  pod.total_ipus = 0;
  EXPECT_THAT(PlanPod(model, Defaults(4), pod).status().message(),
              HasSubstr("--total-ipus must be from 1 to 1024, got 0"));
  pod.total_ipus = 8;
  Options options = Defaults(kAutoIpus);
  options.max_ipus = 2048;
  EXPECT_FALSE(PlanPod(model, options, pod).ok());
}

TEST(PodPlannerTest, RefusesAGroupingThatDoesNotDivideTheReplicas) {
  const onnx::ModelProto model = BatchedResidual();
  PodOptions pod;
  pod.total_ipus = 4;
  pod.grouping = ReplicaGrouping{1, 3};  // 4 replicas of 1 IPU: 4 % 3 != 0
  EXPECT_THAT(PlanPod(model, Defaults(1), pod).status().message(),
              HasSubstr("the group size 3 does not divide the 4 replicas"));
  pod.grouping = ReplicaGrouping{2, 2};  // 2 x 2 divides 4: r % 2
  pod.sharded = true;
  absl::StatusOr<Plan> plan = PlanPod(model, Defaults(1), pod);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(PodReportText(plan->proto),
              HasSubstr("groups: {0,2} {1,3}\nvariables sharded over 2"));
}

TEST(PodPlannerTest, AutoTriesEveryCombinationAndKeepsTheFastestPod) {
  const onnx::ModelProto model = BatchedResidual();
  PodOptions pod;
  pod.total_ipus = 4;
  pod.batch_sizes = {1, 2};
  absl::StatusOr<Plan> plan = PlanPod(model, Defaults(kAutoIpus), pod);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const proto::Replication& r = plan->proto.replication();
  // Batch 1 then 2, each with 1, 2 and 4 IPUs per replica (4 nodes).
  ASSERT_EQ(r.tried_size(), 6);
  // The default profile's fixed time per step (ipu2: 41,672 cycles at 1.32
  // GHz, about 31.5 us) is in every throughput, besides the bottleneck.
  const absl::StatusOr<proto::DeviceProfile> ipu2 = LoadDeviceProfile("ipu2");
  ASSERT_TRUE(ipu2.ok());
  const double step_s = ipu2->step_fixed_s();
  // The profile's text keeps 4 digits: 3.154e-05 s.
  EXPECT_NEAR(step_s, 41672 / (1.85e9 * 250 / 350), 1e-8);
  int chosen = -1;
  for (int i = 0; i < r.tried_size(); ++i) {
    const proto::PodCandidate& c = r.tried(i);
    EXPECT_EQ(c.batch_size(), i < 3 ? 1 : 2);
    EXPECT_EQ(c.ipus_per_replica(), 1 << (i % 3));
    EXPECT_EQ(c.replicas(), 4 / c.ipus_per_replica());
    ASSERT_TRUE(c.fits());  // 128 bytes of weights fit anywhere
    // Replicas x batch / (bottleneck + the step's fixed time).
    EXPECT_NEAR(c.pod_throughput_per_s(),
                c.replicas() * c.batch_size() / (c.bottleneck_s() + step_s),
                1e-9 * c.pod_throughput_per_s());
    if (c.chosen()) chosen = i;
  }
  ASSERT_GE(chosen, 0);
  for (int i = 0; i < r.tried_size(); ++i) {
    // Nothing beats the choice; what ties it comes later (more IPUs or a
    // larger batch).
    EXPECT_LE(r.tried(i).pod_throughput_per_s(),
              r.tried(chosen).pod_throughput_per_s());
    if (i < chosen) {
      EXPECT_LT(r.tried(i).pod_throughput_per_s(),
                r.tried(chosen).pod_throughput_per_s());
    }
  }
  EXPECT_EQ(plan->proto.num_ipus(), r.tried(chosen).ipus_per_replica());
  EXPECT_EQ(plan->proto.batch_size(), r.tried(chosen).batch_size());
}

TEST(PodPlannerTest, StopsAtAFixedBatch) {
  // x: a scalar, no dim for --batch-size to set: it changes nothing. (A
  // static batch of 1, as in float[1,4], is replaced by --batch-size now.)
  const onnx::ModelProto model = testing::ParseModelText(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float x) => (float y) <float w = {2.0}> {
      a = Mul(x, w)
      y = Relu(a)
    })");
  PodOptions pod;
  pod.total_ipus = 2;
  pod.batch_sizes = {1, 2, 4};
  absl::StatusOr<Plan> plan = PlanPod(model, Defaults(1), pod);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const proto::Replication& r = plan->proto.replication();
  // Batch 1, then 2 is found to be 1 again: no batch 4 (1 IPU per replica
  // only: --num-ipus 1).
  ASSERT_EQ(r.tried_size(), 2);
  EXPECT_EQ(r.tried(1).batch_size(), 1);
  EXPECT_EQ(r.tried(1).note(), "the model's batch is fixed at 1");
  EXPECT_TRUE(r.tried(0).chosen());
  // --num-ipus auto: batch 1 with 1 and 2 IPUs, then batch 2 stops at its
  // first plan.
  plan = PlanPod(model, Defaults(kAutoIpus), pod);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->proto.replication().tried_size(), 3);
  EXPECT_EQ(plan->proto.replication().tried(2).note(),
            "the model's batch is fixed at 1");
}

// --num-ipus auto with IPUs of one 50-byte tile: the 128 bytes of weights
// need 3 of them.
Options FiftyByteIpus() {
  Options options = Defaults(kAutoIpus);
  options.device = testing::Ipu2WithTiles(50);
  options.device.set_tiles_per_ipu(1);
  options.device.set_grain_bytes(1);
  return options;
}

TEST(PodPlannerTest, SkipsCountsTooSmallForTheWeights) {
  const onnx::ModelProto model = BatchedResidual();
  Options options = FiftyByteIpus();
  // On-chip only: auto (the default) would add remote candidates for the
  // counts that do not fit on-chip (RemoteCandidatesOnlyWhereOnChipFails).
  options.weights_location = "on-chip";
  PodOptions pod;
  pod.total_ipus = 8;
  absl::StatusOr<Plan> plan = PlanPod(model, options, pod);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const proto::Replication& r = plan->proto.replication();
  // k = 1 is planned (the weights are not known before) and does not fit;
  // 2 x 50 < 128 is skipped; 4 x 50 >= 128 is planned (and overflows with
  // code); 8 IPUs exceed the 4 nodes.
  ASSERT_EQ(r.tried_size(), 4);
  EXPECT_TRUE(r.tried(0).planned());
  EXPECT_FALSE(r.tried(0).fits());
  EXPECT_FALSE(r.tried(1).planned());
  EXPECT_EQ(r.tried(1).note(), "the weights alone exceed their memory");
  EXPECT_TRUE(r.tried(2).planned());
  EXPECT_EQ(r.tried(3).note(), "more IPUs than the model's 4 nodes");
  EXPECT_FALSE(plan->proto.fits());
  EXPECT_EQ(plan->proto.num_ipus(), 4);
  EXPECT_THAT(PodReportText(plan->proto),
              HasSubstr("  batch 1: 1: does not fit, 2: skipped (the weights "
                        "alone exceed their memory), 4: does not fit, 8: "
                        "skipped (more IPUs than the model's 4 nodes)\n"));
}

// auto (the default) on the same model: the four on-chip rows as above,
// unnamed, then a remote row for each count, as none fits on-chip (remote
// weights are not resident, so "the weights alone" does not skip 2; 8 is
// skipped for the nodes again).
TEST(PodPlannerTest, RemoteCandidatesOnlyWhereOnChipFails) {
  const onnx::ModelProto model = BatchedResidual();
  PodOptions pod;
  pod.total_ipus = 8;
  absl::StatusOr<Plan> plan = PlanPod(model, FiftyByteIpus(), pod);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const proto::Replication& r = plan->proto.replication();
  ASSERT_EQ(r.tried_size(), 8);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(r.tried(i).weights_location(), "");
  for (int i = 4; i < 8; ++i)
    EXPECT_EQ(r.tried(i).weights_location(), "remote");
  EXPECT_EQ(r.tried(7).note(), "more IPUs than the model's 4 nodes");
}

TEST(PodPlannerTest, NumIpusAutoSkipsCountsTooSmallForTheWeights) {
  const onnx::ModelProto model = BatchedResidual();
  absl::StatusOr<Plan> plan = PlanModel(model, FiftyByteIpus());
  ASSERT_TRUE(plan.ok()) << plan.status();
  // 1 x 50 and 2 x 50 < 128 bytes: skipped; 4 (the most, 4 nodes) planned.
  EXPECT_THAT(plan->proto.num_ipus_skipped(), ElementsAre(1, 2));
  EXPECT_THAT(plan->proto.num_ipus_tried(), ElementsAre(4));
}

}  // namespace
}  // namespace autoshard::pod
