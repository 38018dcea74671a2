// Brute force for the sharder's property tests: random small DAGs, and the
// best split over every monotone assignment of their nodes.
#ifndef AUTOSHARD_TESTS_BRUTE_FORCE_H_
#define AUTOSHARD_TESTS_BRUTE_FORCE_H_

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "costmodel/device_model.h"
#include "costmodel/plan_evaluation.h"
#include "costmodel/problem.h"
#include "graph/placement.h"
#include "tests/test_problems.h"

namespace autoshard::testing {

// The figures PlanModel reports for a split: fits, and the bottleneck.
struct Judged {
  bool fits = true;
  double bottleneck_s = 0;
};
inline Judged JudgeSplit(const DeviceModel& model,
                         const std::vector<int32_t>& ipu, int k) {
  Judged j;
  for (int d = 0; d < k; ++d) j.fits &= model.EvaluateMemory(ipu, d).fits;
  j.bottleneck_s = model.EvaluatePerformance(ipu, k, 1).bottleneck_s;
  return j;
}

// A random DAG over nodes 0..n-1 (edges only forward), with random compute,
// activation and weight bytes.
inline ShardingProblem RandomDag(std::mt19937& rng, int n,
                                 int64_t max_activation_bytes = 800) {
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<std::pair<int, int>> edges;
  for (int j = 1; j < n; ++j) {
    for (int i = 0; i < j; ++i) {
      if (i == j - 1 ? unit(rng) < 0.7 : unit(rng) < 0.2)
        edges.emplace_back(i, j);
    }
  }
  std::vector<int64_t> weights(n);
  std::vector<double> flops(n);
  for (int i = 0; i < n; ++i) {
    weights[i] = unit(rng) < 0.3 ? 0 : static_cast<int64_t>(unit(rng) * 2000);
    flops[i] = unit(rng) < 0.1 ? 0 : std::floor(unit(rng) * 50) * 1e8;
  }
  ShardingProblem p = MakeTestProblem(n, edges, weights, flops);
  for (int i = 0; i < n; ++i)
    p.activation_bytes[i] =
        4 * (1 + static_cast<int64_t>(unit(rng) * max_activation_bytes / 4));
  p.largest_output_bytes = p.activation_bytes;
  RefreshTensors(&p);
  return p;
}

// A random DAG of `n` nodes (RandomDag's edges and sizes) whose last
// `sinks` nodes are output branches: each reads one earlier node and nothing
// reads it, with a small time (0 or 1e8 FLOP: 0.1 s on the toy chip), so an
// ideal may leave it out for its input's bytes (Note [Late branches],
// solver/bound/cut_bound.h).
inline ShardingProblem DagWithSinkBranches(std::mt19937& rng, int n, int sinks,
                                           int64_t max_activation_bytes) {
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<std::pair<int, int>> edges;
  const int main = n - sinks;
  for (int j = 1; j < main; ++j) {
    for (int i = 0; i < j; ++i) {
      if (i == j - 1 ? unit(rng) < 0.7 : unit(rng) < 0.2)
        edges.emplace_back(i, j);
    }
  }
  for (int s = main; s < n; ++s)
    edges.emplace_back(static_cast<int>(rng() % main), s);
  std::vector<int64_t> weights(n, 0);
  std::vector<double> flops(n);
  for (int i = 0; i < n; ++i)
    flops[i] = i < main ? std::floor(unit(rng) * 50) * 1e8
                        : std::floor(unit(rng) * 2) * 1e8;
  ShardingProblem p = MakeTestProblem(n, edges, weights, flops);
  for (int i = 0; i < n; ++i)
    p.activation_bytes[i] =
        4 * (1 + static_cast<int64_t>(unit(rng) * max_activation_bytes / 4));
  p.largest_output_bytes = p.activation_bytes;
  RefreshTensors(&p);
  return p;
}

// The smallest bottleneck over every monotone assignment of `p`'s nodes
// (given in topological order 0..n-1) onto k IPUs with every IPU used, and
// `keep` true of it when given: {fitting, any}; infinity when there is
// none. Costs k^n evaluations.
inline std::pair<double, double> BestMonotone(
    const ShardingProblem& p, const DeviceModel& model, int k,
    const std::function<bool(const std::vector<int32_t>&)>& keep = nullptr) {
  const int n = p.num_nodes();
  double fitting = std::numeric_limits<double>::infinity(), any = fitting;
  std::vector<int32_t> ipu(n, 0);
  std::function<void(int)> assign = [&](int node) {
    if (node == n) {
      std::vector<bool> used(k, false);
      for (int32_t d : ipu) used[d] = true;
      if (std::find(used.begin(), used.end(), false) != used.end()) return;
      if (keep && !keep(ipu)) return;
      const Judged j = JudgeSplit(model, ipu, k);
      any = std::min(any, j.bottleneck_s);
      if (j.fits) fitting = std::min(fitting, j.bottleneck_s);
      return;
    }
    int32_t lowest = 0;
    for (int32_t producer : p.producers[node])
      lowest = std::max(lowest, ipu[producer]);
    for (int32_t d = lowest; d < k; ++d) {
      ipu[node] = d;
      assign(node + 1);
    }
  };
  assign(0);
  return {fitting, any};
}

// Gives `p` (at least 2 nodes) a weight read by its first node and its
// last: its first node's first weight, else a new one of `bytes`.
inline void ShareAWeightFarApart(ShardingProblem* p, int64_t bytes) {
  const int n = p->num_nodes();
  if (p->node_weights[0].empty()) {
    p->node_weights[0].push_back(
        static_cast<int32_t>(p->weight_size_bytes.size()));
    p->weight_size_bytes.push_back(bytes);
  }
  p->node_weights[n - 1].push_back(p->node_weights[0][0]);
}

// The smallest bottleneck over every plan whose last stage returns to IPU
// 0: every monotone node -> stage map onto stages 0..k with stage j on IPU
// j (j < k) and stage k on IPU 0, IPU k - 1 used (others may be empty),
// costed as such plans are (EvaluatePlacement: a tensor read later on its
// producer's IPU is not copied); with stage0_holds_a_node only those whose
// stage 0 holds a node (Note [Revisit bound]'s plans: with stage 0 empty
// IPU 0 runs one stage, costed as a map that is not monotone, and auto
// returns none); infinity when there is none. Costs (k + 1)^n evaluations.
inline double BestRevisiting(const ShardingProblem& p, const DeviceModel& model,
                             int k, bool stage0_holds_a_node = false) {
  const int n = p.num_nodes();
  double best = std::numeric_limits<double>::infinity();
  Placement a{std::vector<int32_t>(n, 0), std::vector<int32_t>(n, 0)};
  std::function<void(int)> assign = [&](int node) {
    if (node == n) {
      if (a.num_ipus() < k) return;
      if (stage0_holds_a_node &&
          std::find(a.pipeline_stage.begin(), a.pipeline_stage.end(), 0) ==
              a.pipeline_stage.end()) {
        return;
      }
      best = std::min(best,
                      EvaluatePlacement(model, a, 1).performance.bottleneck_s);
      return;
    }
    int32_t lowest = 0;
    for (int32_t producer : p.producers[node])
      lowest = std::max(lowest, a.pipeline_stage[producer]);
    for (int32_t s = lowest; s <= k; ++s) {
      a.pipeline_stage[node] = s;
      a.ipu[node] = s == k ? 0 : s;
      assign(node + 1);
    }
  };
  assign(0);
  return best;
}

// Issue 31's host devices: the smallest bottleneck over every assignment of
// `p`'s nodes to k IPUs (devices 0..k-1, each used) and p.num_host_devices
// host devices (devices k.., any empty) whose used devices can be ordered so
// that every edge goes forward (a pipeline's chain of stages), with each
// colocate group on one device, host_only nodes on a host and nodes without
// a host time or restricted to some IPUs (allowed_ipus) off it. An IPU's
// number is its place among the IPUs in the chain (IPU d before IPU d + 1:
// allowed_ipus names those), its time the model's (copies through host: the
// order of the devices does not change it), a host's Σ host_time_s.
// {fitting, any}; infinity when there is none. Costs (k + h)^n evaluations.
inline std::pair<double, double> BestWithHost(const ShardingProblem& p,
                                              const DeviceModel& model, int k) {
  const int n = p.num_nodes(), devices = k + p.num_host_devices;
  double fitting = std::numeric_limits<double>::infinity(), any = fitting;
  std::vector<int32_t> dev(n, 0);
  auto ordered = [&] {  // Kahn over the devices' quotient graph
    std::vector<std::vector<int>> after(devices);
    std::vector<int> in(devices, 0);
    for (int d = 0; d + 1 < k; ++d) {  // the IPUs in their numbers' order
      after[d].push_back(d + 1);
      ++in[d + 1];
    }
    for (int32_t u = 0; u < n; ++u)
      for (int32_t v : p.consumers[u])
        if (dev[u] != dev[v]) {
          after[dev[u]].push_back(dev[v]);
          ++in[dev[v]];
        }
    std::vector<int> ready;
    for (int d = 0; d < devices; ++d)
      if (in[d] == 0) ready.push_back(d);
    int seen = 0;
    while (!ready.empty()) {
      const int d = ready.back();
      ready.pop_back();
      ++seen;
      for (int e : after[d])
        if (--in[e] == 0) ready.push_back(e);
    }
    return seen == devices;
  };
  std::function<void(int)> assign = [&](int node) {
    if (node == n) {
      std::vector<bool> used(k, false);
      for (int32_t d : dev)
        if (d < k) used[d] = true;
      if (std::find(used.begin(), used.end(), false) != used.end()) return;
      if (!ordered()) return;
      for (int32_t u = 0; u < n; ++u)
        for (int32_t v = 0; v < n; ++v)
          if (!p.colocate_group.empty() && p.colocate_group[u] >= 0 &&
              p.colocate_group[u] == p.colocate_group[v] && dev[u] != dev[v])
            return;
      const std::vector<double> times =
          model.EvaluatePerformance(dev, devices, 1).stage_time_s;
      double bottleneck = 0;
      bool fits = true;
      for (int d = 0; d < k; ++d) {
        bottleneck = std::max(bottleneck, times[d]);
        fits &= model.EvaluateMemory(dev, d).fits;
      }
      std::vector<double> host(devices, 0);
      for (int32_t u = 0; u < n; ++u)
        if (dev[u] >= k) host[dev[u]] += p.host_time_s[u];
      for (double t : host) bottleneck = std::max(bottleneck, t);
      any = std::min(any, bottleneck);
      if (fits) fitting = std::min(fitting, bottleneck);
      return;
    }
    for (int32_t d = 0; d < devices; ++d) {
      const bool on_host = d >= k;
      if (on_host && p.host_time_s[node] < 0) continue;
      if (on_host && !p.allowed_ipus.empty() &&
          p.allowed_ipus[node] != ShardingProblem::kAnyIpu) {
        continue;
      }
      if (!on_host && !p.IpuAllowed(node, d)) continue;
      if (!on_host && !p.host_only.empty() && p.host_only[node]) continue;
      dev[node] = d;
      assign(node + 1);
    }
  };
  assign(0);
  return {fitting, any};
}

}  // namespace autoshard::testing

#endif  // AUTOSHARD_TESTS_BRUTE_FORCE_H_
