#include "solver/strategies/blocks/block_dp.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "solver/strategies/blocks/block_chain.h"
#include "solver/strategies/ideal_lattice.h"
#include "solver/strategies/optimal_strategy.h"
#include "solver/strategies/sharding_points.h"
#include "tests/brute_force.h"
#include "tests/test_problems.h"

namespace autoshard {
namespace {

using testing::BestMonotone;
using testing::JudgeSplit;
using testing::MakeTestProblem;
using testing::ToyChip;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Note [Segment chain]'s DP only (never the block chain), its first chain
// cut into segments of at most `ideals` ideals and `nodes` nodes; Note
// [Deeper segment chains] off until a test turns it on.
BlockDpOptions SegmentedOnly(int64_t ideals, int32_t nodes) {
  BlockDpOptions options;
  options.segmented = true;
  options.min_repeats = 1000;  // never the block chain
  options.segment_chain.max_ideals_per_segment = ideals;
  options.segment_chain.max_nodes_per_segment = nodes;
  return options;
}

// Eight 1 s nodes in a chain (toy chip: 1 GFLOP/s, 1 GB/s links, no fixed
// copy cost), 16 B tensors: each copy 16 ns. Every node is a cut point:
// 8 segments, the first (no tensor in) and last (none out) of their own
// kinds, the 6 between one kind.
ShardingProblem EightNodeChain() {
  std::vector<std::pair<int, int>> edges;
  for (int i = 0; i + 1 < 8; ++i) edges.emplace_back(i, i + 1);
  return MakeTestProblem(8, edges, std::vector<int64_t>(8, 0),
                         std::vector<double>(8, 1e9));
}

TEST(BlockChainTest, FindsTheCutsOfAChain) {
  const ShardingProblem p = EightNodeChain();
  const DeviceModel model(p, ToyChip(), Precision::kFp32);
  const BlockChain chain = FindBlockChain(p, model, 1000, 1);
  EXPECT_TRUE(chain.complete);
  EXPECT_EQ(chain.segments.size(), 8u);
  EXPECT_EQ(chain.lattices.size(), 3u);
  EXPECT_EQ(chain.longest_run, 6);
  EXPECT_EQ(chain.ideals, 16);  // {∅, the node} per segment
}

TEST(BlockDpTest, ChainOfEightOntoThree) {
  // By hand: 3 + 2 + 3 nodes, stage times 3 s + 16 ns, 2 s + 32 ns,
  // 3 s + 16 ns: bottleneck 3.000000016 s (3 + 3 + 2 puts 3 nodes and two
  // copies on the middle IPU: 3.000000032 s).
  const ShardingProblem p = EightNodeChain();
  const DeviceModel model(p, ToyChip(), Precision::kFp32);
  BlockDpOptions options;
  options.relative_precision = 1e-12;
  const BlockDpResult r = BlockDp(p, model, 3, 0, kInf, options);
  ASSERT_TRUE(r.ran);
  EXPECT_TRUE(r.complete);
  EXPECT_NEAR(r.bound_s, 3.000000016, 1e-10);
  ASSERT_EQ(r.ipu.size(), 8u);
  EXPECT_EQ(r.ipu, (std::vector<int32_t>{0, 0, 0, 1, 1, 2, 2, 2}));
  EXPECT_NEAR(model.EvaluatePerformance(r.ipu, 3, 1).bottleneck_s, 3.000000016,
              1e-12);
}

TEST(BlockDpTest, NoRepetitionNoRun) {
  // Two branches between n0 and n5: no cut point, one segment.
  const ShardingProblem p = testing::TwoBranches();
  const DeviceModel model(p, ToyChip(), Precision::kFp32);
  const BlockDpResult r = BlockDp(p, model, 2, 0, kInf, BlockDpOptions());
  EXPECT_FALSE(r.ran);
  EXPECT_TRUE(r.ipu.empty());
}

// A random branching block of b (4 or 5) nodes repeated `blocks` times,
// with a head node before and a tail node after, like an attention layer:
// local nodes 0..b-3 ("Q/K/V") all read the previous block's last node (the
// cut), some read each other; node b-2 reads a nonempty subset of them;
// the last node b-1 reads b-2, every node nobody else reads, and with
// probability 1/2 the cut itself (a residual edge skipping the would-be cut
// at b-2). Every block has the same FLOPs and bytes.
ShardingProblem RepeatedBlocks(std::mt19937& rng, int b, int blocks) {
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<std::pair<int, int>> local;  // (from, to); from -1: the cut
  const int heads = b - 2;
  for (int j = 0; j < heads; ++j) {
    local.emplace_back(-1, j);
    for (int i = 0; i < j; ++i)
      if (unit(rng) < 0.25) local.emplace_back(i, j);
  }
  bool any = false;
  for (int i = 0; i < heads; ++i) {
    if (unit(rng) < 0.6 || (i == heads - 1 && !any)) {
      local.emplace_back(i, b - 2);
      any = true;
    }
  }
  local.emplace_back(b - 2, b - 1);
  if (unit(rng) < 0.5) local.emplace_back(-1, b - 1);
  for (int i = 0; i + 1 < b; ++i) {
    const bool read = std::any_of(local.begin(), local.end(),
                                  [&](auto e) { return e.first == i; });
    if (!read) local.emplace_back(i, b - 1);
  }
  std::vector<double> flops(b);
  std::vector<int64_t> bytes(b), weights(b);
  for (int j = 0; j < b; ++j) {
    flops[j] = std::floor(unit(rng) * 50) * 1e8;
    bytes[j] = 4 * (1 + static_cast<int64_t>(unit(rng) * 2e8));
    weights[j] = unit(rng) < 0.5 ? 0 : static_cast<int64_t>(unit(rng) * 2000);
  }
  const int n = 2 + b * blocks;
  std::vector<std::pair<int, int>> edges;
  std::vector<double> all_flops{std::floor(unit(rng) * 50) * 1e8};
  std::vector<int64_t> all_weights{0},
      all_bytes{4 * (1 + static_cast<int64_t>(unit(rng) * 2e8))};
  for (int k = 0; k < blocks; ++k) {
    const int base = 1 + k * b;
    for (auto [from, to] : local) {
      std::pair<int, int> e{from < 0 ? base - 1 : base + from, base + to};
      if (std::find(edges.begin(), edges.end(), e) == edges.end())
        edges.push_back(e);
    }
    all_flops.insert(all_flops.end(), flops.begin(), flops.end());
    all_weights.insert(all_weights.end(), weights.begin(), weights.end());
    all_bytes.insert(all_bytes.end(), bytes.begin(), bytes.end());
  }
  edges.emplace_back(n - 2, n - 1);
  all_flops.push_back(std::floor(unit(rng) * 50) * 1e8);
  all_weights.push_back(0);
  all_bytes.push_back(16);
  ShardingProblem p = MakeTestProblem(n, edges, all_weights, all_flops);
  p.activation_bytes = all_bytes;
  p.largest_output_bytes = all_bytes;
  testing::RefreshTensors(&p);
  return p;
}

// A random DAG (tests/brute_force.h: mid-graph sources and sinks, edges
// skipping nodes) whose sources, each with probability 1/2, become passive
// constants (no FLOPs).
ShardingProblem DagWithConstants(std::mt19937& rng, int n) {
  std::uniform_real_distribution<double> unit(0, 1);
  ShardingProblem p = testing::RandomDag(rng, n, 4e8);
  for (int v = 0; v < n; ++v) {
    if (p.producers[v].empty() && !p.consumers[v].empty() && unit(rng) < 0.5) {
      p.is_constant[v] = 1;
      p.flops[v] = 0;
    }
  }
  return p;
}

// The ideals of `p`'s lattice nodes (all but the passive constants), the
// empty one and the whole included, by enumeration in topological order:
// a node may join only after its lattice producers.
int64_t BruteForceIdeals(const ShardingProblem& p) {
  const std::vector<uint8_t> passive = PassiveConstants(p);
  std::vector<uint8_t> in(p.num_nodes(), 0);
  std::function<int64_t(int)> count = [&](int v) -> int64_t {
    if (v == p.num_nodes()) return 1;
    if (passive[v]) return count(v + 1);
    int64_t total = count(v + 1);  // v left out
    bool ready = true;
    for (int32_t u : p.producers[v]) ready &= passive[u] || in[u];
    if (ready) {
      in[v] = 1;
      total += count(v + 1);
      in[v] = 0;
    }
    return total;
  };
  return count(0);
}

// The chain's positions are the graph's ideals: Σ per segment of its
// lattice's ideals counts each cut twice (the full ideal of a segment and
// the empty one of the next), so distinct = ideals - (segments - 1).
TEST(BlockChainTest, PositionsAreTheIdealsOfBranchingAndRandomGraphs) {
  std::mt19937 rng(31);
  int multi_segment = 0, random_multi = 0;
  for (int trial = 0; trial < 80; ++trial) {
    const bool random = trial % 2 == 1;
    const ShardingProblem p =
        random ? DagWithConstants(rng, 8 + static_cast<int>(rng() % 7))
               : RepeatedBlocks(rng, 4 + static_cast<int>(rng() % 2),
                                2 + static_cast<int>(rng() % 3));
    const DeviceModel model(p, ToyChip(), Precision::kFp32);
    const BlockChain chain = FindBlockChain(p, model, 100000, 1);
    ASSERT_TRUE(chain.complete) << "trial " << trial;
    const int64_t segments = static_cast<int64_t>(chain.segments.size());
    EXPECT_EQ(chain.ideals - (segments - 1), BruteForceIdeals(p))
        << "trial " << trial;
    multi_segment += segments > 1 ? 1 : 0;
    random_multi += random && segments > 1 ? 1 : 0;
  }
  // Not vacuous: most graphs have several segments, some random ones too.
  EXPECT_GT(multi_segment, 45);
  EXPECT_GT(random_multi, 5);
}

// The bound on random DAGs with passive constants: never above the best
// monotone split onto k IPUs (brute force), and the plan a valid monotone
// split.
TEST(BlockDpTest, BoundBelowBruteForceOnRandomDagsWithConstants) {
  std::mt19937 rng(44);
  int ran = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int k = 2 + static_cast<int>(rng() % 2);
    const ShardingProblem p =
        DagWithConstants(rng, k == 2 ? 11 : 9);  // k^n brute force
    const DeviceModel model(p, ToyChip(), Precision::kFp32);
    BlockDpOptions options;
    options.min_repeats = 1;
    options.relative_precision = 1e-6;
    const BlockDpResult r = BlockDp(p, model, k, 0, kInf, options);
    if (!r.ran) continue;
    ++ran;
    const double any = BestMonotone(p, model, k).second;
    EXPECT_LE(r.bound_s, any * (1 + 1e-9)) << "trial " << trial;
    if (r.ipu.empty()) continue;
    EXPECT_TRUE(ValidateAssignment(p, Assignment{r.ipu, r.ipu}).ok());
  }
  EXPECT_GT(ran, 10);
}

// The bound against brute force on small graphs of repeated blocks: never
// above the best monotone split onto k IPUs, and (the DP being exact over
// chains of at most k stages) equal to the best over 1..k IPUs to the
// bisection's 1e-4.
TEST(BlockDpTest, BoundIsTheBruteForceOptimumOnRepeatedBlocks) {
  std::mt19937 rng(2028);
  int ran = 0, tight = 0, all_used = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int k = 2 + static_cast<int>(rng() % 2);  // 2..3
    // k^n brute force: 10 or 12 nodes on 2 IPUs, 10 on 3.
    const int b = k == 3 ? 4 : 4 + static_cast<int>(rng() % 2);
    const int blocks = 2;
    const ShardingProblem p = RepeatedBlocks(rng, b, blocks);
    const DeviceModel model(p, ToyChip(), Precision::kFp32);
    double any = kInf, best_upto_k = kInf;
    for (int kk = 1; kk <= k; ++kk) {
      const double v = BestMonotone(p, model, kk).second;
      best_upto_k = std::min(best_upto_k, v);
      if (kk == k) any = v;
    }
    BlockDpOptions options;
    options.min_repeats = 1;  // exact on any chain
    options.relative_precision = 1e-6;
    const BlockDpResult r = BlockDp(p, model, k, 0, kInf, options);
    ASSERT_TRUE(r.ran) << "trial " << trial << ": " << r.note;
    ++ran;
    EXPECT_LE(r.bound_s, any * (1 + 1e-9)) << "trial " << trial;
    EXPECT_GE(r.bound_s, best_upto_k * (1 - 2e-6)) << "trial " << trial;
    tight += r.bound_s * 1.05 > any ? 1 : 0;
    ASSERT_EQ(r.ipu.size(), static_cast<size_t>(p.num_nodes()));
    EXPECT_TRUE(ValidateAssignment(p, Assignment{r.ipu, r.ipu}).ok());
    // With all k stages the plan is the DP's chain: judged at most
    // plan_dp_s, which is the optimum over 1..k IPUs to the bisection's
    // 1e-6, so at most the best onto k.
    if (r.dp_stages == k) {
      ++all_used;
      EXPECT_LE(JudgeSplit(model, r.ipu, k).bottleneck_s,
                r.plan_dp_s * (1 + 1e-12))
          << "trial " << trial;
      EXPECT_LE(r.plan_dp_s, any * (1 + 2e-6)) << "trial " << trial;
    }
  }
  EXPECT_EQ(ran, 60);
  EXPECT_GT(all_used, 30);
  // A 5% larger value would break the bound on these (not a vacuous test).
  EXPECT_GT(tight, 40);
}

// The plan: on graphs where the best monotone split uses every IPU, the
// block DP's split is that optimum (to the bisection's precision).
TEST(BlockDpTest, PlanIsOptimalWhenEveryIpuIsUsed) {
  std::mt19937 rng(7);
  int compared = 0, all_used = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const ShardingProblem p = RepeatedBlocks(rng, 4, 2);  // 10 nodes
    const DeviceModel model(p, ToyChip(), Precision::kFp32);
    const double two = BestMonotone(p, model, 2).second;
    const double three = BestMonotone(p, model, 3).second;
    if (three > two) continue;
    BlockDpOptions options;
    options.min_repeats = 1;
    options.relative_precision = 1e-9;
    const BlockDpResult r = BlockDp(p, model, 3, 0, kInf, options);
    ASSERT_FALSE(r.ipu.empty());
    EXPECT_LE(JudgeSplit(model, r.ipu, 3).bottleneck_s, three * (1 + 1e-8))
        << "trial " << trial;
    ++compared;
    // When the DP's chain has all 3 stages the plan is that chain: its
    // bottleneck is the DP's value, between the bound and plan_dp_s.
    if (r.dp_stages == 3) {
      ++all_used;
      const double judged = JudgeSplit(model, r.ipu, 3).bottleneck_s;
      EXPECT_LE(judged, r.plan_dp_s * (1 + 1e-12)) << "trial " << trial;
      EXPECT_GE(judged, r.bound_s) << "trial " << trial;
    }
  }
  EXPECT_GT(compared, 20);
  EXPECT_GT(all_used, 15);
}

// An unrolled loop of `rounds` rounds whose state is two tensors and whose
// every round reads an input made before the loop (RAFT's update rounds
// read the correlation pyramid): node 0 makes the input B, node 1 a second
// input E that only round 1 reads; round r is
//   a_r <- (B, c_{r-1}) (a_1 <- (B, E)),  b_r <- (a_r, b_{r-1}),
//   d_r <- a_r,  c_r <- (b_r, d_r)
// (b_0 absent), nodes 2 + 4(r-1) .. 1 + 4r as a, b, d, c. No single-node
// cut: B's tensor and b_r's cross every position from a_1 on, and before
// a_1 E is a source. Yet every node before a_r is its ancestor and every
// later node its descendant, and so for c_r: Note [Block chain]'s cut
// points are each a_r and each c_r but the last (the last node ends the
// order), so the segments are [B E a_1] [b_1 d_1 c_1] [a_2] [b_2 d_2 c_2]
// ...: 2 rounds.
ShardingProblem TwoStateLoop(int rounds, const std::vector<double>& flops) {
  std::vector<std::pair<int, int>> edges{{1, 2}};  // E -> a_1
  for (int r = 1; r <= rounds; ++r) {
    const int a = 2 + 4 * (r - 1), b = a + 1, d = a + 2, c = a + 3;
    edges.emplace_back(0, a);
    if (r > 1) edges.emplace_back(a - 1, a);  // c_{r-1} -> a_r
    edges.emplace_back(a, b);
    if (r > 1) edges.emplace_back(b - 4, b);  // b_{r-1} -> b_r
    edges.emplace_back(a, d);
    edges.emplace_back(b, c);
    edges.emplace_back(d, c);
  }
  return MakeTestProblem(2 + 4 * rounds, edges,
                         std::vector<int64_t>(2 + 4 * rounds, 0), flops);
}

TEST(BlockChainTest, CutsAnUnrolledLoopWithTwoStateTensors) {
  const int rounds = 5;
  const ShardingProblem p =
      TwoStateLoop(rounds, std::vector<double>(2 + 4 * rounds, 1e9));
  const DeviceModel model(p, ToyChip(), Precision::kFp32);
  const BlockChain chain = FindBlockChain(p, model, 1000, 1);
  ASSERT_TRUE(chain.complete);
  EXPECT_EQ(chain.segments.size(), static_cast<size_t>(2 * rounds));
  // Ideals: [B E a_1] 5 ({}, {B}, {E}, {B, E}, all), each [a_r] 2 ({},
  // all), each [b_r d_r c_r] 5 ({}, {b}, {d}, {b, d}, all): 10 + 7 per
  // later round, each cut counted twice; the graph's are the first 5, 4
  // more in round 1 and 5 per later round: 4 + 5 rounds.
  EXPECT_EQ(chain.ideals, 10 + 7 * (rounds - 1));
  EXPECT_EQ(chain.ideals - (static_cast<int64_t>(chain.segments.size()) - 1),
            4 + 5 * rounds);
  EXPECT_EQ(chain.ideals - (static_cast<int64_t>(chain.segments.size()) - 1),
            BruteForceIdeals(p));
  // The middle rounds repeat ([a] [b d c] with B read later too).
  EXPECT_GE(chain.longest_run, rounds - 2);
}

// On that loop with random times and bytes, the block DP is the brute-force
// optimum: the tensors made before a segment and read in or after it (B's,
// b_{r-1}'s) are counted as the performance model counts them.
TEST(BlockDpTest, BoundIsTheBruteForceOptimumOnATwoStateLoop) {
  std::mt19937 rng(606);
  std::uniform_real_distribution<double> unit(0, 1);
  int ran = 0, tight = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const int k = 2 + static_cast<int>(rng() % 2);
    const int rounds = k == 2 ? 3 : 2;  // 14 or 10 nodes: k^n brute force
    std::vector<double> flops(2 + 4 * rounds);
    for (double& f : flops) f = std::floor(unit(rng) * 50) * 1e8;
    ShardingProblem p = TwoStateLoop(rounds, flops);
    for (int64_t& b : p.activation_bytes)
      b = 4 * (1 + static_cast<int64_t>(unit(rng) * 2e8));
    p.largest_output_bytes = p.activation_bytes;
    testing::RefreshTensors(&p);
    const DeviceModel model(p, ToyChip(), Precision::kFp32);
    double best_upto_k = kInf;
    for (int kk = 1; kk <= k; ++kk)
      best_upto_k = std::min(best_upto_k, BestMonotone(p, model, kk).second);
    const double any = BestMonotone(p, model, k).second;
    BlockDpOptions options;
    options.min_repeats = 1;
    options.relative_precision = 1e-9;
    const BlockDpResult r = BlockDp(p, model, k, 0, kInf, options);
    ASSERT_TRUE(r.ran) << "trial " << trial << ": " << r.note;
    ASSERT_TRUE(r.exact);
    EXPECT_EQ(r.segments, 2 * rounds);  // the widened cuts' chain
    EXPECT_FALSE(r.single_node_cuts);
    ++ran;
    EXPECT_LE(r.bound_s, any * (1 + 1e-9)) << "trial " << trial;
    EXPECT_GE(r.bound_s, best_upto_k * (1 - 2e-9)) << "trial " << trial;
    tight += r.bound_s * 1.05 > any ? 1 : 0;
  }
  EXPECT_EQ(ran, 30);
  EXPECT_GT(tight, 20);  // a 5% larger value would break the bound
}

// Rounds alike (the same times and bytes each round): the middle rounds'
// segments share one lattice per kind, and the DP over the shared lattices
// is still the brute-force optimum.
TEST(BlockDpTest, SharedKindsOnATwoStateLoopAreTheBruteForceOptimum) {
  std::mt19937 rng(909);
  std::uniform_real_distribution<double> unit(0, 1);
  int shared = 0;
  for (int trial = 0; trial < 8; ++trial) {
    const int rounds = 4;  // 18 nodes onto 2 IPUs: 2^18 brute force
    std::vector<double> round_flops(4), flops;
    std::vector<int64_t> round_bytes(4), bytes;
    for (double& f : round_flops) f = std::floor(unit(rng) * 50) * 1e8;
    for (int64_t& b : round_bytes)
      b = 4 * (1 + static_cast<int64_t>(unit(rng) * 2e8));
    for (int i = 0; i < 2; ++i) {  // B and E
      flops.push_back(std::floor(unit(rng) * 50) * 1e8);
      bytes.push_back(4 * (1 + static_cast<int64_t>(unit(rng) * 2e8)));
    }
    for (int r = 0; r < rounds; ++r) {
      flops.insert(flops.end(), round_flops.begin(), round_flops.end());
      bytes.insert(bytes.end(), round_bytes.begin(), round_bytes.end());
    }
    ShardingProblem p = TwoStateLoop(rounds, flops);
    p.activation_bytes = bytes;
    p.largest_output_bytes = bytes;
    testing::RefreshTensors(&p);
    const DeviceModel model(p, ToyChip(), Precision::kFp32);
    const BlockChain chain = FindBlockChain(p, model, 1000, 1);
    ASSERT_TRUE(chain.complete);
    ASSERT_EQ(chain.segments.size(), 8u);
    // [a_2] and [a_3] alike (B read by a later round too), as are
    // [b_2 d_2 c_2] and [b_3 d_3 c_3]: at most 6 kinds for 8 segments.
    EXPECT_LE(chain.lattices.size(), 6u) << "trial " << trial;
    shared += chain.lattices.size() < chain.segments.size() ? 1 : 0;
    const double best_upto_2 = std::min(BestMonotone(p, model, 1).second,
                                        BestMonotone(p, model, 2).second);
    const double any = BestMonotone(p, model, 2).second;
    BlockDpOptions options;
    options.min_repeats = 1;
    options.relative_precision = 1e-9;
    const BlockDpResult r = BlockDp(p, model, 2, 0, kInf, options);
    ASSERT_TRUE(r.ran && r.exact) << r.note;
    EXPECT_LE(r.bound_s, any * (1 + 1e-9)) << "trial " << trial;
    EXPECT_GE(r.bound_s, best_upto_2 * (1 - 2e-9)) << "trial " << trial;
  }
  EXPECT_EQ(shared, 8);
}

// Note [Segment chain]: segments of at most a few ideals cut the
// topological order into consecutive ranges, every lattice complete, on
// graphs with sink branches (no block chain there).
TEST(SegmentChainTest, SegmentsCutTheTopologicalOrder) {
  std::mt19937 rng(77);
  int split = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const ShardingProblem p = testing::DagWithSinkBranches(
        rng, 10 + static_cast<int>(rng() % 6), 3, 800);
    const DeviceModel model(p, ToyChip(), Precision::kFp32);
    SegmentChainOptions options;
    options.max_ideals_per_segment = 6;
    const BlockChain chain = FindSegmentChain(p, model, options);
    ASSERT_TRUE(chain.complete);
    EXPECT_FALSE(chain.exact);
    std::vector<int32_t> joined;
    int64_t ideals = 0;
    for (size_t s = 0; s < chain.segments.size(); ++s) {
      joined.insert(joined.end(), chain.segments[s].begin(),
                    chain.segments[s].end());
      const SegmentLattice& L = chain.lattices[chain.kind[s]];
      EXPECT_TRUE(L.complete);
      EXPECT_TRUE(L.size() <= 6 || chain.segments[s].size() == 1);
      ideals += L.size();
    }
    EXPECT_EQ(joined, p.topo_order) << "trial " << trial;
    EXPECT_EQ(chain.ideals, ideals);
    split += chain.segments.size() > 1 ? 1 : 0;
  }
  EXPECT_EQ(split, 40);
}

// The segmented DP's plan: a valid monotone split, judged at its DP value
// when it uses every IPU, never faster than brute force, and never slower
// than the slicing DP over the same topological order (whose every prefix
// is a position: Note [Segment chain]).
TEST(BlockDpTest, SegmentedPlanBetweenBruteForceAndTheSlicingDp) {
  std::mt19937 rng(1234);
  int planned = 0, all_used = 0, better = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int k = 2 + static_cast<int>(rng() % 2);
    const ShardingProblem p =
        testing::DagWithSinkBranches(rng, k == 2 ? 12 : 10, 3, 2000000000);
    const DeviceModel model(p, ToyChip(), Precision::kFp32);
    BlockDpOptions options;
    options.segmented = true;
    options.min_repeats = 1000;  // never the block chain
    options.relative_precision = 1e-9;
    options.segment_chain.max_ideals_per_segment = 8;
    const BlockDpResult r = BlockDp(p, model, k, 0, kInf, options);
    ASSERT_TRUE(r.ran) << "trial " << trial << ": " << r.note;
    EXPECT_FALSE(r.exact);
    EXPECT_EQ(r.bound_s, 0);  // proves nothing
    ASSERT_EQ(r.ipu.size(), static_cast<size_t>(p.num_nodes()));
    EXPECT_TRUE(ValidateAssignment(p, Assignment{r.ipu, r.ipu}).ok());
    ++planned;
    const double judged = JudgeSplit(model, r.ipu, k).bottleneck_s;
    EXPECT_GE(judged, BestMonotone(p, model, k).second * (1 - 1e-12));
    const SliceResult sliced = SliceOptimally(
        p, model, TopologicalNodeOrder(p, 1000), k, /*ignore_memory=*/true,
        std::chrono::steady_clock::time_point::max());
    ASSERT_TRUE(sliced.found);
    if (r.dp_stages == k) {
      ++all_used;
      EXPECT_LE(judged, r.plan_dp_s * (1 + 1e-12)) << "trial " << trial;
      EXPECT_LE(judged, sliced.bottleneck_s * (1 + 1e-8)) << "trial " << trial;
      better += judged < sliced.bottleneck_s * (1 - 1e-6) ? 1 : 0;
    }
  }
  EXPECT_EQ(planned, 40);
  EXPECT_GT(all_used, 20);
  EXPECT_GT(better, 0);  // ordering a segment's branches freely pays
}

// Note [Deeper segment chains]: with larger limits FindSegmentChain's cuts
// (the ends of its segments in the topological order) are a subset of
// those with smaller ones, so its positions are a superset.
TEST(SegmentChainTest, LargerLimitsCutASubset) {
  std::mt19937 rng(2026);
  int fewer = 0;
  auto cuts = [](const BlockChain& chain) {
    std::vector<size_t> ends;
    size_t at = 0;
    for (const auto& segment : chain.segments)
      ends.push_back(at += segment.size());
    return ends;
  };
  for (int trial = 0; trial < 40; ++trial) {
    const ShardingProblem p = testing::DagWithSinkBranches(
        rng, 14 + static_cast<int>(rng() % 6), 3, 800);
    const DeviceModel model(p, ToyChip(), Precision::kFp32);
    SegmentChainOptions options;
    options.max_ideals_per_segment = 3;
    options.max_nodes_per_segment = 2;
    std::vector<size_t> last = cuts(FindSegmentChain(p, model, options));
    for (int level = 1; level <= 3; ++level) {
      options.max_ideals_per_segment *= 4;
      options.max_nodes_per_segment *= 2;
      const BlockChain chain = FindSegmentChain(p, model, options);
      ASSERT_TRUE(chain.complete);
      const std::vector<size_t> now = cuts(chain);
      EXPECT_TRUE(
          std::includes(last.begin(), last.end(), now.begin(), now.end()))
          << "trial " << trial << " level " << level;
      fewer += now.size() < last.size() ? 1 : 0;
      last = now;
    }
  }
  EXPECT_GT(fewer, 40);  // the limits matter: most levels cut less
}

// Note [Deeper segment chains]: the deeper chains' plan is a valid
// monotone split, never slower by the DP than the first chain's, never
// faster than brute force, and strictly faster on some graphs; it is found
// even when the first chain has no split within upper_s.
TEST(BlockDpTest, DeeperSegmentChainsNeverSlower) {
  std::mt19937 rng(4321);
  int faster = 0, rescued = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int k = 2 + static_cast<int>(rng() % 2);
    const ShardingProblem p =
        testing::DagWithSinkBranches(rng, k == 2 ? 12 : 10, 3, 2000000000);
    const DeviceModel model(p, ToyChip(), Precision::kFp32);
    BlockDpOptions options = SegmentedOnly(2, 2);
    options.relative_precision = 1e-9;
    const BlockDpResult first = BlockDp(p, model, k, 0, kInf, options);
    ASSERT_TRUE(first.ran) << "trial " << trial << ": " << first.note;
    options.segment_deepenings = 3;
    options.deepening_seconds = 60;
    const BlockDpResult deeper = BlockDp(p, model, k, 0, kInf, options);
    ASSERT_TRUE(deeper.ran) << "trial " << trial << ": " << deeper.note;
    EXPECT_FALSE(deeper.exact);
    ASSERT_EQ(deeper.ipu.size(), static_cast<size_t>(p.num_nodes()));
    EXPECT_TRUE(ValidateAssignment(p, Assignment{deeper.ipu, deeper.ipu}).ok());
    EXPECT_LE(deeper.plan_dp_s, first.plan_dp_s) << "trial " << trial;
    const double judged = JudgeSplit(model, deeper.ipu, k).bottleneck_s;
    EXPECT_GE(judged, BestMonotone(p, model, k).second * (1 - 1e-12));
    if (deeper.dp_stages == k) {
      EXPECT_LE(judged, deeper.plan_dp_s * (1 + 1e-12)) << "trial " << trial;
    }
    if (deeper.plan_dp_s < first.plan_dp_s * (1 - 1e-6)) {
      ++faster;
      EXPECT_GT(deeper.segment_level, 0);
      // Below the first chain's best: it alone plans nothing, the deeper
      // ones do.
      const double upper_s = first.plan_dp_s * (1 - 1e-6);
      options.segment_deepenings = 0;
      EXPECT_TRUE(BlockDp(p, model, k, 0, upper_s, options).ipu.empty());
      options.segment_deepenings = 3;
      const BlockDpResult below = BlockDp(p, model, k, 0, upper_s, options);
      EXPECT_FALSE(below.ipu.empty()) << "trial " << trial;
      rescued += below.ipu.empty() ? 0 : 1;
    } else {
      EXPECT_EQ(deeper.segment_level, 0);
      EXPECT_EQ(deeper.ipu, first.ipu);
    }
  }
  EXPECT_GT(faster, 0);
  EXPECT_EQ(rescued, faster);
}

// At auto's bisection precision (1e-4) a deeper chain is kept only when its
// DP optimum (bisected to 1e-12) is below the first chain's: a chain with
// the same optimum, bisected again from the last end, is not kept for the
// few 1e-4 its end falls (a review: 19 of 200 graphs were, before).
TEST(BlockDpTest, DeeperSegmentChainsKeptOnlyForARealGain) {
  std::mt19937 rng(4321);
  int kept = 0, same = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int k = 2 + static_cast<int>(rng() % 2);
    const ShardingProblem p =
        testing::DagWithSinkBranches(rng, k == 2 ? 12 : 10, 3, 2000000000);
    const DeviceModel model(p, ToyChip(), Precision::kFp32);
    BlockDpOptions options = SegmentedOnly(2, 2);
    options.deepening_seconds = 60;
    options.relative_precision = 1e-12;
    const double first_s = BlockDp(p, model, k, 0, kInf, options).plan_dp_s;
    options.segment_deepenings = 3;
    const double deeper_s = BlockDp(p, model, k, 0, kInf, options).plan_dp_s;
    options.relative_precision = 1e-4;
    const BlockDpResult r = BlockDp(p, model, k, 0, kInf, options);
    if (r.segment_level > 0) {
      ++kept;
      EXPECT_LT(deeper_s, first_s) << "trial " << trial;
    }
    same += deeper_s == first_s ? 1 : 0;
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(same, 0);
}

// No time for a deeper chain (deepening_seconds 0): the first chain's plan.
TEST(BlockDpTest, DeeperSegmentChainsNeedTime) {
  std::mt19937 rng(99);
  const ShardingProblem p =
      testing::DagWithSinkBranches(rng, 12, 3, 2000000000);
  const DeviceModel model(p, ToyChip(), Precision::kFp32);
  BlockDpOptions options = SegmentedOnly(2, 2);
  const BlockDpResult first = BlockDp(p, model, 2, 0, kInf, options);
  options.segment_deepenings = 3;
  options.deepening_seconds = 0;
  const BlockDpResult r = BlockDp(p, model, 2, 0, kInf, options);
  EXPECT_EQ(r.segment_level, 0);
  EXPECT_EQ(r.positions, first.positions);
  EXPECT_EQ(r.ipu, first.ipu);
}

// Note [Deeper segment chains]' budget is positions: the deeper chains
// together hold at most SegmentChainOptions::max_positions (here 1.5x the
// first chain's own count; each alone would fit it on some graphs where
// two together would not).
TEST(BlockDpTest, DeeperSegmentChainsKeepToThePositionsBudget) {
  std::mt19937 rng(515);
  int two_levels = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const ShardingProblem p =
        testing::DagWithSinkBranches(rng, 16, 3, 2000000000);
    const DeviceModel model(p, ToyChip(), Precision::kFp32);
    BlockDpOptions options = SegmentedOnly(2, 2);
    const BlockDpResult first = BlockDp(p, model, 3, 0, kInf, options);
    ASSERT_TRUE(first.ran) << "trial " << trial << ": " << first.note;
    options.segment_deepenings = 3;
    options.deepening_seconds = 60;
    options.segment_chain.max_positions = first.positions * 3 / 2;
    const BlockDpResult r = BlockDp(p, model, 3, 0, kInf, options);
    EXPECT_LE(r.deeper_positions, options.segment_chain.max_positions)
        << "trial " << trial;
    EXPECT_LE(r.plan_dp_s, first.plan_dp_s) << "trial " << trial;
    two_levels += r.deeper_positions > first.positions ? 1 : 0;
  }
  EXPECT_GT(two_levels, 0);
}

// A review's counter-example: four parallel 3-node chains between a source
// and a sink, 258 ideals (the empty one, the source with any prefix of each
// chain: 4^4, and the whole graph). With 100 ideals per segment allowed and
// 80 positions, the whole range (over 100) is split in two, whose lattices
// hold 70 positions together: a complete chain. stop_at_positions_left
// (only the deeper chains set it) gives it up instead, as the whole
// range's lattice passes the 80 positions left.
TEST(SegmentChainTest, SplitRangesFitThePositionsLeft) {
  std::vector<std::pair<int, int>> edges;
  for (int c = 0; c < 4; ++c) {
    const int h = 1 + 3 * c;
    edges.push_back({0, h});
    edges.push_back({h, h + 1});
    edges.push_back({h + 1, h + 2});
    edges.push_back({h + 2, 13});
  }
  const ShardingProblem p = MakeTestProblem(
      14, edges, std::vector<int64_t>(14, 0), std::vector<double>(14, 1e9));
  const DeviceModel model(p, ToyChip(), Precision::kFp32);
  SegmentChainOptions options;
  options.max_ideals_per_segment = 100;
  options.max_positions = 80;
  const BlockChain chain = FindSegmentChain(p, model, options);
  EXPECT_TRUE(chain.complete);
  EXPECT_EQ(chain.segments.size(), 2u);
  EXPECT_EQ(chain.ideals, 70);
  options.stop_at_positions_left = true;
  EXPECT_FALSE(FindSegmentChain(p, model, options).complete);
}

}  // namespace
}  // namespace autoshard
