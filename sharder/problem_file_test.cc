#include "sharder/problem_file.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_problems.h"
#include "tests/test_util.h"

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
  Options options;
  options.num_ipus = loaded->num_ipus;
  auto solved = SolveProblem(*loaded, options);
  EXPECT_TRUE(solved.ok()) << solved.status();
  if (!solved.ok()) return proto::Plan();
  const proto::Plan* plan = &solved->proto;
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

// Which weights are floating point (issue 29's --weights variable and the
// last stage on IPU 0 weigh only those) survives a round trip; a file that
// never says counts every weight as floating point.
TEST(ProblemFileTest, RoundTripsWhichWeightsAreFloatingPoint) {
  proto::Problem p = SkipChain(proto::COPY_MODEL_ADJACENT_STAGES);
  for (int64_t bytes : {400, 8}) {
    proto::ProblemWeight* w = p.add_weights();
    w->set_name(absl::StrCat("w", bytes));
    w->set_bytes(bytes);
  }
  p.mutable_nodes(0)->add_weights(0);
  p.mutable_nodes(2)->add_weights(1);
  auto unsaid = FromProblemProto(p, "p.json");
  ASSERT_TRUE(unsaid.ok()) << unsaid.status();
  EXPECT_TRUE(unsaid->problem.weight_is_float.empty());
  p.mutable_weights(1)->set_floating(false);  // an int64 shape, say
  auto said = FromProblemProto(p, "p.json");
  ASSERT_TRUE(said.ok()) << said.status();
  EXPECT_EQ(said->problem.weight_is_float, (std::vector<uint8_t>{1, 0}));
  const proto::Problem again =
      ToProblemProto(said->problem, said->device, said->precision, 3, 1);
  ASSERT_EQ(again.weights_size(), 2);
  EXPECT_TRUE(again.weights(0).floating());
  EXPECT_FALSE(again.weights(1).floating());
  EXPECT_TRUE(again.weights(1).has_floating());
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

// Host devices (issue 31): read, written back, and refused when they
// cannot be kept.
TEST(ProblemFileTest, HostFieldsRoundTripAndAreChecked) {
  proto::Problem p = SkipChain(proto::COPY_MODEL_HOST);
  p.set_num_host_devices(1);
  p.mutable_nodes(0)->set_host_compute_s(0.5);
  p.mutable_nodes(0)->set_host_only(true);
  auto loaded = FromProblemProto(p, "host.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->problem.num_host_devices, 1);
  // n1 and n2 give no host time: -1, they cannot run there.
  EXPECT_EQ(loaded->problem.host_time_s, (std::vector<double>{0.5, -1, -1}));
  EXPECT_EQ(loaded->problem.host_only, (std::vector<uint8_t>{1, 0, 0}));
  const proto::Problem back =
      ToProblemProto(loaded->problem, loaded->device, loaded->precision,
                     loaded->num_ipus, loaded->batch);
  EXPECT_EQ(back.num_host_devices(), 1);
  EXPECT_TRUE(back.nodes(0).has_host_compute_s());
  EXPECT_TRUE(back.nodes(0).host_only());
  EXPECT_FALSE(back.nodes(1).has_host_compute_s());
  proto::Problem adjacent = p;
  adjacent.set_copy_model(proto::COPY_MODEL_ADJACENT_STAGES);
  EXPECT_THAT(FromProblemProto(adjacent, "a.json").status().message(),
              ::testing::HasSubstr("a.json: host devices need copy_model "
                                   "COPY_MODEL_HOST"));
  proto::Problem no_host = p;
  no_host.set_num_host_devices(0);
  EXPECT_THAT(FromProblemProto(no_host, "n.json").status().message(),
              ::testing::HasSubstr("node 'n0': host_only needs"));
  // A review's inputs: NaN (JSON's "NaN" parses), infinity, more host
  // devices than the 3 nodes, host_only with allowed IPUs.
  for (double bad :
       {std::nan(""), std::numeric_limits<double>::infinity(), -1.0}) {
    proto::Problem q = p;
    q.mutable_nodes(1)->set_host_compute_s(bad);
    EXPECT_THAT(FromProblemProto(q, "t.json").status().message(),
                ::testing::HasSubstr("node 'n1': host_compute_s"))
        << bad;
  }
  proto::Problem many = p;
  many.set_num_host_devices(4);
  EXPECT_THAT(FromProblemProto(many, "m.json").status().message(),
              ::testing::HasSubstr("num_host_devices 4 is not in 0..3"));
  proto::Problem pinned = p;
  pinned.mutable_nodes(0)->add_allowed_ipus(0);
  EXPECT_THAT(FromProblemProto(pinned, "o.json").status().message(),
              ::testing::HasSubstr("node 'n0': host_only with allowed_ipus"));
}

// The plan of `problem` as `solve` makes it (its own num_ipus).
Plan Solved(const proto::Problem& problem,
            const std::string& strategy = "auto") {
  auto loaded = FromProblemProto(problem, "p.json");
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  if (!loaded.ok()) return Plan();
  Options options;
  options.num_ipus = loaded->num_ipus;
  options.strategy = strategy;
  auto plan = SolveProblem(*loaded, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : Plan();
}

TEST(ProblemFileTest, ExplicitZerosAreNotDerived) {
  // One node of 1e9 FLOPs (1 s on the toy chip's 1 GFLOP/s) feeding
  // another of 1e9, its output 1e9 bytes (1 s over the 1 GB/s link).
  proto::Problem p;
  for (const char* name : {"a", "b"}) {
    proto::ProblemNode* node = p.add_nodes();
    node->set_name(name);
    node->set_flops(1e9);
  }
  proto::ProblemTensor* t = p.add_tensors();
  t->set_producer(0);
  t->add_consumers(1);
  t->set_bytes(1000000000);
  p.set_num_ipus(2);
  *p.mutable_device_profile() = testing::ToyChip(1000000000);
  // Derived: IPU 0 = 1 s + 1 s (sends t), IPU 1 = 1 s + 1 s (receives t).
  EXPECT_NEAR(Solved(p).proto.performance().bottleneck_s(), 2, 1e-9);
  // compute_s 0 on a and copy_s 0 on t, given: IPU 0 = 0 s, IPU 1 = 1 s.
  p.mutable_nodes(0)->set_compute_s(0);
  t->set_copy_s(0);
  const Plan plan = Solved(p);
  ASSERT_EQ(plan.proto.ipus_size(), 2);
  EXPECT_NEAR(plan.proto.ipus(0).stage_time_s(), 0, 1e-12);
  EXPECT_NEAR(plan.proto.ipus(1).stage_time_s(), 1, 1e-9);
  // Written back, the zeros stay given.
  auto loaded = FromProblemProto(p, "p.json");
  ASSERT_TRUE(loaded.ok());
  const proto::Problem again =
      ToProblemProto(loaded->problem, loaded->device, loaded->precision, 2, 1);
  EXPECT_TRUE(again.nodes(0).has_compute_s());
  EXPECT_FALSE(again.nodes(1).has_compute_s());
}

TEST(ProblemFileTest, ReadsAFileWithoutTheNewFields) {
  // A file as issue 19's solve read it: compute_s and copy_s > 0, no
  // capacity; n0 (1 s) -> n1 (1 s), t0 takes 1 us (its bytes, 1 us x the
  // link's rate, are tile memory too: a few kB): 1 s + 1 us per IPU, plus
  // the profile's fixed time per transfer.
  const std::string path =
      (std::filesystem::temp_directory_path() / "old_problem.json").string();
  testing::WriteBytes(path, R"({"nodes": [{"name": "n0", "compute_s": 1},
      {"name": "n1", "compute_s": 1}],
    "tensors": [{"producer": 0, "consumers": [1], "copy_s": 1e-6}],
    "num_ipus": 2, "device": "ipu2"})");
  auto loaded = ReadProblemFile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  Options options;
  options.num_ipus = 2;
  auto plan = SolveProblem(*loaded, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_NEAR(plan->proto.performance().bottleneck_s(),
              1 + 1e-6 + loaded->device.transfer_fixed_s(), 1e-9);
  EXPECT_TRUE(plan->proto.fits());
  std::filesystem::remove(path);
}

// a (2 s) -> b (1 s) -> c (1 s) on 2 IPUs; a reads w0 (600 B), b reads w0
// and w1 (300 B), c reads w2 (500 B); a's and b's outputs are 100 B, c's
// 50 B (a graph output). Memory in plain bytes of `capacity`.
proto::Problem PlainChain(int64_t capacity, proto::MemoryCounts counts) {
  proto::Problem p;
  const double seconds[] = {2, 1, 1};
  const std::vector<std::vector<int32_t>> weights = {{0}, {0, 1}, {2}};
  for (int v = 0; v < 3; ++v) {
    proto::ProblemNode* node = p.add_nodes();
    node->set_name(std::string(1, static_cast<char>('a' + v)));
    node->set_compute_s(seconds[v]);
    for (int32_t w : weights[v]) node->add_weights(w);
  }
  for (int64_t bytes : {600, 300, 500}) p.add_weights()->set_bytes(bytes);
  for (int v = 0; v < 3; ++v) {
    proto::ProblemTensor* t = p.add_tensors();
    t->set_producer(v);
    if (v < 2) t->add_consumers(v + 1);
    t->set_bytes(v < 2 ? 100 : 50);
    t->set_graph_output(v == 2);
  }
  p.set_num_ipus(2);
  *p.mutable_device_profile() = testing::ToyChip();
  p.set_capacity_bytes(capacity);
  p.set_memory_counts(counts);
  return p;
}

TEST(ProblemFileTest, PlainBytesCountWeightsOnly) {
  // {a} | {b, c} is faster (2 s vs 3 s) but holds w0 + w1 + w2 = 1400 B >
  // 1000 on IPU 1; {a, b} | {c} holds 900 B and 500 B: it fits.
  const Plan plan = Solved(PlainChain(1000, proto::MEMORY_COUNTS_WEIGHTS));
  EXPECT_TRUE(plan.proto.fits());
  EXPECT_EQ(plan.placement.ipu, (std::vector<int32_t>{0, 0, 1}));
  // 3 s + 100 B over the 1 GB/s link (1e-7 s).
  EXPECT_NEAR(plan.proto.performance().bottleneck_s(), 3 + 1e-7, 1e-12);
  EXPECT_EQ(plan.proto.ipus(0).memory().total_bytes(), 900);
  EXPECT_EQ(plan.proto.ipus(1).memory().total_bytes(), 500);
  // Every strategy judges memory the same way.
  for (const char* strategy : {"search", "optimal"}) {
    SCOPED_TRACE(strategy);
    const Plan other =
        Solved(PlainChain(1000, proto::MEMORY_COUNTS_WEIGHTS), strategy);
    EXPECT_TRUE(other.proto.fits());
    EXPECT_EQ(other.placement.ipu, (std::vector<int32_t>{0, 0, 1}));
  }
}

TEST(ProblemFileTest, PlainBytesCountActivationsWhenAsked) {
  // {a, b}: 900 B of weights + 100 + 100 B of outputs = 1100 B; {c}: 500 +
  // 50 = 550 B. Fits in 1100 B, not in 1099 B (nor does {a} | {b, c}).
  const Plan fits =
      Solved(PlainChain(1100, proto::MEMORY_COUNTS_WEIGHTS_AND_ACTIVATIONS));
  EXPECT_TRUE(fits.proto.fits());
  EXPECT_EQ(fits.proto.ipus(0).memory().weight_bytes(), 900);
  EXPECT_EQ(fits.proto.ipus(0).memory().activation_bytes(), 200);
  EXPECT_EQ(fits.proto.ipus(1).memory().total_bytes(), 550);
  const Plan tight =
      Solved(PlainChain(1099, proto::MEMORY_COUNTS_WEIGHTS_AND_ACTIVATIONS));
  EXPECT_FALSE(tight.proto.fits());
  EXPECT_THAT(tight.proto.out_of_memory(),
              ::testing::HasSubstr("bytes used but it has 1099"));
}

TEST(ProblemFileTest, PlainBytesRoundTripAndRefuseZero) {
  auto loaded = FromProblemProto(
      PlainChain(1100, proto::MEMORY_COUNTS_WEIGHTS_AND_ACTIVATIONS), "p.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const proto::Problem again =
      ToProblemProto(loaded->problem, loaded->device, loaded->precision, 2, 1);
  EXPECT_EQ(again.capacity_bytes(), 1100);
  EXPECT_EQ(again.memory_counts(),
            proto::MEMORY_COUNTS_WEIGHTS_AND_ACTIVATIONS);
  auto zero = FromProblemProto(PlainChain(0, proto::MEMORY_COUNTS_WEIGHTS),
                               "zero.json");
  ASSERT_FALSE(zero.ok());
  EXPECT_THAT(zero.status().message(),
              ::testing::HasSubstr("zero.json: capacity_bytes 0"));
}

}  // namespace
}  // namespace autoshard
