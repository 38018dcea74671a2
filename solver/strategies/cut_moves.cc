#include "solver/strategies/cut_moves.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "solver/strategies/closure_cuts.h"
#include "solver/strategies/ideal_lattice.h"

namespace autoshard {
namespace {

// How a split ranks for one pair: (bottleneck, pair's larger stage, pair's
// sum), smaller is better.
using Rank = std::tuple<double, double, double>;

// Note [Cut moves]' windows: half-widths, as shares of the pair's compute,
// of the compute windows around the balanced boundary whose forced nodes
// (ClosureCuts::ForcedNodes) keep the minimisers off the empty and the full
// pair (which cut nothing); the first search forces none.
constexpr std::array<double, 3> kWindows = {0.16, 0.04, 0.01};

Rank RankOf(const Performance& perf, int j) {
  const double a = perf.stage_time_s[j], b = perf.stage_time_s[j + 1];
  return {perf.bottleneck_s, std::max(a, b), a + b};
}

// Whether `a` is better than `b` by more than rounding.
bool Better(const Rank& a, const Rank& b) {
  constexpr double kRel = 1e-9;
  auto less = [](double x, double y) { return x < y * (1 - kRel); };
  if (less(std::get<0>(a), std::get<0>(b))) return true;
  if (less(std::get<0>(b), std::get<0>(a))) return false;
  if (less(std::get<1>(a), std::get<1>(b))) return true;
  if (less(std::get<1>(b), std::get<1>(a))) return false;
  return less(std::get<2>(a), std::get<2>(b));
}

}  // namespace

CutMovesResult ImproveByCutMoves(const ShardingProblem& problem,
                                 const DeviceModel& model, int num_ipus,
                                 std::vector<int32_t> ipu,
                                 const CutMovesOptions& options) {
  CutMovesResult result;
  const int k = num_ipus;
  Performance perf = model.EvaluatePerformance(ipu, k, 1);
  result.bottleneck_s = perf.bottleneck_s;
  const double link = model.profile().link_bytes_per_s();
  if (k < 2 || problem.copies_through_host || !(link > 0) ||
      problem.num_nodes() == 0) {
    result.ipu = std::move(ipu);
    return result;
  }
  const int32_t n = problem.num_nodes();
  const std::vector<uint8_t> passive = PassiveConstants(problem);
  bool fits = true;
  for (int d = 0; d < k && fits; ++d) fits &= model.EvaluateMemory(ipu, d).fits;
  ClosureCuts cuts(problem, model);
  auto late = [&] {
    return std::chrono::steady_clock::now() >= options.deadline;
  };
  for (int sweep = 0; sweep < options.max_sweeps && !late(); ++sweep) {
    bool improved = false;
    for (int j = 0; j + 1 < k && !late(); ++j) {
      // Only a pair holding a bottleneck IPU can lower the bottleneck.
      if (std::max(perf.stage_time_s[j], perf.stage_time_s[j + 1]) <
          perf.bottleneck_s * (1 - 1e-9)) {
        continue;
      }
      std::vector<int32_t> in, out;
      for (int32_t v = 0; v < n; ++v) {
        if (passive[v]) continue;
        if (ipu[v] < j) in.push_back(v);
        if (ipu[v] > j + 1) out.push_back(v);
      }
      Rank best = RankOf(perf, j);
      std::vector<int32_t> best_ipu;
      Performance best_perf;
      // Where the two stages balance, their copies as they are now.
      // P(I) = before + (pair + c_{j+1} - c_{j-1}) / 2 (c: a boundary's copy
      // seconds, from the stage times less their compute).
      double before = 0, first_s = 0, second_s = 0;
      for (int32_t v = 0; v < n; ++v) {
        if (passive[v]) continue;
        if (ipu[v] < j) before += model.NodeTime(v);
        if (ipu[v] == j) first_s += model.NodeTime(v);
        if (ipu[v] == j + 1) second_s += model.NodeTime(v);
      }
      const double pair = first_s + second_s;
      const double balanced =
          before + (pair + (perf.stage_time_s[j + 1] - second_s) -
                    (perf.stage_time_s[j] - first_s)) /
                       2;
      for (int w = 0; w <= static_cast<int>(kWindows.size()) && !late(); ++w) {
        std::vector<int32_t> win = in, wout = out;
        if (w > 0) {
          const double half = kWindows[w - 1] * pair;
          if (!cuts.ForcedNodes(balanced - half, balanced + half, &win, &wout))
            continue;
        }
        double low = -link, high = link;  // nu: lambda 0 and 1
        std::vector<int32_t> candidate;
        for (int step = 0; step < options.steps && !late(); ++step) {
          const double nu = (low + high) / 2;
          double value = 0, p = 0;
          std::vector<uint8_t> side;
          if (!cuts.LagrangianCut(nu, 0, 0, win, wout, &value, &p, &side))
            break;
          candidate = ipu;
          int first = 0, second = 0;
          for (int32_t v = 0; v < n; ++v) {
            if (passive[v] || ipu[v] < j || ipu[v] > j + 1) continue;
            candidate[v] = side[v] ? j : j + 1;
            ++(side[v] ? first : second);
          }
          if (first == 0) {  // all on j + 1: IPU j needs more compute, lower nu
            high = nu;
            continue;
          }
          if (second == 0) {
            low = nu;
            continue;
          }
          PlaceConstants(problem, passive, &candidate);
          const Performance cp = model.EvaluatePerformance(candidate, k, 1);
          // The heavier of the two stages gives compute away.
          (cp.stage_time_s[j] > cp.stage_time_s[j + 1] ? low : high) = nu;
          const Rank rank = RankOf(cp, j);
          if (!Better(rank, best)) continue;
          if (fits && (!model.EvaluateMemory(candidate, j).fits ||
                       !model.EvaluateMemory(candidate, j + 1).fits)) {
            continue;
          }
          best = rank;
          best_ipu = candidate;
          best_perf = cp;
        }
      }
      if (best_ipu.empty()) continue;
      ipu = std::move(best_ipu);
      perf = std::move(best_perf);
      ++result.moves;
      improved = true;
    }
    if (!improved) break;
  }
  result.bottleneck_s = perf.bottleneck_s;
  result.ipu = std::move(ipu);
  return result;
}

}  // namespace autoshard
