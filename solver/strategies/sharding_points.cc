#include "solver/strategies/sharding_points.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace autoshard {

absl::StatusOr<Assignment> ApplyShardingPoints(
    const ShardingProblem& problem, std::vector<ShardingPoint> points) {
  const int n = problem.num_nodes();
  const std::vector<int32_t>& topo_pos = problem.topo_position;
  std::vector<bool> is_point(n, false);
  for (const ShardingPoint& pt : points) {
    if (pt.node < 0 || pt.node >= n) {
      return absl::InvalidArgumentError(
          absl::StrCat("sharding point node id ", pt.node, " is out of range"));
    }
    if (pt.ipu < 0 || pt.pipeline_stage < 0 || pt.ipu >= n ||
        pt.pipeline_stage >= n) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sharding point '", problem.names[pt.node], "': device ", pt.ipu,
          " and stage ", pt.pipeline_stage, " must be in 0..", n - 1,
          " (the model has ", n, " nodes, and every IPU and stage needs one)"));
    }
    if (is_point[pt.node]) {
      return absl::InvalidArgumentError(
          absl::StrCat("node '", problem.names[pt.node],
                       "' is named by two sharding points"));
    }
    is_point[pt.node] = true;
  }
  std::stable_sort(points.begin(), points.end(),
                   [&](const ShardingPoint& a, const ShardingPoint& b) {
                     if (a.pipeline_stage != b.pipeline_stage) {
                       return a.pipeline_stage < b.pipeline_stage;
                     }
                     return topo_pos[a.node] < topo_pos[b.node];
                   });
  Assignment out;
  out.ipu.assign(n, -1);
  out.pipeline_stage.assign(n, -1);
  std::vector<int32_t> claimed_by(n, -1);  // index into points
  std::vector<int32_t> stack;
  int32_t max_ipu = -1, max_stage = -1;
  for (int32_t k = 0; k < static_cast<int32_t>(points.size()); ++k) {
    const ShardingPoint& pt = points[k];
    max_ipu = std::max(max_ipu, pt.ipu);
    max_stage = std::max(max_stage, pt.pipeline_stage);
    if (claimed_by[pt.node] != -1) {
      const ShardingPoint& other = points[claimed_by[pt.node]];
      return absl::InvalidArgumentError(absl::StrCat(
          "sharding point '", problem.names[pt.node], "' (stage ",
          pt.pipeline_stage, ") is an ancestor of sharding point '",
          problem.names[other.node], "' (stage ", other.pipeline_stage,
          "), so its stage would run after a stage that needs it"));
    }
    stack.assign(1, pt.node);
    claimed_by[pt.node] = k;
    while (!stack.empty()) {
      int32_t node = stack.back();
      stack.pop_back();
      out.ipu[node] = pt.ipu;
      out.pipeline_stage[node] = pt.pipeline_stage;
      for (int32_t prod : problem.producers[node]) {
        if (claimed_by[prod] == -1) {
          claimed_by[prod] = k;
          stack.push_back(prod);
        }
      }
    }
  }
  for (int32_t node = 0; node < n; ++node) {
    if (out.ipu[node] == -1) {
      out.ipu[node] = max_ipu + 1;
      out.pipeline_stage[node] = max_stage + 1;
    }
  }
  return out;
}

std::vector<int32_t> StagesOfIpus(const ShardingProblem& problem,
                                  const std::vector<int32_t>& ipu_of_node) {
  int32_t k = 1;
  for (int32_t d : ipu_of_node) k = std::max(k, d + 1);
  std::vector<int32_t> stage(ipu_of_node.size(), 0);
  for (int32_t node : problem.topo_order) {
    int32_t lo = 0;
    for (int32_t p : problem.producers[node]) lo = std::max(lo, stage[p]);
    stage[node] = lo + ((ipu_of_node[node] - lo) % k + k) % k;
  }
  return stage;
}

Assignment SinkConstants(const ShardingProblem& problem,
                         const Assignment& assignment) {
  Assignment out = assignment;
  const int n = problem.num_nodes();
  for (int i = n - 1; i >= 0; --i) {
    const int32_t node = problem.topo_order[i];
    if (!problem.is_constant[node] || problem.consumers[node].empty()) continue;
    int32_t lowest = -1;
    for (int32_t c : problem.consumers[node]) {
      // The earliest stage (the lowest IPU when stages are IPUs): a stage
      // that returns to IPU 0 must not feed an earlier one.
      if (lowest == -1 || out.pipeline_stage[c] < out.pipeline_stage[lowest])
        lowest = c;
    }
    out.ipu[node] = out.ipu[lowest];
    out.pipeline_stage[node] = out.pipeline_stage[lowest];
  }
  std::vector<bool> used(assignment.num_ipus(), false);
  for (int32_t d : out.ipu) used[d] = true;
  for (bool u : used) {
    if (!u) return assignment;
  }
  return out;
}

absl::Status ValidateAssignment(const ShardingProblem& problem,
                                const Assignment& assignment) {
  const int n = problem.num_nodes();
  if (n == 0) return absl::InvalidArgumentError("the graph has no nodes");
  if (static_cast<int>(assignment.ipu.size()) != n ||
      static_cast<int>(assignment.pipeline_stage.size()) != n) {
    return absl::InvalidArgumentError(
        "the assignment does not cover every node");
  }
  for (int32_t node = 0; node < n; ++node) {
    if (assignment.ipu[node] < 0 || assignment.ipu[node] >= n ||
        assignment.pipeline_stage[node] < 0 ||
        assignment.pipeline_stage[node] >= n) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node '", problem.names[node], "' has IPU ", assignment.ipu[node],
          " and stage ", assignment.pipeline_stage[node], ", outside 0..",
          n - 1));
    }
  }
  // Every IPU and every stage from 0 to the highest holds a node.
  for (const auto* values : {&assignment.ipu, &assignment.pipeline_stage}) {
    const int32_t count = *std::max_element(values->begin(), values->end()) + 1;
    std::vector<bool> used(count, false);
    for (int32_t v : *values) used[v] = true;
    std::vector<int32_t> empty;
    for (int32_t v = 0; v < count; ++v) {
      if (!used[v]) empty.push_back(v);
    }
    if (!empty.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(values == &assignment.ipu ? "IPUs " : "pipeline stages ",
                       absl::StrJoin(empty, ", "),
                       " get no nodes; number them without gaps"));
    }
  }
  return ValidateMonotone(problem, assignment);
}

absl::Status ValidateMonotone(const ShardingProblem& problem,
                              const Assignment& assignment) {
  for (int32_t node = 0; node < problem.num_nodes(); ++node) {
    if (assignment.ipu[node] < 0 || assignment.pipeline_stage[node] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node '", problem.names[node], "' has no IPU or pipeline stage"));
    }
    for (int32_t c : problem.consumers[node]) {
      if (assignment.pipeline_stage[c] < assignment.pipeline_stage[node]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "edge '", problem.names[node], "' (stage ",
            assignment.pipeline_stage[node], ") -> '", problem.names[c],
            "' (stage ", assignment.pipeline_stage[c],
            ") goes to an earlier pipeline stage"));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ShardingPoint>> MinimalShardingPoints(
    const ShardingProblem& problem, const Assignment& assignment) {
  if (absl::Status s = ValidateMonotone(problem, assignment); !s.ok()) return s;
  using Group = std::pair<int32_t, int32_t>;  // (stage, ipu)
  std::map<Group, std::vector<int32_t>> sinks;
  for (int32_t node : problem.topo_order) {
    const Group g{assignment.pipeline_stage[node], assignment.ipu[node]};
    bool consumed_in_group = false;
    for (int32_t c : problem.consumers[node]) {
      consumed_in_group |= assignment.pipeline_stage[c] == g.first &&
                           assignment.ipu[c] == g.second;
    }
    auto& list = sinks[g];  // every group gets an entry, even without sinks
    if (!consumed_in_group) list.push_back(node);
  }
  std::vector<ShardingPoint> points;
  if (sinks.empty()) return points;
  // The last group needs no points when the leftover rule puts its nodes
  // there: it is (max IPU + 1, max stage + 1) of the other groups' points.
  const Group last = sinks.rbegin()->first;
  int32_t other_max_ipu = -1, other_max_stage = -1;
  for (const auto& [g, list] : sinks) {
    if (g == last) continue;
    other_max_stage = std::max(other_max_stage, g.first);
    other_max_ipu = std::max(other_max_ipu, g.second);
  }
  const bool last_is_leftover =
      last.first == other_max_stage + 1 && last.second == other_max_ipu + 1;
  for (const auto& [g, list] : sinks) {
    if (g == last && last_is_leftover) continue;
    for (int32_t node : list) points.push_back({node, g.second, g.first});
  }
  auto check = ApplyShardingPoints(problem, points);
  if (!check.ok()) return check.status();
  if (check->ipu != assignment.ipu ||
      check->pipeline_stage != assignment.pipeline_stage) {
    return absl::InvalidArgumentError(
        "no set of sharding points reproduces this assignment under PopRT's "
        "semantics (IPUs sharing a pipeline stage claim each other's nodes)");
  }
  return points;
}

}  // namespace autoshard
