// Note [Host chain bound] (solver/bound/host_bound.h) against a hand
// computation and brute force (issue 31).
#include "solver/bound/host_bound.h"

#include <cmath>
#include <limits>
#include <optional>
#include <random>

#include "gtest/gtest.h"
#include "solver/strategies/constraints.h"
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

// Note [Host chain bound] by hand: a -> b -> c taking 6, 1, 5 s on the
// IPU and 100, 2, 100 s on the host, no bytes, 1 IPU and 1 host. b is cheap
// on the host but between a and c, and one IPU cannot run both sides of it:
// the best plan runs all on the IPU, 12 s (the host taking a or c is 100
// s). The work bound spreads b's 1 s and part of a's onto the host: T >=
// 12 - 1 - 0.06 (T - 2), 10.49 s. The chain bound: the ideals' values are
// 0, 6, 7, 12; for T < 12 one IPU step from 0 reaches 7 at most, and the
// host's step (X_h(T) = 1 + 0.06 (T - 2) < 1.6 s of IPU time) cannot close
// the 5 s left, nor open the chain (no value in (0, 1.6]): 12 s.
TEST(HostChainBoundTest, SeesTheNodeBetweenTwoIpuStages) {
  ShardingProblem p =
      MakeTestProblem(3, {{0, 1}, {1, 2}}, {0, 0, 0}, {0, 0, 0});
  p.node_time_s = {6, 1, 5};
  p.activation_bytes = {0, 0, 0};
  p.largest_output_bytes = p.activation_bytes;
  RefreshTensors(&p);
  p.copies_through_host = true;
  p.num_host_devices = 1;
  p.host_time_s = {100, 2, 100};
  DeviceModel model(p, ToyChip(1000000000), Precision::kFp32);
  EXPECT_NEAR(BestWithHost(p, model, 1).second, 12, 1e-9);
  EXPECT_NEAR(HostChainBound(p, model, 1, 10.49, 12, 1000), 12, 1e-9);
  // With 2 IPUs b may sit on the host between them: {a} | host {b} | {c},
  // 6 s, and the bound is 6 too (one IPU step reaches 6 or 7 only at T >= 6).
  EXPECT_NEAR(BestWithHost(p, model, 2).second, 6, 1e-9);
  EXPECT_NEAR(HostChainBound(p, model, 2, 0, 6, 1000), 6, 1e-9);
  // Too many ideals for the cap: the bound given.
  EXPECT_EQ(HostChainBound(p, model, 1, 10.49, 12, 2), 10.49);
}

// Random DAGs with a host (as MatchesBruteForce's, memory left out, tensors
// of at most 800 B): the chain bound never exceeds brute force's best, and
// often comes within 0.1% of it (it leaves the copies out).
TEST(HostChainBoundTest, NeverAboveBruteForce) {
  std::mt19937 rng(2020);
  std::uniform_real_distribution<double> unit(0, 1);
  int compared = 0, tight = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int n = 6 + trial % 2, k = 1 + (trial / 2) % 3;
    ShardingProblem p = RandomDag(rng, n);  // <= 800 B: copies ~1e-6 s
    p.copies_through_host = true;
    p.num_host_devices = 1 + trial % 3 / 2;
    p.host_time_s.assign(n, -1);
    for (int v = 0; v < n; ++v)
      if (unit(rng) < 0.7) p.host_time_s[v] = std::floor(unit(rng) * 80) * 0.1;
    DeviceModel model(p, ToyChip(1000000000), Precision::kFp32);
    const double any = BestWithHost(p, model, k).second;
    if (!(any < kInf)) continue;
    ++compared;
    const double bound = HostChainBound(p, model, k, 0, any, 100000);
    EXPECT_LE(bound, any * (1 + 1e-9)) << trial;
    tight += bound >= any * (1 - 1e-3) ? 1 : 0;
  }
  // 5 of them with this seed: it leaves out copies, subset order and full
  // IPUs, so mostly it is well below.
  EXPECT_GT(compared, 40);
  EXPECT_GE(tight, 5) << tight;
}

// The merged values (solve's path when the problem's lattice is too
// large): random DAGs with a colocate group of two nodes and free sinks (no
// consumer, one producer, no time on either device) joined to their
// producers' groups, as solve's GroupFreeSinks does, then ContractGroups;
// the chain bound on the merged problem's values never exceeds brute
// force's best over the problem itself (its colocate group kept, the sinks
// free).
TEST(HostChainBoundTest, MergedValuesNeverAboveBruteForce) {
  std::mt19937 rng(2031);
  std::uniform_real_distribution<double> unit(0, 1);
  int compared = 0, with_sinks = 0, positive = 0;
  for (int trial = 0; trial < 80; ++trial) {
    const int n = 6 + trial % 2, k = 1 + (trial / 2) % 3;
    ShardingProblem p = RandomDag(rng, n);
    p.copies_through_host = true;
    p.num_host_devices = 1 + trial % 3 / 2;
    p.host_time_s.assign(n, -1);
    for (int v = 0; v < n; ++v)
      if (unit(rng) < 0.7) p.host_time_s[v] = std::floor(unit(rng) * 80) * 0.1;
    const int32_t a = static_cast<int32_t>(unit(rng) * n);
    const int32_t b = (a + 1 + static_cast<int32_t>(unit(rng) * (n - 1))) % n;
    p.colocate_group.assign(n, -1);
    p.colocate_group[a] = p.colocate_group[b] = 0;
    p.colocate_names = {"g"};
    p.node_time_s.assign(n, -1);
    ShardingProblem grouped = p;
    bool sinks = false;
    for (int32_t v = 0; v < n; ++v) {
      if (!p.consumers[v].empty() || p.producers[v].size() != 1 ||
          p.colocate_group[v] >= 0 || unit(rng) < 0.3) {
        continue;
      }
      p.node_time_s[v] = grouped.node_time_s[v] = 0;
      p.host_time_s[v] = grouped.host_time_s[v] = 0;
      const int32_t u = p.producers[v][0];
      if (grouped.colocate_group[u] < 0) {
        grouped.colocate_group[u] =
            static_cast<int32_t>(grouped.colocate_names.size());
        grouped.colocate_names.push_back(p.names[u]);
      }
      grouped.colocate_group[v] = grouped.colocate_group[u];
      sinks = true;
    }
    DeviceModel model(p, ToyChip(1000000000), Precision::kFp32);
    DeviceModel grouped_model(grouped, ToyChip(1000000000), Precision::kFp32);
    const std::optional<Coarsened> merged =
        ContractGroups(grouped, grouped_model, k);
    if (!merged) continue;
    DeviceModel merged_model(merged->problem, ToyChip(1000000000),
                             Precision::kFp32);
    const double any = BestWithHost(p, model, k).second;
    if (!(any < kInf)) continue;
    ++compared;
    with_sinks += sinks ? 1 : 0;
    const double bound = HostChainBound(p, model, k, 0, any, 100000,
                                        &merged->problem, &merged_model);
    EXPECT_LE(bound, any * (1 + 1e-9)) << trial;
    positive += bound > 0 ? 1 : 0;
  }
  EXPECT_GT(compared, 40);
  EXPECT_GT(with_sinks, 10) << with_sinks;
  EXPECT_GT(positive, 30) << positive;
}

}  // namespace
}  // namespace autoshard
