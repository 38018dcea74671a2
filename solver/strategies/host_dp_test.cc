// The ideal DP with host devices (issue 31; Note [Host devices in the ideal
// DP] in ideal_dp.cc) against hand computations and brute force.
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "solver/strategies/constraints.h"
#include "solver/strategies/ideal_dp.h"
#include "tests/brute_force.h"
#include "tests/test_problems.h"

namespace autoshard {
namespace {

using ::autoshard::testing::BestWithHost;
using ::autoshard::testing::MakeTestProblem;
using ::autoshard::testing::RandomDag;
using ::autoshard::testing::RefreshTensors;
using ::autoshard::testing::ToyChip;

constexpr double kInf = std::numeric_limits<double>::infinity();

// a -> b -> c on 1 IPU and 1 host: a, b, c take 3, 3, 1 s on the IPU, 4,
// 100, 100 s on the host; each output is 1e8 B, 0.1 s over the toy link.
// The IPU alone: 7 s. a on the host: the IPU runs b and c and receives a's
// output, 3 + 1 + 0.1 = 4.1 s; the host 4 s (it pays no copy): 4.1 s. Any
// other split puts b or c on the host (100 s).
ShardingProblem Chain() {
  ShardingProblem p =
      MakeTestProblem(3, {{0, 1}, {1, 2}}, {0, 0, 0}, {0, 0, 0});
  p.node_time_s = {3, 3, 1};
  p.activation_bytes = {100000000, 100000000, 100000000};
  p.largest_output_bytes = p.activation_bytes;
  RefreshTensors(&p);
  p.copies_through_host = true;
  p.num_host_devices = 1;
  p.host_time_s = {4, 100, 100};
  return p;
}

TEST(HostDpTest, PutsTheFirstNodeOnTheHost) {
  ShardingProblem p = Chain();
  DeviceModel model(p, ToyChip(1000000000), Precision::kFp32);
  const IdealDpResult r = IdealDpHostSplit(p, model, 1, kInf, {});
  ASSERT_TRUE(r.complete && r.found);
  EXPECT_NEAR(r.bottleneck_s, 4.1, 1e-9);
  // Chain order: the host (position 0) then the IPU (position 1).
  EXPECT_EQ(r.ipu, (std::vector<int32_t>{0, 1, 1}));
  EXPECT_EQ(r.host_positions, (std::vector<int32_t>{0}));
  const IdealDpResult bound = IdealDpHostBound(p, model, 1, kInf, {});
  ASSERT_TRUE(bound.complete && bound.found);
  EXPECT_NEAR(bound.bottleneck_s, 4.1, 1e-9);
  // No host device: the IPU alone, 7 s.
  p.num_host_devices = 0;
  const IdealDpResult alone = IdealDpHostSplit(p, model, 1, kInf, {});
  ASSERT_TRUE(alone.found);
  EXPECT_NEAR(alone.bottleneck_s, 7, 1e-9);
  EXPECT_TRUE(alone.host_positions.empty());
}

// A host_only node must go to the host: c host_only puts c there (100 s);
// with c's host time 2 s instead, the IPU runs a and b and sends b's output
// (3 + 3 + 0.1 = 6.1 s), the host c (2 s): 6.1 s.
TEST(HostDpTest, HostOnlyNodesRunOnTheHost) {
  ShardingProblem p = Chain();
  p.host_time_s = {4, 100, 2};
  p.host_only = {0, 0, 1};
  DeviceModel model(p, ToyChip(1000000000), Precision::kFp32);
  const IdealDpResult r = IdealDpHostSplit(p, model, 1, kInf, {});
  ASSERT_TRUE(r.complete && r.found);
  EXPECT_NEAR(r.bottleneck_s, 6.1, 1e-9);
  EXPECT_EQ(r.ipu, (std::vector<int32_t>{0, 0, 1}));
  EXPECT_EQ(r.host_positions, (std::vector<int32_t>{1}));
}

// allowed_ipus with a host (brute force and DP): Chain() on 2 IPUs and the
// host. Free: a on the host (4 s), b on IPU 0 (3 + 0.1 in + 0.1 out =
// 3.2 s), c on IPU 1 (1 + 0.1 = 1.1 s): 4 s, as no split without the host
// beats 4.1 s ({a} | {b, c}: 3.1 and 4.1) and b or c on the host takes
// 100 s. With b allowed on IPU 1 only, IPU 0 comes before b in the chain
// and needs a node: only a can go there, so a leaves the host: {a} | {b,
// c}, 4.1 s. (Brute force that ignored allowed_ipus put b on "IPU 1" after
// c on "IPU 0": 4 s.) With a allowed on IPU 1 only, IPU 0 would have to
// run a node before a, the source: no split.
TEST(HostDpTest, AllowedIpusWithAHost) {
  ShardingProblem p = Chain();
  DeviceModel model(p, ToyChip(1000000000), Precision::kFp32);
  EXPECT_NEAR(BestWithHost(p, model, 2).first, 4, 1e-9);
  IdealDpResult r = IdealDpHostSplit(p, model, 2, kInf, {});
  ASSERT_TRUE(r.complete && r.found);
  EXPECT_NEAR(r.bottleneck_s, 4, 1e-9);
  p.allowed_ipus = {ShardingProblem::kAnyIpu, uint64_t{1} << 1,
                    ShardingProblem::kAnyIpu};
  EXPECT_NEAR(BestWithHost(p, model, 2).first, 4.1, 1e-9);
  r = IdealDpHostSplit(p, model, 2, kInf, {});
  ASSERT_TRUE(r.complete && r.found);
  EXPECT_NEAR(r.bottleneck_s, 4.1, 1e-9);
  EXPECT_EQ(r.ipu, (std::vector<int32_t>{0, 1, 1}));
  EXPECT_TRUE(r.host_positions.empty());
  p.allowed_ipus = {uint64_t{1} << 1, ShardingProblem::kAnyIpu,
                    ShardingProblem::kAnyIpu};
  EXPECT_EQ(BestWithHost(p, model, 2).first, kInf);
  r = IdealDpHostSplit(p, model, 2, kInf, {});
  EXPECT_TRUE(r.complete);
  EXPECT_FALSE(r.found);
}

// Random DAGs of 6 nodes on 2 or 3 IPUs and 1 host device, one or two
// nodes allowed on one IPU only: the DP's plan and bound are brute force's.
TEST(HostDpTest, MatchesBruteForceWithAllowedIpus) {
  std::mt19937 rng(3131);
  std::uniform_real_distribution<double> unit(0, 1);
  int compared = 0, restricted_host = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 6, k = 2 + trial % 2;
    ShardingProblem p = RandomDag(rng, n, 4000000);
    p.copies_through_host = true;
    p.num_host_devices = 1;
    p.host_time_s.assign(n, -1);
    for (int v = 0; v < n; ++v)
      if (unit(rng) < 0.8) p.host_time_s[v] = std::floor(unit(rng) * 80) * 0.1;
    p.allowed_ipus.assign(n, ShardingProblem::kAnyIpu);
    for (int c = 0; c <= trial % 2; ++c) {
      const int v = static_cast<int>(unit(rng) * n);
      p.allowed_ipus[v] = uint64_t{1} << static_cast<int>(unit(rng) * k);
      restricted_host += p.host_time_s[v] >= 0 ? 1 : 0;
    }
    DeviceModel model(p, ToyChip(1000000000), Precision::kFp32);
    const auto [fitting, any] = BestWithHost(p, model, k);
    const IdealDpResult r = IdealDpHostSplit(p, model, k, kInf, {});
    ASSERT_TRUE(r.complete) << trial;
    EXPECT_EQ(r.found, fitting < kInf) << trial;
    if (r.found) {
      EXPECT_NEAR(r.bottleneck_s, fitting, 1e-9 * fitting) << trial;
      ++compared;
    }
    if (any < kInf) {
      const IdealDpResult bound = IdealDpHostBound(p, model, k, any, {});
      ASSERT_TRUE(bound.complete && bound.found) << trial;
      EXPECT_NEAR(bound.bottleneck_s, any, 1e-9 * any) << trial;
    }
  }
  // Most trials have a split, and restricted nodes that could have run on
  // the host were common.
  EXPECT_GT(compared, 20);
  EXPECT_GT(restricted_host, 10);
}

// Random DAGs of 6 or 7 nodes on 1 or 2 IPUs and 1 host device, some nodes
// without a host time, some host_only, sometimes a colocate group of two:
// the DP's plan is brute force's best (memory binding in half the trials),
// and its bound equals brute force's best when memory is left out.
TEST(HostDpTest, MatchesBruteForce) {
  std::mt19937 rng(31);
  std::uniform_real_distribution<double> unit(0, 1);
  int compared = 0, used_host = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int n = 6 + trial % 2, k = 1 + (trial / 2) % 2;
    ShardingProblem p = RandomDag(rng, n, 4000000);
    p.copies_through_host = true;
    p.num_host_devices = 1;
    p.host_time_s.assign(n, -1);
    p.host_only.assign(n, 0);
    for (int v = 0; v < n; ++v) {
      const double r = unit(rng);
      if (r < 0.7) p.host_time_s[v] = std::floor(unit(rng) * 80) * 0.1;
      if (r < 0.1) p.host_only[v] = 1;
    }
    if (trial % 3 == 0) {
      p.colocate_group.assign(n, -1);
      p.colocate_names = {"g"};
      p.colocate_group[1] = p.colocate_group[n - 2] = 0;
    }
    const bool tight = trial % 2 == 1;
    DeviceModel model(p, ToyChip(tight ? 600 : 1000000000), Precision::kFp32);
    const auto [fitting, any] = BestWithHost(p, model, k);
    const IdealDpResult r = IdealDpHostSplit(p, model, k, kInf, {});
    ASSERT_TRUE(r.complete) << trial;
    EXPECT_EQ(r.found, fitting < kInf) << trial;
    if (r.found) {
      EXPECT_NEAR(r.bottleneck_s, fitting, 1e-9 * fitting) << trial;
      ++compared;
      used_host += r.host_positions.empty() ? 0 : 1;
    }
    if (any < kInf) {
      const IdealDpResult bound = IdealDpHostBound(p, model, k, any, {});
      ASSERT_TRUE(bound.complete && bound.found) << trial;
      EXPECT_NEAR(bound.bottleneck_s, any, 1e-9 * any) << trial;
    }
  }
  // The trials test something: many have a fitting plan (27 of 60 with
  // this seed: tight memory rules out many), and some use the host.
  EXPECT_GT(compared, 20);
  EXPECT_GT(used_host, 5) << used_host;
}

// Note [Free sinks] (sharder/solve_host.cc): a sink of no time with one
// producer, colocated with it and merged (ContractGroups), gives a bound
// once every IPU may be empty: never above brute force's best on the
// problem as it was. Chains of 5 nodes with extra edges, 2 or 3 IPUs and a
// host.
TEST(HostDpTest, FreeSinkMergedBoundWithEmptyIpus) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> unit(0, 1);
  int compared = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const int n = 5, k = 2 + trial % 2;
    std::vector<std::pair<int, int>> edges;
    for (int j = 1; j < n; ++j) {
      edges.push_back({j - 1, j});
      if (j >= 2 && unit(rng) < 0.3) edges.push_back({j - 2, j});
    }
    const int producer = static_cast<int>(unit(rng) * n);
    edges.push_back({producer, n});  // the sink, node n
    ShardingProblem p =
        MakeTestProblem(n + 1, edges, std::vector<int64_t>(n + 1, 0),
                        std::vector<double>(n + 1, 0));
    p.node_time_s.assign(n + 1, 1e-30);  // > 0: 0 would derive one
    p.activation_bytes.assign(n + 1, 0);
    p.host_time_s.assign(n + 1, -1);
    for (int v = 0; v <= n; ++v) {
      p.activation_bytes[v] = static_cast<int64_t>(unit(rng) * 4e8);
      if (v == n) continue;
      p.node_time_s[v] = 1 + std::floor(unit(rng) * 5);
      if (unit(rng) < 0.6) p.host_time_s[v] = std::floor(unit(rng) * 60) * 0.1;
    }
    p.host_time_s[n] = 0;
    p.largest_output_bytes = p.activation_bytes;
    RefreshTensors(&p);
    p.copies_through_host = true;
    p.num_host_devices = 1;
    const DeviceModel model(p, ToyChip(1000000000), Precision::kFp32);
    const double best = BestWithHost(p, model, k).second;
    if (!(best < kInf)) continue;
    ShardingProblem g = p;
    g.colocate_group.assign(n + 1, -1);
    g.colocate_names = {"sink"};
    g.colocate_group[producer] = g.colocate_group[n] = 0;
    const DeviceModel g_model(g, ToyChip(1000000000), Precision::kFp32);
    const std::optional<Coarsened> merged = ContractGroups(g, g_model, k);
    if (!merged) continue;
    const DeviceModel m_model(merged->problem, ToyChip(1000000000),
                              Precision::kFp32);
    IdealDpOptions options;
    options.allow_empty_ipus = true;
    const IdealDpResult r =
        IdealDpHostBound(merged->problem, m_model, k, best, options);
    ASSERT_TRUE(r.complete && r.found) << trial;
    EXPECT_LE(r.bottleneck_s, best * (1 + 1e-9)) << trial;
    ++compared;
  }
  EXPECT_GT(compared, 20);
}

}  // namespace
}  // namespace autoshard
