#include "solver/strategies/closure_cuts.h"

#include <algorithm>
#include <vector>

namespace autoshard {

std::vector<int32_t> MinCutOrder(const ShardingProblem& problem,
                                 const DeviceModel& model, int windows,
                                 bool balanced) {
  const int n = problem.num_nodes();
  std::vector<int32_t> rank(n, windows);
  ClosureCuts cuts(problem, model);
  const double width = cuts.total_s() / windows;
  for (int w = windows - 1; w >= 0; --w) {
    const std::vector<uint8_t> side =
        balanced ? cuts.BalancedIdeal(w * width, (w + 1) * width)
                 : cuts.MinCutIdeal(w * width, (w + 1) * width);
    for (int32_t v = 0; v < static_cast<int32_t>(side.size()); ++v)
      if (side[v]) rank[v] = w;
  }
  // Folded constants: with their earliest-ranked reader.
  const std::vector<uint8_t> passive = PassiveConstants(problem);
  for (auto it = problem.topo_order.rbegin(); it != problem.topo_order.rend();
       ++it) {
    if (!passive[*it]) continue;
    for (int32_t c : problem.consumers[*it])
      rank[*it] = std::min(rank[*it], rank[c]);
  }
  std::vector<int32_t> order = problem.topo_order;
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return rank[a] < rank[b]; });
  return order;
}

}  // namespace autoshard
