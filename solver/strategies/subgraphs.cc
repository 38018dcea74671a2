#include "solver/strategies/subgraphs.h"

#include <algorithm>

namespace autoshard {

namespace {

// The nodes a walk starts from: those with more than one activation input
// (every node when asked, or when there is none), in topological order.
std::vector<int32_t> StartNodes(const ShardingProblem& p,
                                const SubgraphOptions& options) {
  std::vector<int32_t> candidates;
  if (!options.every_node_candidate) {
    for (int32_t node : p.topo_order) {
      if (p.num_activation_inputs[node] > 1) candidates.push_back(node);
    }
  }
  if (candidates.empty()) candidates = p.topo_order;
  return candidates;
}

// Leftovers: the nodes no kept walk reached, as one last subgraph.
void AddLeftovers(const ShardingProblem& p,
                  std::vector<int32_t>* subgraph_of_node,
                  std::vector<Subgraph>* subgraphs) {
  Subgraph leftover;
  leftover.id = static_cast<int32_t>(subgraphs->size());
  for (int32_t node : p.topo_order) {
    if ((*subgraph_of_node)[node] != -1) continue;
    (*subgraph_of_node)[node] = leftover.id;
    leftover.nodes.push_back(node);
    leftover.weight_bytes += p.NodeWeightBytes(node);
    leftover.flops += p.flops[node];
  }
  if (!leftover.nodes.empty()) subgraphs->push_back(std::move(leftover));
}

// Each subgraph's nodes in topological order; parents and kids from the
// node edges.
void LinkSubgraphs(const ShardingProblem& p,
                   const std::vector<int32_t>& subgraph_of_node,
                   std::vector<Subgraph>* subgraphs) {
  const std::vector<int32_t>& topo_pos = p.topo_position;
  for (Subgraph& s : *subgraphs) {
    std::sort(s.nodes.begin(), s.nodes.end(),
              [&](int32_t a, int32_t b) { return topo_pos[a] < topo_pos[b]; });
    for (int32_t node : s.nodes) {
      for (int32_t prod : p.producers[node]) {
        int32_t from = subgraph_of_node[prod];
        if (from != s.id) s.parents.push_back(from);
      }
    }
    std::sort(s.parents.begin(), s.parents.end());
    s.parents.erase(std::unique(s.parents.begin(), s.parents.end()),
                    s.parents.end());
    for (int32_t parent : s.parents) (*subgraphs)[parent].kids.push_back(s.id);
  }
}

}  // namespace

SubgraphSet::SubgraphSet(const ShardingProblem& p,
                         const SubgraphOptions& options) {
  const int n = p.num_nodes();
  const std::vector<int32_t> candidates = StartNodes(p, options);
  num_candidates_ = static_cast<int>(candidates.size());

  double total_bytes = 0, total_flops = 0;
  for (int32_t node = 0; node < n; ++node) {
    total_bytes += static_cast<double>(p.NodeWeightBytes(node));
    total_flops += p.flops[node];
  }
  const double avg_bytes = total_bytes / num_candidates_;
  const double avg_flops = total_flops / num_candidates_;

  subgraph_of_node_.assign(n, -1);
  std::vector<int32_t> stack, walked;
  for (int32_t start : candidates) {
    if (subgraph_of_node_[start] != -1) continue;
    const int32_t id = static_cast<int32_t>(subgraphs_.size());
    walked.clear();
    stack.assign(1, start);
    subgraph_of_node_[start] = id;
    int64_t bytes = 0;
    double flops = 0;
    while (!stack.empty()) {
      int32_t node = stack.back();
      stack.pop_back();
      walked.push_back(node);
      bytes += p.NodeWeightBytes(node);
      flops += p.flops[node];
      for (int32_t prod : p.producers[node]) {
        if (subgraph_of_node_[prod] == -1) {
          subgraph_of_node_[prod] = id;
          stack.push_back(prod);
        }
      }
    }
    if (options.drop_small && (bytes < avg_bytes || flops < avg_flops)) {
      for (int32_t node : walked) subgraph_of_node_[node] = -1;
      continue;
    }
    Subgraph& s = subgraphs_.emplace_back();
    s.id = id;
    s.start_node = start;
    s.nodes = walked;
    s.weight_bytes = bytes;
    s.flops = flops;
  }
  AddLeftovers(p, &subgraph_of_node_, &subgraphs_);
  LinkSubgraphs(p, subgraph_of_node_, &subgraphs_);
}

bool SubgraphSet::Includes(int32_t a, int32_t b) const {
  if (b >= a) return false;
  std::vector<int32_t> stack{a};
  std::vector<bool> seen(a - b + 1, false);  // index: id - b
  while (!stack.empty()) {
    int32_t at = stack.back();
    stack.pop_back();
    for (int32_t parent : subgraphs_[at].parents) {
      if (parent == b) return true;
      if (parent < b || seen[parent - b]) continue;
      seen[parent - b] = true;
      stack.push_back(parent);
    }
  }
  return false;
}

}  // namespace autoshard
