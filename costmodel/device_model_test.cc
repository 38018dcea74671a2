#include "costmodel/device_model.h"

#include <fstream>
#include <limits>
#include <utility>
#include <vector>

#include "costmodel/device_profile.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/test_problems.h"
#include "tests/test_util.h"

namespace autoshard {
namespace {

using ::autoshard::testing::ToyChip;
using ::testing::DoubleNear;
using ::testing::ElementsAre;

// n0 -> n1 -> n2. n0 reads w0 (40 B) and outputs 16 B; n1 reads w1 (6 B) and
// outputs 8 B; n2 outputs 4 B (a graph output).
ShardingProblem Chain() {
  ShardingProblem p =
      testing::MakeTestProblem(3, {{0, 1}, {1, 2}}, {40, 6, 0}, {1e9, 2e9, 0});
  p.activation_bytes = {16, 8, 4};
  p.largest_output_bytes = {16, 8, 4};
  testing::RefreshTensors(&p);
  return p;
}

TEST(TileMemoryTest, PerTileBytesAddUpByHand) {
  ShardingProblem p = Chain();
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  IpuMemory m = model.EvaluateMemory(std::vector<int32_t>{0, 0, 0}, 0);
  // Weights: w0 = 10 grains: 2 per tile + tiles 0,1 one more -> [12,12,8,8];
  // w1 = 6 B -> 2 grains on tiles 2,3 -> [12,12,12,12]. 40 + 8 = 48 B.
  EXPECT_EQ(m.weight_bytes, 48);
  // Live: n0's 16 B over steps 0-1, n1's 8 B over 1-2, n2's 4 B at 2.
  // Peak at step 1: 24 B. n0: 1 grain a tile -> [16,16,16,16]; n1: 2 grains
  // on tiles 0,1 -> [20,20,16,16].
  EXPECT_EQ(m.activation_bytes, 24);
  // Code, 10 B a tile: n0 spans 16/4 = 4 tiles (all) -> [30,30,26,26];
  // n1 spans 2 from the cursor (tile 2) -> [30,30,36,36]; n2 spans 1 from
  // tile 0 -> [40,30,36,36]. 40 + 20 + 10 = 70 B.
  EXPECT_EQ(m.code_bytes, 70);
  EXPECT_EQ(m.exchange_bytes, 0);
  EXPECT_EQ(m.temporary_bytes, 0);
  // The tiles sum to the total: 40 + 30 + 36 + 36 = 142 = 48 + 24 + 70.
  EXPECT_EQ(m.total_bytes(), 142);
  EXPECT_EQ(m.max_tile, 0);
  EXPECT_EQ(m.max_tile_bytes, 40);
  EXPECT_TRUE(m.fits);
}

TEST(TileMemoryTest, TensorsWrapAroundTheTiles) {
  // One node reading three weights of 12, 8 and 12 B on 4 tiles, 4-byte
  // grains: 3 grains on tiles 0-2 (cursor 3); 2 grains on tiles 3, 0
  // (wrapping, cursor 1); 3 grains on tiles 1-3. Per tile: [8, 8, 8, 8].
  ShardingProblem p = testing::MakeTestProblem(1, {}, {0}, {0});
  p.weight_size_bytes = {12, 8, 12};
  p.node_weights = {{0, 1, 2}};
  p.activation_bytes = {0};
  p.largest_output_bytes = {0};
  testing::RefreshTensors(&p);
  proto::DeviceProfile chip = ToyChip();
  chip.clear_op_classes();
  DeviceModel model(p, chip, Precision::kFp32);
  IpuMemory m = model.EvaluateMemory(std::vector<int32_t>{0}, 0);
  EXPECT_EQ(m.weight_bytes, 32);
  EXPECT_EQ(m.max_tile_bytes, 8);  // even: the wrap put the 2nd grain on tile 0
  EXPECT_EQ(m.max_tile, 0);
}

// The activation bytes of Chain() on one IPU of the toy chip, its nodes'
// graph outputs as given.
int64_t ChainActivationBytes(std::vector<uint8_t> is_graph_output) {
  ShardingProblem p = Chain();
  p.is_graph_output = std::move(is_graph_output);
  testing::RefreshTensors(&p);
  return DeviceModel(p, ToyChip(), Precision::kFp32)
      .EvaluateMemory(std::vector<int32_t>{0, 0, 0}, 0)
      .activation_bytes;
}

TEST(TileMemoryTest, GraphOutputsLiveToTheEndEvenWhenReadLocally) {
  // n0 -> n1 -> n2 with n0's output also a graph output: it lives over all 3
  // steps. Peak at step 1 (n0 16 + n1 8) or step 2 (n0 16 + n1 8 + n2 4 =
  // 28): 28 B. Without the flag, n0's output dies after step 1: peak 24.
  EXPECT_EQ(ChainActivationBytes({1, 0, 1}), 28);
  // An output nothing reads that is not a graph output lives at its step.
  EXPECT_EQ(ChainActivationBytes({0, 0, 0}), 24);
}

TEST(TileMemoryTest, OverflowNamesTheGlobalTile) {
  ShardingProblem p = Chain();
  // 39-byte tiles: the same layout no longer fits on IPU 0's tile 0.
  DeviceModel model(p, ToyChip(39), Precision::kFp32);
  IpuMemory m = model.EvaluateMemory(std::vector<int32_t>{0, 0, 0}, 0);
  EXPECT_FALSE(m.fits);
  EXPECT_EQ(model.OutOfMemoryMessage(0, m),
            "Out of memory on tile 0: 40 bytes used but tiles only have 39 "
            "bytes of memory (IPU 0 tile 0)");
  // On IPU 1 of a split, tile t is global tile 1 x 4 + t.
  EXPECT_THAT(model.OutOfMemoryMessage(1, m),
              ::testing::StartsWith("Out of memory on tile 4:"));
  EXPECT_THAT(model.OutOfMemoryMessage(1, m),
              ::testing::EndsWith("(IPU 1 tile 0)"));
}

TEST(TileMemoryTest, CutTensorsAreExchangeBuffersOnBothIpus) {
  ShardingProblem p = Chain();
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  // n0, n1 on IPU 0; n2 on IPU 1: n1's 8 B output is sent and received.
  const std::vector<int32_t> split = {0, 0, 1};
  IpuMemory first = model.EvaluateMemory(split, 0);
  IpuMemory second = model.EvaluateMemory(split, 1);
  EXPECT_EQ(first.exchange_bytes, 8);
  EXPECT_EQ(second.exchange_bytes, 8);
  EXPECT_EQ(second.weight_bytes, 0);
  // IPU 0: n1's output is read only on IPU 1, so it lives at its own step:
  // step 0 holds 16 B, step 1 holds 16 + 8 = 24 B.
  EXPECT_EQ(first.activation_bytes, 24);
}

TEST(TileMemoryTest, CutTensorsCountPerTensorNotPerNode) {
  // n0 (a Split) has two outputs: slot 0 (100 B) read by n1, slot 1 (8 B)
  // read by n2. With n0, n1 on IPU 0 and n2 on IPU 1 only the 8-byte tensor
  // crosses: cut bytes 8 each way, exchange buffers 8 B on each IPU.
  ShardingProblem p =
      testing::MakeTestProblem(3, {{0, 1}, {0, 2}}, {0, 0, 0}, {0, 0, 0});
  p.activation_bytes = {108, 4, 4};
  testing::RefreshTensors(&p);
  p.output_bytes[0] = {100, 8};
  p.output_consumers[0] = {{1}, {2}};
  p.output_is_graph_output[0] = {0, 0};
  p.input_tensors[1] = {{0, 0}};
  p.input_tensors[2] = {{0, 1}};
  const std::vector<int32_t> split = {0, 0, 1};
  const CutBytes cut = ComputeCutBytes(p, split, 2);
  EXPECT_THAT(cut.out_bytes, ElementsAre(8, 0));
  EXPECT_THAT(cut.in_bytes, ElementsAre(0, 8));
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  EXPECT_EQ(model.EvaluateMemory(split, 0).exchange_bytes, 8);
  EXPECT_EQ(model.EvaluateMemory(split, 1).exchange_bytes, 8);
  // IPU 0: step 0 holds both of n0's outputs (108 B; slot 1 is read only on
  // IPU 1, so it lives at its own step); step 1 holds slot 0 and n1's 4 B
  // (104 B). Peak 108 B.
  EXPECT_EQ(model.EvaluateMemory(split, 0).activation_bytes, 108);
}

TEST(TileMemoryTest, TemporaryMemoryIsCappedByTheAvailableProportion) {
  ShardingProblem p = Chain();
  p.op_class[1] = "matmul";
  p.temporary_bytes[1] = 4000;  // 1000 B a tile, capped at 0.5 x 1000 = 500
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  IpuMemory m = model.EvaluateMemory(std::vector<int32_t>{0, 0, 0}, 0);
  // Peak at n1's step: 24 B live + 4 x 500 B of temporaries.
  EXPECT_EQ(m.temporary_bytes, 2000);  // 500 on each of 4 tiles
  // As in PerTileBytesAddUpByHand up to the code, except n1 (matmul) has
  // none, so n2's 10 B land on tile 2: [30,30,36,26] + 500 each.
  EXPECT_EQ(m.max_tile, 2);
  EXPECT_EQ(m.max_tile_bytes, 536);
  EXPECT_TRUE(m.fits);
}

TEST(PerformanceTest, StageTimesBottleneckAndLowerBound) {
  ShardingProblem p = Chain();
  p.op_class[1] = "matmul";
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  // n0: 1e9 FLOPs / (1e9 x 1) = 1 s; n1: 2e9 / (1e9 x 0.5) = 4 s; n2: 0 s.
  EXPECT_DOUBLE_EQ(model.NodeTime(0), 1.0);
  EXPECT_DOUBLE_EQ(model.NodeTime(1), 4.0);
  // Split {n0} | {n1, n2}: n0's 16 B output crosses at 1 GB/s = 16 ns each
  // way, counted on both stages.
  Performance perf =
      model.EvaluatePerformance(std::vector<int32_t>{0, 1, 1}, 2, 8);
  EXPECT_THAT(perf.stage_time_s, ElementsAre(DoubleNear(1 + 16e-9, 1e-15),
                                             DoubleNear(4 + 16e-9, 1e-15)));
  EXPECT_NEAR(perf.bottleneck_s, 4 + 16e-9, 1e-15);
  EXPECT_NEAR(perf.throughput_per_s, 8 / (4 + 16e-9), 1e-9);
  EXPECT_NEAR(perf.latency_s, 5 + 32e-9, 1e-15);
  // max(5 s / 2, the costliest node's 4 s) = 4 s.
  EXPECT_DOUBLE_EQ(perf.lower_bound_s, 4.0);
  // fp16 uses the 2 GFLOP/s peak: n1 takes 2 s.
  DeviceModel fp16(p, ToyChip(), Precision::kFp16);
  EXPECT_DOUBLE_EQ(fp16.NodeTime(1), 2.0);
}

TEST(PerformanceTest, SmallWorkIsSlowAndTheStepPaysItsFixedTime) {
  ShardingProblem p = Chain();
  p.op_class[1] = "matmul";
  proto::DeviceProfile chip = ToyChip();
  // matmul keeps the 4 tiles busy from 4 x 6 = 24 output bytes; n1 outputs 8.
  chip.mutable_op_classes(1)->set_work_grain_bytes(6);
  chip.set_step_fixed_s(0.5);
  ASSERT_TRUE(ValidateDeviceProfile(chip).ok());
  DeviceModel model(p, chip, Precision::kFp32);
  // n1: 2e9 / (1e9 x 0.5) = 4 s, x 24 / 8 = 3 -> 12 s; n0 ("other", no
  // grain) stays 1 s.
  EXPECT_DOUBLE_EQ(model.NodeTime(1), 12.0);
  EXPECT_DOUBLE_EQ(model.NodeTime(0), 1.0);
  // A 1,472-tile chip, 1,000 B grain (one pass of the tiles: 1,472,000 B):
  // a 147,200 B output keeps 147.2 tiles busy: 10. 1,472,000 B: 1. 1.5 MB is
  // 1,500 grains: 28 tiles take a second one, so the op takes two grains'
  // time where 1,500 / 1,472 would do: 2 x 1,472,000 / 1,500,000. Ten
  // passes exactly: 1.
  proto::OpClassProfile c;
  c.set_work_grain_bytes(1000);
  EXPECT_DOUBLE_EQ(SmallWorkFactor(c, 1472, 147200), 10.0);
  EXPECT_DOUBLE_EQ(SmallWorkFactor(c, 1472, 1472000), 1.0);
  EXPECT_DOUBLE_EQ(SmallWorkFactor(c, 1472, 1500000), 2.0 * 1472 / 1500);
  EXPECT_DOUBLE_EQ(SmallWorkFactor(c, 1472, 14720000), 1.0);
  EXPECT_DOUBLE_EQ(SmallWorkFactor(c, 1472, 0), 1.0);
  // One IPU, batch 8: stage 1 + 12 + 0 = 13 s; the step 13 + 0.5 s.
  Performance perf =
      model.EvaluatePerformance(std::vector<int32_t>{0, 0, 0}, 1, 8);
  EXPECT_DOUBLE_EQ(perf.bottleneck_s, 13.0);
  EXPECT_DOUBLE_EQ(perf.throughput_per_s, 8 / 13.5);
  EXPECT_DOUBLE_EQ(perf.latency_s, 13.5);
  // The lower bound is of the bottleneck: the step's fixed time is not in it.
  EXPECT_DOUBLE_EQ(perf.lower_bound_s, 13.0);
}

TEST(PerformanceTest, CutTensorsAreCopiedStageByStage) {
  // n0 -> n1 -> n2 and n0 -> n2, one node per IPU: n0's 16 B output goes
  // IPU 0 -> 1 -> 2 (PopART copies only between adjacent stages), so IPU 1
  // receives it and sends it on with n1's 16 B output.
  ShardingProblem p = testing::MakeTestProblem(3, {{0, 1}, {1, 2}, {0, 2}},
                                               {0, 0, 0}, {1e9, 1e9, 1e9});
  const std::vector<int32_t> split = {0, 1, 2};
  const CutBytes cut = ComputeCutBytes(p, split, 3);
  EXPECT_THAT(cut.out_bytes, ElementsAre(16, 32, 0));
  EXPECT_THAT(cut.in_bytes, ElementsAre(0, 16, 32));
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  // 1 s of compute each; IPU 1 moves 48 B at 1 GB/s.
  Performance perf = model.EvaluatePerformance(split, 3, 1);
  EXPECT_THAT(perf.stage_time_s, ElementsAre(DoubleNear(1 + 16e-9, 1e-15),
                                             DoubleNear(1 + 48e-9, 1e-15),
                                             DoubleNear(1 + 32e-9, 1e-15)));
  // A reader on an earlier IPU (not monotone) gets its own copy.
  const CutBytes back = ComputeCutBytes(p, {1, 0, 1}, 2);
  EXPECT_THAT(back.out_bytes, ElementsAre(16, 16));
  EXPECT_THAT(back.in_bytes, ElementsAre(16, 16));
}

TEST(PerformanceTest, LowerBoundTakesThePigeonholeBound) {
  // Node times 5, 5, 5, 1, 1, 1 s on 2 IPUs: total / 2 = 9 s, the costliest
  // node 5 s; of the 3 costliest nodes one IPU runs 2: 5 + 5 = 10 s.
  ShardingProblem p = testing::MakeTestProblem(6, {}, {0, 0, 0, 0, 0, 0},
                                               {5e9, 1e9, 5e9, 1e9, 5e9, 1e9});
  DeviceModel model(p, ToyChip(), Precision::kFp32);
  EXPECT_DOUBLE_EQ(model.LowerBound(2), 10.0);
  // 3 IPUs: total / 3 = 6 s; of the 4 costliest (5, 5, 5, 1) one runs 2:
  // the two cheapest of them, 5 + 1 = 6 s.
  EXPECT_DOUBLE_EQ(model.LowerBound(3), 6.0);
  // 1 IPU: everything, 18 s; 6 IPUs: the costliest node, 5 s.
  EXPECT_DOUBLE_EQ(model.LowerBound(1), 18.0);
  EXPECT_DOUBLE_EQ(model.LowerBound(6), 5.0);
  EXPECT_DOUBLE_EQ(
      model.EvaluatePerformance(std::vector<int32_t>{0, 0, 0, 1, 1, 1}, 2, 1)
          .lower_bound_s,
      10.0);
}

TEST(DeviceProfileTest, BuiltinsLoadAndCustomFilesAreChecked) {
  auto ipu2 = LoadDeviceProfile("ipu2");
  ASSERT_TRUE(ipu2.ok()) << ipu2.status();
  EXPECT_EQ(ipu2->tiles_per_ipu(), 1472);
  EXPECT_EQ(ipu2->bytes_per_tile(),
            638976);  // 1472 x 638976 B = 940.6 MB ~ "900 MB"
  EXPECT_DOUBLE_EQ(ipu2->available_memory_proportion(), 0.6);
  EXPECT_EQ(LoadDeviceProfile("ipu1")->tiles_per_ipu(), 1216);
  EXPECT_DOUBLE_EQ(LoadDeviceProfile("ipu21")->peak_fp16_flops_per_s(), 350e12);
  EXPECT_EQ(LoadDeviceProfile("nope").status().code(),
            absl::StatusCode::kNotFound);
  // A file may start from a built-in and change a field.
  testing::TempDir dir;
  std::ofstream(dir.path() / "small.textproto")
      << "base: \"ipu2\"\nbytes_per_tile: 60000\n";
  auto small = LoadDeviceProfile((dir.path() / "small.textproto").string());
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(small->bytes_per_tile(), 60000);
  EXPECT_EQ(small->tiles_per_ipu(), 1472);  // from ipu2
  EXPECT_EQ(small->op_classes_size(), 8);   // ipu2's op classes
  // A field set to 0 overrides the base's value too.
  std::ofstream(dir.path() / "zero.textproto")
      << "base: \"ipu2\"\nop_overhead_s: 0\n";
  auto zero = LoadDeviceProfile((dir.path() / "zero.textproto").string());
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ(zero->op_overhead_s(), 0);
  EXPECT_GT(LoadDeviceProfile("ipu2")->op_overhead_s(), 0);
  std::ofstream(dir.path() / "typo.textproto") << "tiles_per_ipu: x\n";
  EXPECT_THAT(LoadDeviceProfile((dir.path() / "typo.textproto").string())
                  .status()
                  .message(),
              ::testing::HasSubstr("line 1:16: Expected integer"));
  proto::DeviceProfile bad = ToyChip();
  bad.set_available_memory_proportion(1.5);
  EXPECT_THAT(
      ValidateDeviceProfile(bad).message(),
      ::testing::HasSubstr("available_memory_proportion must be in [1e-6, 1]"));
  bad = ToyChip();
  bad.set_peak_fp32_flops_per_s(std::numeric_limits<double>::infinity());
  EXPECT_THAT(
      ValidateDeviceProfile(bad).message(),
      ::testing::HasSubstr("peak_fp32_flops_per_s must be in 1e6..1e18"));
}

}  // namespace
}  // namespace autoshard
