// Remote weights in the device model (Note [Remote weights],
// costmodel/weight_location.h): memory while in use, loads in stage times.
#include "costmodel/weight_location.h"

#include <vector>

#include "costmodel/device_model.h"
#include "costmodel/device_profile.h"
#include "costmodel/remote_choice.h"
#include "gtest/gtest.h"
#include "tests/test_problems.h"

namespace autoshard {
namespace {

using ::autoshard::testing::ToyChip;

// The toy chip (4 tiles of 1000 B, 4-byte grains, 1 GFLOP/s fp32, 1 GB/s
// links, 10 code bytes per tile per op) with Streaming Memory: 1.6 MB/s,
// so a 1600-byte weight loads in 1 ms; 1 MB per machine of 4 IPUs.
proto::DeviceProfile ToyWithStreamingMemory(bool overlap = false) {
  proto::DeviceProfile p = ToyChip();
  p.set_streaming_memory_bytes_per_machine(1000000);
  p.set_ipus_per_machine(4);
  p.set_streaming_memory_bytes_per_s(1.6e6);
  p.set_remote_loads_overlap_compute(overlap);
  return p;
}

// n0 -> n1 -> n2, each reading its own 1600-byte weight, 1e6 FLOPs (1 ms on
// the toy chip), 16-byte outputs.
ShardingProblem ThreeHeavyWeights() {
  return testing::MakeTestProblem(3, {{0, 1}, {1, 2}}, {1600, 1600, 1600},
                                  {1e6, 1e6, 1e6});
}

TEST(ShardBytesTest, ReferenceTensorOverItsShards) {
  // The reference test's weight: 16 int32 = 64 bytes per group.
  EXPECT_EQ(ShardBytes(64, 1), 64);
  EXPECT_EQ(ShardBytes(64, 2), 32);  // shard_over 2: 8 elements each
  EXPECT_EQ(ShardBytes(64, 4), 16);
  EXPECT_EQ(AllGatherBytes(64, 1), 0);
  EXPECT_EQ(AllGatherBytes(64, 2), 32);  // (2-1)/2 x 64
  EXPECT_EQ(AllGatherBytes(64, 4), 48);  // (4-1)/4 x 64
  // Not divisible: 10 bytes over 4 -> shards of 3 (padded), 3 x 3 gathered.
  EXPECT_EQ(ShardBytes(10, 4), 3);
  EXPECT_EQ(AllGatherBytes(10, 4), 9);
}

TEST(RemoteLoadSecondsTest, StreamingMemoryThenAllGather) {
  const proto::DeviceProfile ipu2 = *LoadDeviceProfile("ipu2");
  // 1.4 GB over 4 replicas: 350 MB from Streaming Memory at 20 GB/s =
  // 17.5 ms, then 3 x 350 MB = 1.05 GB over the links at 70 GB/s = 15 ms.
  EXPECT_NEAR(RemoteLoadSeconds(ipu2, 1400000000, 4), 0.0325, 1e-12);
  // Not sharded: 1.4 GB / 20 GB/s = 70 ms.
  EXPECT_NEAR(RemoteLoadSeconds(ipu2, 1400000000, 1), 0.07, 1e-12);
}

TEST(RemoteWeightsTest, ProfilesWithoutStreamingMemoryRefuse) {
  ShardingProblem p = ThreeHeavyWeights();
  for (const char* name : {"ipu1", "c600"}) {
    const absl::Status s = MakeWeightsRemote(*LoadDeviceProfile(name), 1, &p);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_NE(s.message().find("has no Streaming Memory"), std::string::npos);
  }
  EXPECT_FALSE(HasRemoteWeights(p));
  EXPECT_EQ(MakeWeightsRemote(ToyWithStreamingMemory(), 0, &p).code(),
            absl::StatusCode::kInvalidArgument);
}

// The hand-made model of issue 30 point 5: on one IPU it does not fit
// on-chip, and fits with its weights remote.
TEST(RemoteWeightsTest, RemoteWeightsMakeOneIpuFit) {
  const proto::DeviceProfile chip = ToyWithStreamingMemory();
  const std::vector<int32_t> one_ipu = {0, 0, 0};
  ShardingProblem on_chip = ThreeHeavyWeights();
  DeviceModel on_model(on_chip, chip, Precision::kFp32);
  // On-chip: 3 x 1600 B = 4800 B of weights, 1200 B on each of 4 tiles of
  // 1000 B.
  const IpuMemory on = on_model.EvaluateMemory(one_ipu, 0);
  EXPECT_EQ(on.weight_bytes, 4800);
  EXPECT_FALSE(on.fits);

  ShardingProblem remote = ThreeHeavyWeights();
  ASSERT_TRUE(MakeWeightsRemote(chip, 1, &remote).ok());
  EXPECT_EQ(ResidentWeightBytes(remote), 0);
  DeviceModel model(remote, chip, Precision::kFp32);
  const IpuMemory m = model.EvaluateMemory(one_ipu, 0);
  // Live per step: step 0 n0's 16 B + w0 = 1616; step 1 n0's and n1's
  // outputs + w1 = 1632; step 2 n1's and n2's + w2 = 1632. Peak: step 1.
  // Its tensors: 16 B (1 grain a tile), 16 B, then w1's 400 grains (100 a
  // tile): 408 B a tile. Code: 3 ops x 10 B on all 4 tiles: 438 B.
  EXPECT_EQ(m.weight_bytes, 1600);
  EXPECT_EQ(m.activation_bytes, 32);
  EXPECT_EQ(m.max_tile_bytes, 438);
  EXPECT_TRUE(m.fits);
  // Stage time: each node 1e6 FLOPs / 1e9 FLOP/s = 1 ms, plus its weight's
  // load, 1600 B / 1.6e6 B/s = 1 ms: 3 x 2 ms = 6 ms.
  const Performance perf = model.EvaluatePerformance(one_ipu, 1, 1);
  EXPECT_NEAR(perf.stage_time_s[0], 0.006, 1e-12);
  // The cheap bound counts the loads too (one IPU: every node time).
  EXPECT_NEAR(perf.lower_bound_s, 0.006, 1e-12);
  EXPECT_LE(model.LowerBound(1), perf.bottleneck_s);
}

TEST(RemoteWeightsTest, ShardedLoadsAddTheAllGather) {
  ShardingProblem p = ThreeHeavyWeights();
  ASSERT_TRUE(MakeWeightsRemote(ToyWithStreamingMemory(), 2, &p).ok());
  DeviceModel model(p, ToyWithStreamingMemory(), Precision::kFp32);
  // Per weight: 800 B / 1.6e6 B/s = 0.5 ms, then 800 B at 1 GB/s = 0.8 us.
  // Three nodes: 3 x (1 ms + 0.5008 ms) = 4.5024 ms.
  const Performance perf = model.EvaluatePerformance({0, 0, 0}, 1, 1);
  EXPECT_NEAR(perf.stage_time_s[0], 0.0045024, 1e-12);
}

TEST(RemoteWeightsTest, EveryIpuReadingAWeightLoadsIt) {
  // w0 (1600 B) read by n0 on IPU 0 and by n2 on IPU 1.
  ShardingProblem p = testing::MakeTestProblem(3, {{0, 1}, {1, 2}},
                                               {1600, 0, 0}, {1e6, 1e6, 1e6});
  p.node_weights[2].push_back(0);
  const proto::DeviceProfile chip = ToyWithStreamingMemory();
  ASSERT_TRUE(MakeWeightsRemote(chip, 1, &p).ok());
  DeviceModel model(p, chip, Precision::kFp32);
  const std::vector<int32_t> ipu = {0, 1, 1};
  const Performance perf = model.EvaluatePerformance(ipu, 2, 1);
  // IPU 0: n0 1 ms + its load 1 ms + n0's 16 B out (16 ns at 1 GB/s).
  EXPECT_NEAR(perf.stage_time_s[0], 0.002 + 16e-9, 1e-12);
  // IPU 1: n1 + n2 2 ms, w0's own load 1 ms, 16 B in.
  EXPECT_NEAR(perf.stage_time_s[1], 0.003 + 16e-9, 1e-12);
  const DeviceModel::RemoteLoads loads = model.RemoteLoadsOf(ipu, 2);
  EXPECT_EQ(loads.bytes[0], 1600);
  EXPECT_EQ(loads.bytes[1], 1600);
  // The bounds see the load once (at n0): Σ node times = 4 ms, / 2 IPUs.
  EXPECT_NEAR(model.LowerBound(2), 0.002, 1e-12);
}

TEST(RemoteWeightsTest, OverlappingLoadsTakeTheLonger) {
  const proto::DeviceProfile chip = ToyWithStreamingMemory(/*overlap=*/true);
  ShardingProblem p = ThreeHeavyWeights();
  ASSERT_TRUE(MakeWeightsRemote(chip, 1, &p).ok());
  DeviceModel model(p, chip, Precision::kFp32);
  // Compute 3 ms, loads 3 ms: max = 3 ms; node times stay 1 ms.
  EXPECT_NEAR(model.NodeTime(0), 0.001, 1e-12);
  const Performance perf = model.EvaluatePerformance({0, 0, 0}, 1, 1);
  EXPECT_NEAR(perf.stage_time_s[0], 0.003, 1e-12);
}

TEST(StreamingMemoryTest, PerMachineAgainstCapacity) {
  // 6 IPUs, 4 per machine: machine 0 holds IPUs 0-3, machine 1 IPUs 4-5.
  // Sharded over 2: IPU 0's 1000 B and 600 B -> 500 + 300; IPU 5's 2001 B
  // -> 1001 (padded).
  const std::vector<std::vector<int64_t>> per_ipu = {{1000, 600}, {}, {},
                                                     {},          {}, {2001}};
  EXPECT_EQ(StreamingBytesPerMachine(per_ipu, 4, 2),
            (std::vector<int64_t>{800, 1001}));
  proto::DeviceProfile chip = ToyWithStreamingMemory();
  chip.set_streaming_memory_bytes_per_machine(1000);
  const absl::Status s = CheckStreamingCapacity(chip, {800, 1001});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("IPU-Machine 1"), std::string::npos);
  EXPECT_TRUE(CheckStreamingCapacity(chip, {800, 1000}).ok());
}

// Issue 30 point 3: two stages, only the first needs weights off-chip.
// n0 -> n1 -> n2 on IPU 0 read w0 1600 B, w1 1600 B, w2 800 B; n3 -> n4 on
// IPU 1 read w3, w4, 800 B each. IPU 0 on-chip: 4000 B of weights, 1000 B
// on each of its 4 tiles before code: does not fit. IPU 1: 1600 B, 400 B a
// tile: fits, nothing moves. A remote weight is live while its reader runs,
// so one weight off-chip frees nothing at its own step (4000 B again).
// Largest first: w0 then w1 (3200 B; w2 resident 800 + w0 live 1600 =
// 2400 B at n0). Smallest first: w2, then w0
// (2400 B; w1 resident 1600 + w0 live 1600 = 3200 B at n0, 800 B a tile +
// 30 B code + 4 B of n0's output: fits). Bringing either back makes 4000 B
// again. So: w0 and w2, 2400 B.
TEST(FewestBytesOffChipTest, OnlyTheStageThatDoesNotFitLoads) {
  const proto::DeviceProfile chip = ToyWithStreamingMemory();
  const ShardingProblem on_chip = testing::MakeTestProblem(
      5, {{0, 1}, {1, 2}, {2, 3}, {3, 4}}, {1600, 1600, 800, 800, 800},
      {1e6, 1e6, 1e6, 1e6, 1e6});
  const std::vector<int32_t> ipu = {0, 0, 0, 1, 1};
  const RemoteChoice c =
      FewestBytesOffChip(on_chip, chip, Precision::kFp32, ipu, 2, 1);
  ASSERT_TRUE(c.fits);
  EXPECT_EQ(c.remote, (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(c.remote_bytes, 2400);

  ShardingProblem mixed = on_chip;
  ASSERT_TRUE(MakeChosenWeightsRemote(chip, 1, c.remote, &mixed).ok());
  EXPECT_EQ(ResidentWeightBytes(mixed), 1600 + 800 + 800);
  DeviceModel model(mixed, chip, Precision::kFp32);
  EXPECT_TRUE(model.EvaluateMemory(ipu, 0).fits);
  EXPECT_TRUE(model.EvaluateMemory(ipu, 1).fits);
  // IPU 0: 3 nodes x 1 ms + w0's load 1600 B / 1.6e6 B/s = 1 ms + w2's
  // 800 B = 0.5 ms, + n2's 16 B out at 1 GB/s (16 ns): 4.5 ms + 16 ns.
  // IPU 1: 2 x 1 ms + 16 B in: nothing loaded.
  const Performance perf = model.EvaluatePerformance(ipu, 2, 1);
  EXPECT_NEAR(perf.stage_time_s[0], 0.0045 + 16e-9, 1e-12);
  EXPECT_NEAR(perf.stage_time_s[1], 0.002 + 16e-9, 1e-12);
}

TEST(FewestBytesOffChipTest, NothingMovesWhenItFitsAndFailsWhenItCannot) {
  const proto::DeviceProfile chip = ToyWithStreamingMemory();
  // Split over two IPUs the three 1600 B weights fit on-chip: none moves.
  const RemoteChoice fits = FewestBytesOffChip(
      ThreeHeavyWeights(), chip, Precision::kFp32, {0, 0, 1}, 2, 1);
  EXPECT_TRUE(fits.fits);
  EXPECT_TRUE(fits.remote.empty());
  EXPECT_EQ(fits.remote_bytes, 0);
  // One node reading 4800 B: live while it runs, remote or not.
  const ShardingProblem one = testing::MakeTestProblem(1, {}, {4800}, {1e6});
  const RemoteChoice never =
      FewestBytesOffChip(one, chip, Precision::kFp32, {0}, 1, 1);
  EXPECT_FALSE(never.fits);
}

}  // namespace
}  // namespace autoshard
