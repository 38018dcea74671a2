#include "solver/strategies/search_strategy.h"

#include <utility>
#include <vector>

#include "costmodel/device_model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_problems.h"

namespace autoshard {
namespace {

using ::testing::ElementsAre;

// One tile of `bytes` bytes, 4-byte grains, no op classes (no code bytes),
// so an IPU's bytes are its weights + exchange + peak live activations +
// temporaries, all on the one tile. Every node outputs 16 B (MakeTestProblem).
proto::DeviceProfile OneTile(int64_t bytes, double amp = 0.6) {
  proto::DeviceProfile d;
  d.set_name("one-tile");
  d.set_tiles_per_ipu(1);
  d.set_bytes_per_tile(bytes);
  d.set_peak_fp16_flops_per_s(1e9);
  d.set_peak_fp32_flops_per_s(1e9);
  d.set_link_bytes_per_s(1e9);
  d.set_available_memory_proportion(amp);
  d.set_grain_bytes(4);
  return d;
}

// Every node its own subgraph (ids = node ids).
SubgraphSet OnePerNode(const ShardingProblem& p) {
  return SubgraphSet(p, {.drop_small = false, .every_node_candidate = true});
}

// SearchStrategy over OnePerNode(p) on `num_ipus` OneTile(tile_bytes)
// IPUs in fp32.
absl::StatusOr<SearchResult> SearchOneTile(const ShardingProblem& p,
                                           std::vector<int32_t> start,
                                           int num_ipus, int64_t tile_bytes,
                                           const SearchOptions& options = {}) {
  return SearchStrategy(p, OnePerNode(p), std::move(start), num_ipus,
                        OneTile(tile_bytes), Precision::kFp32, options);
}

int64_t Bytes(const ShardingProblem& p, const proto::DeviceProfile& d,
              const std::vector<int32_t>& ipu, int32_t g) {
  return DeviceModel(p, d, Precision::kFp32)
      .EvaluateMemory(ipu, g)
      .max_tile_bytes;
}

TEST(SearchStrategyTest, RawOverflowsAndOneMoveFixesIt) {
  // n0 -> n1 -> n2 -> n3, weights 40, 30, 10, 10 B. Raw: total 90, target
  // 45: 40 < 45, 40 + 30 >= 45 -> cut after n1: {n0, n1} | {n2, n3}.
  ShardingProblem p = testing::MakeTestProblem(4, {{0, 1}, {1, 2}, {2, 3}},
                                               {40, 30, 10, 10}, {1, 1, 1, 1});
  SubgraphSet set = OnePerNode(p);
  const proto::DeviceProfile chip = OneTile(110);
  // IPU 0: weights 40 + 32 (30 B is 8 grains) + n1's 16 B sent + live 16 + 16
  // at n1's step = 120 > 110. IPU 1: 12 + 12 + 16 received + 32 live = 72.
  EXPECT_EQ(Bytes(p, chip, {0, 0, 1, 1}, 0), 120);
  // Moving n1 (its kid n2 is on IPU 1) to IPU 1: IPU 0 = 40 + 16 + 16 = 72;
  // IPU 1 = 32 + 12 + 12 + 16 + 32 = 104. Both fit.
  EXPECT_EQ(Bytes(p, chip, {0, 1, 1, 1}, 1), 104);
  auto r = SearchStrategy(p, set, {0, 0, 1, 1}, 2, chip, Precision::kFp32, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->fits);
  EXPECT_THAT(r->assignment.ipu, ElementsAre(0, 1, 1, 1));
  EXPECT_EQ(r->candidates, 2);  // the raw split and the one move
  EXPECT_EQ(r->raw_max_tile_bytes, 120);
  EXPECT_EQ(r->max_tile_bytes, 104);
}

TEST(SearchStrategyTest, OnlyAMoveToAParallelBranchFixesIt) {
  // Diamond a -> {b, c} -> d; weights a 40, b 40, c 10, d 60.
  // Start: {a, b} | {c} | {d}.
  ShardingProblem p = testing::MakeTestProblem(
      4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}}, {40, 40, 10, 60}, {1, 1, 1, 1});
  SubgraphSet set = OnePerNode(p);
  const proto::DeviceProfile chip = OneTile(120);
  // IPU 0: 80 weights + 32 sent (a to c, b to d) + 32 live = 144 > 120.
  EXPECT_EQ(Bytes(p, chip, {0, 0, 1, 2}, 0), 144);
  // b to its consumer's IPU 2: 100 weights + 32 received + 32 live = 164.
  EXPECT_EQ(Bytes(p, chip, {0, 2, 1, 2}, 2), 164);
  // b to IPU 1, beside its parallel branch c: 52 + 16 received + 32 sent +
  // 16 live = 116 <= 120; IPU 0 holds a alone: 40 + 16 + 16 = 72.
  EXPECT_EQ(Bytes(p, chip, {0, 1, 1, 2}, 1), 116);
  auto r = SearchStrategy(p, set, {0, 0, 1, 2}, 3, chip, Precision::kFp32, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->fits);
  EXPECT_THAT(r->assignment.ipu, ElementsAre(0, 1, 1, 2));
}

TEST(SearchStrategyTest, VisitedSetStopsCycling) {
  // n0 -> n1 -> n2, 50 B each, 2 IPUs, 60-byte tiles: nothing fits. From
  // {n0, n1} | {n2} the only move is n1 to IPU 1; from there the worst IPU is
  // 1 and its only move, n1 back to IPU 0, was visited: the search ends after
  // 2 splits instead of bouncing until max_candidates.
  ShardingProblem p =
      testing::MakeTestProblem(3, {{0, 1}, {1, 2}}, {50, 50, 50}, {1, 1, 1});
  SearchOptions options;
  options.max_candidates = 1000;
  auto r = SearchOneTile(p, {0, 0, 1}, 2, 60, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->fits);
  EXPECT_EQ(r->candidates, 2);
  EXPECT_DOUBLE_EQ(r->available_memory_proportion, 0.6);
  EXPECT_EQ(r->stop_reason, "no move left");
  // The move puts 100 B of weights on IPU 1 as {n0, n1} did on IPU 0: no
  // closer, so a stall limit of 1 stops there, with the move still queued.
  options.max_stall_candidates = 1;
  r = SearchOneTile(p, {0, 0, 1}, 2, 60, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->candidates, 2);
  EXPECT_EQ(r->stop_reason, "no closer split in 1 candidates");
}

TEST(SearchStrategyTest, NothingFitsThenALowerMemoryProportionDoes) {
  // n0 -> n1, both matmul-class with 1000 B of temporaries, 20 B weights.
  // 100-byte tiles: at proportion 0.6 a temporary takes 60 B of the tile:
  // 20 + 16 exchange + 16 live + 60 = 112 > 100. At 0.3: 82 fits.
  ShardingProblem p = testing::MakeTestProblem(2, {{0, 1}}, {20, 20}, {1, 1});
  p.op_class = {"matmul", "matmul"};
  p.temporary_bytes = {1000, 1000};
  auto r = SearchOneTile(p, {0, 1}, 2, 100);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->fits);
  EXPECT_DOUBLE_EQ(r->available_memory_proportion, 0.3);
  EXPECT_EQ(r->max_tile_bytes, 82);  // costed at 0.3, where it fits
}

TEST(SearchStrategyTest, OptimalPerfPicksTheBestBottleneckOfFittingSplits) {
  // Chain of 4 equal nodes (1e9 FLOPs, 1 s each at 1 GFLOP/s), ample memory.
  // Start {n0, n1, n2} | {n3}: fits, bottleneck 3 s. Balancing moves n2 to
  // IPU 1: 2 s | 2 s, the best.
  ShardingProblem p = testing::MakeTestProblem(
      4, {{0, 1}, {1, 2}, {2, 3}}, {0, 0, 0, 0}, {1e9, 1e9, 1e9, 1e9});
  SearchOptions options;
  options.optimal_perf = true;
  auto r = SearchOneTile(p, {0, 0, 0, 1}, 2, 1000, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->fits);
  EXPECT_THAT(r->assignment.ipu, ElementsAre(0, 0, 1, 1));
  // Without optimal_perf the start, which fits, is the answer.
  auto first = SearchOneTile(p, {0, 0, 0, 1}, 2, 1000);
  ASSERT_TRUE(first.ok());
  EXPECT_THAT(first->assignment.ipu, ElementsAre(0, 0, 0, 1));
  EXPECT_EQ(first->candidates, 1);
}

TEST(SearchStrategyTest, BadStartIsAnError) {
  ShardingProblem p =
      testing::MakeTestProblem(3, {{0, 1}, {1, 2}}, {1, 1, 1}, {1, 1, 1});
  // IPU 1 empty.
  EXPECT_FALSE(SearchOneTile(p, {0, 0, 0}, 2, 100).ok());
  // n0 on IPU 1 feeds n1 on IPU 0: not monotone.
  EXPECT_THAT(SearchOneTile(p, {1, 0, 1}, 2, 100).status().message(),
              ::testing::HasSubstr("not monotone"));
}

TEST(SearchStrategyTest, TheBudgetNeverDropsAFittingSplit) {
  // As RawOverflowsAndOneMoveFixesIt, with room for just the start and one
  // move: the move fits and is returned, though never taken off the queue.
  ShardingProblem p = testing::MakeTestProblem(4, {{0, 1}, {1, 2}, {2, 3}},
                                               {40, 30, 10, 10}, {1, 1, 1, 1});
  SearchOptions options;
  options.max_candidates = 2;
  auto r = SearchOneTile(p, {0, 0, 1, 1}, 2, 110, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->fits);
  EXPECT_THAT(r->assignment.ipu, ElementsAre(0, 1, 1, 1));
}

TEST(SearchStrategyTest, OptimalPerfIsNeverWorseThanItsStart) {
  // n0 (3e9 FLOPs) -> n1, n2, n3 (1e9 each), 1 GFLOP/s; start {n0} | rest:
  // 3 s | 3 s, already the best (n0 alone takes 3 s). Every balance move
  // makes it worse; the start must come back.
  ShardingProblem p = testing::MakeTestProblem(
      4, {{0, 1}, {1, 2}, {2, 3}}, {0, 0, 0, 0}, {3e9, 1e9, 1e9, 1e9});
  SearchOptions options;
  options.optimal_perf = true;
  auto r = SearchOneTile(p, {0, 1, 1, 1}, 2, 1000, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->assignment.ipu, ElementsAre(0, 1, 1, 1));
}

}  // namespace
}  // namespace autoshard
