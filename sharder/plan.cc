#include "sharder/plan.h"

#include <algorithm>

namespace autoshard {

std::vector<proto::IpuCost> SummarizeIpus(const ShardingProblem& problem,
                                          const Assignment& assignment) {
  const int k = assignment.num_ipus();
  std::vector<proto::IpuCost> ipus(k);
  for (int i = 0; i < k; ++i) ipus[i].set_ipu(i);
  // weight id -> last IPU counted, to count each weight once per IPU.
  std::vector<std::vector<bool>> weight_on(k);
  for (auto& v : weight_on) v.assign(problem.weight_size_bytes.size(), false);
  std::vector<int32_t> receivers;
  for (int32_t node = 0; node < problem.num_nodes(); ++node) {
    const int d = assignment.ipu[node];
    proto::IpuCost& cost = ipus[d];
    cost.set_num_nodes(cost.num_nodes() + 1);
    cost.set_flops(cost.flops() + problem.flops[node]);
    cost.set_activation_bytes(cost.activation_bytes() +
                              problem.activation_bytes[node]);
    for (int32_t w : problem.node_weights[node]) {
      if (weight_on[d][w]) continue;
      weight_on[d][w] = true;
      cost.set_weight_bytes(cost.weight_bytes() + problem.weight_size_bytes[w]);
    }
    receivers.clear();
    for (int32_t c : problem.consumers[node]) {
      if (assignment.ipu[c] != d) receivers.push_back(assignment.ipu[c]);
    }
    std::sort(receivers.begin(), receivers.end());
    receivers.erase(std::unique(receivers.begin(), receivers.end()),
                    receivers.end());
    const int64_t bytes = problem.activation_bytes[node];
    for (int32_t r : receivers) {
      cost.set_cut_tensor_out_bytes(cost.cut_tensor_out_bytes() + bytes);
      ipus[r].set_cut_tensor_in_bytes(ipus[r].cut_tensor_in_bytes() + bytes);
    }
  }
  return ipus;
}

}  // namespace autoshard
