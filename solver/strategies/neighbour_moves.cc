#include "solver/strategies/neighbour_moves.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace autoshard {
namespace {

// Whether node x may go to IPU `to` with the split staying monotone and
// its constraints kept (issue 31: `to` allowed for x; a node of a colocation
// group is not moved alone, so it stays).
bool MayMove(const ShardingProblem& p, const std::vector<int32_t>& ipu,
             int32_t x, int32_t to) {
  if (!p.IpuAllowed(x, to)) return false;
  if (!p.colocate_group.empty() && p.colocate_group[x] >= 0) return false;
  for (int32_t u : p.producers[x])
    if (ipu[u] > to) return false;
  for (int32_t w : p.consumers[x])
    if (ipu[w] < to) return false;
  return true;
}

}  // namespace

NeighbourMovesResult ImproveByNeighbourMoves(
    const ShardingProblem& problem, const DeviceModel& model, int num_ipus,
    std::vector<int32_t> ipu, const NeighbourMovesOptions& options) {
  NeighbourMovesResult result;
  const int32_t n = problem.num_nodes();
  auto bottleneck = [&](const std::vector<int32_t>& split) {
    return model.EvaluatePerformance(split, num_ipus, 1).bottleneck_s;
  };
  result.bottleneck_s = bottleneck(ipu);
  std::vector<int32_t> count(num_ipus, 0);
  for (int32_t x = 0; x < n; ++x) ++count[ipu[x]];
  std::vector<std::pair<int32_t, int32_t>> moves;  // (node, to)
  for (int step = 0; step < options.max_steps && num_ipus >= 2; ++step) {
    if (std::chrono::steady_clock::now() > options.deadline) break;
    const Performance perf = model.EvaluatePerformance(ipu, num_ipus, 1);
    const int32_t d = static_cast<int32_t>(
        std::max_element(perf.stage_time_s.begin(), perf.stage_time_s.end()) -
        perf.stage_time_s.begin());
    moves.clear();
    auto add = [&](int32_t x, int32_t to) {
      if (to < 0 || to >= num_ipus || ipu[x] == to || count[ipu[x]] <= 1)
        return;
      if (MayMove(problem, ipu, x, to)) moves.emplace_back(x, to);
    };
    for (int32_t x = 0; x < n; ++x) {
      if (ipu[x] != d) continue;
      for (int32_t u : problem.producers[x])
        if (ipu[u] == d - 1) add(u, d);
      for (int32_t w : problem.consumers[x])
        if (ipu[w] == d + 1) add(w, d);
      add(x, d - 1);
      add(x, d + 1);
    }
    std::sort(moves.begin(), moves.end());
    moves.erase(std::unique(moves.begin(), moves.end()), moves.end());
    if (static_cast<int>(moves.size()) > options.max_moves_per_step)
      moves.resize(options.max_moves_per_step);
    double best = result.bottleneck_s;
    std::pair<int32_t, int32_t> chosen(-1, -1);
    for (const auto& [x, to] : moves) {
      const int32_t from = ipu[x];
      ipu[x] = to;
      const double b = bottleneck(ipu);
      ipu[x] = from;
      if (b < best * (1 - 1e-12)) {
        best = b;
        chosen = {x, to};
      }
    }
    if (chosen.first < 0) break;
    --count[ipu[chosen.first]];
    ++count[chosen.second];
    ipu[chosen.first] = chosen.second;
    result.bottleneck_s = best;
    ++result.moves;
  }
  result.ipu = std::move(ipu);
  return result;
}

}  // namespace autoshard
