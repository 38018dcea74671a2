#include "sharder/problem.h"

namespace autoshard {

int64_t ShardingProblem::NodeWeightBytes(int32_t n) const {
  int64_t bytes = 0;
  for (int32_t w : node_weights[n]) bytes += weight_size_bytes[w];
  return bytes;
}

ShardingProblem MakeProblem(const Graph& graph, const ModelCosts& costs) {
  const int n = graph.num_nodes();
  ShardingProblem p;
  p.producers.resize(n);
  p.consumers.resize(n);
  p.flops.resize(n);
  p.activation_bytes.resize(n);
  p.names.resize(n);
  for (NodeId id = 0; id < n; ++id) {
    auto prod = graph.producers(id);
    auto cons = graph.consumers(id);
    p.producers[id].assign(prod.begin(), prod.end());
    p.consumers[id].assign(cons.begin(), cons.end());
    p.flops[id] = costs.nodes[id].flops;
    p.activation_bytes[id] = costs.nodes[id].activation_bytes;
    p.names[id] = graph.name(id);
  }
  auto order = graph.topological_order();
  p.topo_order.assign(order.begin(), order.end());
  p.num_activation_inputs = costs.num_activation_inputs;
  p.node_weights = costs.node_weights;
  p.weight_size_bytes.reserve(costs.weights.size());
  for (const Weight& w : costs.weights)
    p.weight_size_bytes.push_back(w.size_bytes);
  return p;
}

}  // namespace autoshard
