#include "solver/strategies/coarsen.h"

#include <algorithm>
#include <string>
#include <utility>

#include "solver/strategies/ideal_lattice.h"

namespace autoshard {
namespace {

// The groups of Note [Coarsening], numbered by their first node's position.
std::vector<int32_t> Groups(const ShardingProblem& p, const DeviceModel& model,
                            const std::vector<uint8_t>& passive, double cap_s,
                            bool sources_always_join) {
  const int n = p.num_nodes();
  // Host capability (issue 31): 2 runs only on the host, 1 may run there,
  // 0 may not. Nodes of different kinds never share a group: a host_only
  // node merged with one that has no host time could run nowhere, and a
  // node with host time merged with one without loses the host.
  auto kind = [&](int32_t v) {
    if (!p.host_only.empty() && p.host_only[v]) return 2;
    return !p.host_time_s.empty() && p.host_time_s[v] >= 0 ? 1 : 0;
  };
  std::vector<int32_t> group(n, -1);
  std::vector<double> time;
  std::vector<int32_t> size;
  std::vector<int> group_kind;
  std::vector<int32_t> groups_in, sources;
  for (int32_t v : p.topo_order) {
    groups_in.clear();
    sources.clear();
    if (!passive[v]) {
      for (int32_t u : p.producers[v]) {
        if (passive[u]) continue;
        const bool lone_source =
            size[group[u]] == 1 && p.consumers[u].size() == 1 &&
            kind(u) == kind(v) &&
            std::none_of(p.producers[u].begin(), p.producers[u].end(),
                         [&](int32_t w) { return !passive[w]; });
        (lone_source ? sources : groups_in).push_back(group[u]);
      }
      std::sort(groups_in.begin(), groups_in.end());
      groups_in.erase(std::unique(groups_in.begin(), groups_in.end()),
                      groups_in.end());
    }
    double joined = model.NodeTime(v);
    for (int32_t s : sources) joined += time[s];
    if (!passive[v] && groups_in.size() == 1 &&
        group_kind[groups_in[0]] == kind(v) &&
        time[groups_in[0]] + joined <= cap_s) {
      const int32_t g = groups_in[0];
      group[v] = g;
    } else if (!passive[v] && groups_in.empty() && !sources.empty() &&
               joined <= cap_s) {
      group[v] = sources[0];
      joined -= time[sources[0]];  // counted already
    } else {
      // A group of its own (with its lone sources if they always join).
      group[v] = static_cast<int32_t>(time.size());
      time.push_back(0);
      size.push_back(0);
      group_kind.push_back(kind(v));
      if (passive[v] || !sources_always_join) {
        sources.clear();
        joined = model.NodeTime(v);
      }
    }
    const int32_t g = group[v];
    for (int32_t s : sources) {
      if (s == g) continue;
      for (int32_t u : p.producers[v])
        if (!passive[u] && group[u] == s) group[u] = g;
      size[g] += size[s];
      size[s] = 0;
    }
    time[g] += joined;
    size[g] += 1;
  }
  // Renumber densely in the order the groups were made (their first
  // nodes' order: topological, see the Note), the emptied ones dropped.
  std::vector<int32_t> dense(time.size(), -1);
  int32_t next = 0;
  for (size_t g = 0; g < time.size(); ++g)
    if (size[g] > 0) dense[g] = next++;
  for (int32_t& g : group) g = dense[g];
  return group;
}

}  // namespace

Coarsened Coarsen(const ShardingProblem& p, const DeviceModel& model,
                  double cap_s, bool sources_always_join) {
  const std::vector<uint8_t> passive = PassiveConstants(p);
  return CoarsenGroups(
      p, model, Groups(p, model, passive, cap_s, sources_always_join), passive);
}

Coarsened CoarsenGroups(const ShardingProblem& p, const DeviceModel& model,
                        std::vector<int32_t> group_of,
                        const std::vector<uint8_t>& passive) {
  Coarsened c;
  c.group_of = std::move(group_of);
  const int32_t m = 1 + *std::max_element(c.group_of.begin(), c.group_of.end());
  ShardingProblem& q = c.problem;
  q.producers.assign(m, {});
  q.consumers.assign(m, {});
  q.flops.assign(m, 0);
  q.activation_bytes.assign(m, 0);
  q.num_activation_inputs.assign(m, 0);
  q.node_weights.assign(m, {});
  q.weight_size_bytes = p.weight_size_bytes;
  // A group's first load is in its node_time_s already (model.NodeTime);
  // the weights' own load times charge the other IPUs that read them.
  q.weight_loaded_bytes = p.weight_loaded_bytes;
  q.weight_load_s = p.weight_load_s;
  q.names.assign(m, "");
  q.is_constant.assign(m, 0);
  q.node_time_s.assign(m, 0);
  q.code_bytes.assign(m, 0);
  q.output_bytes.assign(m, {});
  q.output_consumers.assign(m, {});
  q.output_is_graph_output.assign(m, {});
  q.input_tensors.assign(m, {});
  q.is_graph_output.assign(m, 0);
  q.copies_through_host = p.copies_through_host;
  // Host devices (issue 31): a group's host time is its members' Σ, none
  // when one has none; it is host_only when one is.
  q.num_host_devices = p.num_host_devices;
  if (!p.host_time_s.empty()) q.host_time_s.assign(m, 0);
  if (!p.host_only.empty()) q.host_only.assign(m, 0);
  for (int32_t v = 0; v < p.num_nodes(); ++v) {
    const int32_t g = c.group_of[v];
    if (!p.host_time_s.empty() && q.host_time_s[g] >= 0)
      q.host_time_s[g] =
          p.host_time_s[v] < 0 ? -1 : q.host_time_s[g] + p.host_time_s[v];
    if (!p.host_only.empty()) q.host_only[g] |= p.host_only[v];
  }
  for (int32_t g = 0; g < m; ++g) q.topo_order.push_back(g);
  for (int32_t v : p.topo_order) {
    const int32_t g = c.group_of[v];
    if (q.names[g].empty()) q.names[g] = p.names[v];
    q.is_constant[g] = passive[v];
    // > 0 so the model keeps it (0 would derive one op's overhead).
    q.node_time_s[g] += std::max(model.NodeTime(v), 1e-30);
    q.code_bytes[g] += model.CodeBytes(v);
    q.flops[g] += p.flops[v];
    q.is_graph_output[g] |= p.is_graph_output[v];
    for (int32_t w : p.node_weights[v]) q.node_weights[g].push_back(w);
    for (int32_t u : p.producers[v])
      if (c.group_of[u] != g) q.producers[g].push_back(c.group_of[u]);
    for (size_t slot = 0; slot < p.output_bytes[v].size(); ++slot) {
      std::vector<int32_t> readers;
      for (int32_t r : p.output_consumers[v][slot])
        if (c.group_of[r] != g) readers.push_back(c.group_of[r]);
      std::sort(readers.begin(), readers.end());
      readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
      if (readers.empty()) continue;
      const int32_t s = static_cast<int32_t>(q.output_bytes[g].size());
      q.output_bytes[g].push_back(p.output_bytes[v][slot]);
      q.output_consumers[g].push_back(readers);
      q.output_is_graph_output[g].push_back(p.output_is_graph_output[v][slot]);
      q.activation_bytes[g] += p.output_bytes[v][slot];
      for (int32_t r : readers) q.input_tensors[r].emplace_back(g, s);
    }
  }
  for (int32_t g = 0; g < m; ++g) {
    auto& in = q.producers[g];
    std::sort(in.begin(), in.end());
    in.erase(std::unique(in.begin(), in.end()), in.end());
    for (int32_t u : in) q.consumers[u].push_back(g);
    q.num_activation_inputs[g] = static_cast<int32_t>(in.size());
    auto& w = q.node_weights[g];
    std::sort(w.begin(), w.end());
    w.erase(std::unique(w.begin(), w.end()), w.end());
  }
  q.largest_output_bytes = q.activation_bytes;
  FillProblemDefaults(&q);
  return c;
}

std::vector<int32_t> Refine(const ShardingProblem& problem,
                            const Coarsened& coarse,
                            const std::vector<int32_t>& group_ipu) {
  std::vector<int32_t> ipu(problem.num_nodes());
  for (int32_t v = 0; v < problem.num_nodes(); ++v)
    ipu[v] = group_ipu[coarse.group_of[v]];
  PlaceConstants(problem, PassiveConstants(problem), &ipu);
  return ipu;
}

}  // namespace autoshard
