// ShardingProblem: what the strategies see of a model — plain vectors, no
// ONNX types — so they can be tested on hand-written problems.
#ifndef AUTOSHARD_SHARDER_PROBLEM_H_
#define AUTOSHARD_SHARDER_PROBLEM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/cost_model.h"
#include "graph/graph.h"

namespace autoshard {

struct ShardingProblem {
  // Node i's distinct producers and consumers (edges through tensors and
  // outer-scope reads). Ids are dense 0..n-1.
  std::vector<std::vector<int32_t>> producers;
  std::vector<std::vector<int32_t>> consumers;
  std::vector<int32_t> topo_order;  // every node once, after its producers
  std::vector<double> flops;        // per node, 2 per MAC
  std::vector<int64_t> activation_bytes;           // per node: its outputs
  std::vector<int32_t> num_activation_inputs;      // per node, see ModelCosts
  std::vector<int64_t> weight_size_bytes;          // per weight id
  std::vector<std::vector<int32_t>> node_weights;  // node -> weight ids read
  std::vector<std::string> names;                  // per node, for messages

  int num_nodes() const { return static_cast<int>(topo_order.size()); }
  // Sum of the sizes of the distinct weights node `n` reads (PopRT's
  // per-node bytes cost).
  int64_t NodeWeightBytes(int32_t n) const;
};

// Builds the problem of a model from its DAG and costs.
ShardingProblem MakeProblem(const Graph& graph, const ModelCosts& costs);

}  // namespace autoshard

#endif  // AUTOSHARD_SHARDER_PROBLEM_H_
