#include "sharder/problem_file.h"

#include <algorithm>
#include <vector>

#include "gtest/gtest.h"
#include "tests/test_problems.h"

namespace autoshard {
namespace {

// n0 -> n1 -> n2 and n0 -> n2, 1 s each (compute_s), onto 3 IPUs (one node
// each, the only split with every IPU used); t0 (n0's output) and t1 (n1's)
// take 1 s over the link each (copy_s). Toy chip: everything fits.
proto::Problem SkipChain(proto::CopyModel copies) {
  proto::Problem p;
  for (const char* name : {"n0", "n1", "n2"}) {
    proto::ProblemNode* node = p.add_nodes();
    node->set_name(name);
    node->set_compute_s(1);
  }
  proto::ProblemTensor* t0 = p.add_tensors();
  t0->set_producer(0);
  t0->add_consumers(1);
  t0->add_consumers(2);
  t0->set_copy_s(1);
  proto::ProblemTensor* t1 = p.add_tensors();
  t1->set_producer(1);
  t1->add_consumers(2);
  t1->set_copy_s(1);
  proto::ProblemTensor* out = p.add_tensors();
  out->set_producer(2);
  out->set_bytes(16);
  out->set_graph_output(true);
  p.set_num_ipus(3);
  *p.mutable_device_profile() = testing::ToyChip(1000000000);
  p.set_copy_model(copies);
  return p;
}

// SkipChain(copies) solved; expects each IPU's stage time (seconds) and
// the bottleneck, their largest.
proto::Plan SolveSkipChain(proto::CopyModel copies,
                           const std::vector<double>& stage_times_s) {
  auto loaded = FromProblemProto(SkipChain(copies), "skip.json");
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  if (!loaded.ok()) return proto::Plan();
  auto plan = SolveProblem(*loaded, {});
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return proto::Plan();
  EXPECT_EQ(plan->ipus_size(), static_cast<int>(stage_times_s.size()));
  for (int d = 0; d < plan->ipus_size(); ++d) {
    EXPECT_NEAR(plan->ipus(d).stage_time_s(), stage_times_s[d], 1e-9) << d;
  }
  EXPECT_NEAR(plan->performance().bottleneck_s(),
              *std::max_element(stage_times_s.begin(), stage_times_s.end()),
              1e-9);
  return *plan;
}

TEST(ProblemFileTest, AdjacentStageCopiesPassThroughTheMiddle) {
  // t0 goes 0 -> 1 -> 2: IPU 0 = 1 + 1 (t0 out) = 2 s; IPU 1 = 1 + 1 (t0
  // in) + 1 (t0 out) + 1 (t1 out) = 4 s; IPU 2 = 1 + 1 + 1 = 3 s.
  const proto::Plan plan =
      SolveSkipChain(proto::COPY_MODEL_ADJACENT_STAGES, {2, 4, 3});
  // Every IPU holds a node, so the split is the only one: the ideal DP's
  // bound is 4 s too, far above the cheap bound max(3 / 3, 1) = 1 s.
  EXPECT_NEAR(plan.performance().lower_bound_s(), 1, 1e-9);
  EXPECT_NEAR(plan.performance().certified_bound_s(), 4, 1e-9);
  EXPECT_EQ(plan.performance().bound_method(), "ideal DP");
  EXPECT_NEAR(plan.performance().certified_gap_percent(), 0, 1e-6);
}

TEST(ProblemFileTest, HostCopiesAreSentOnceAndReceivedByEachReader) {
  // t0 sent once by IPU 0, received by 1 and 2: IPU 0 = 2 s; IPU 1 = 1 + 1
  // (t0 in) + 1 (t1 out) = 3 s; IPU 2 = 1 + 1 (t0) + 1 (t1) = 3 s.
  const proto::Plan plan = SolveSkipChain(proto::COPY_MODEL_HOST, {2, 3, 3});
  EXPECT_NEAR(plan.performance().certified_bound_s(), 3, 1e-9);
}

TEST(ProblemFileTest, RoundTripsAProblem) {
  auto loaded = FromProblemProto(SkipChain(proto::COPY_MODEL_ADJACENT_STAGES),
                                 "skip.json");
  ASSERT_TRUE(loaded.ok());
  const proto::Problem again =
      ToProblemProto(loaded->problem, loaded->device, loaded->precision, 3, 1);
  auto reloaded = FromProblemProto(again, "again.json");
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  // copy_s 1 s at the toy chip's 1 GB/s: 1e9 bytes.
  EXPECT_EQ(reloaded->problem.output_bytes[0],
            (std::vector<int64_t>{1000000000}));
  EXPECT_EQ(reloaded->problem.output_consumers[0][0],
            (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(reloaded->problem.topo_order, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(reloaded->problem.names[2], "n2");
}

TEST(ProblemFileTest, RefusesCyclesAndBadIndices) {
  proto::Problem p = SkipChain(proto::COPY_MODEL_ADJACENT_STAGES);
  proto::ProblemTensor* back = p.add_tensors();
  back->set_producer(2);
  back->add_consumers(0);
  auto cycle = FromProblemProto(p, "cycle.json");
  ASSERT_FALSE(cycle.ok());
  EXPECT_NE(cycle.status().message().find("cycle.json: node 'n0' is on a "
                                          "cycle"),
            std::string::npos)
      << cycle.status();
  p = SkipChain(proto::COPY_MODEL_ADJACENT_STAGES);
  p.mutable_tensors(0)->add_consumers(7);
  EXPECT_FALSE(FromProblemProto(p, "bad.json").ok());
  p = SkipChain(proto::COPY_MODEL_ADJACENT_STAGES);
  p.set_num_ipus(4);
  EXPECT_FALSE(FromProblemProto(p, "bad.json").ok());
}

}  // namespace
}  // namespace autoshard
