#include "solver/strategies/revisit.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "base/deadline.h"
#include "solver/strategies/auto_strategy.h"
#include "solver/strategies/sharding_points.h"
#include "solver/strategies/slice_dp.h"

namespace autoshard {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Whether weight `w` is one --weights variable keeps on one IPU.
bool Variable(const ShardingProblem& problem, int32_t w) {
  return problem.weight_is_float.empty() || problem.weight_is_float[w] != 0;
}

// Per weight, the distinct units of the order that read it, ascending.
std::vector<std::vector<int32_t>> ReaderUnits(
    const ShardingProblem& problem, const std::vector<int32_t>& unit_of_node) {
  std::vector<std::vector<int32_t>> units(problem.weight_size_bytes.size());
  for (int32_t node = 0; node < problem.num_nodes(); ++node) {
    if (unit_of_node[node] < 0) continue;
    for (int32_t w : problem.node_weights[node])
      if (Variable(problem, w)) units[w].push_back(unit_of_node[node]);
  }
  for (auto& u : units) {
    std::sort(u.begin(), u.end());
    u.erase(std::unique(u.begin(), u.end()), u.end());
  }
  return units;
}

// The cuts Note [Last stage on IPU 0] rules out for variable weights when
// the last slice starts at `t`: sets *forbidden (m + 1 entries) and returns
// the smallest end of the first slice.
int32_t VariableWeightCuts(const std::vector<std::vector<int32_t>>& readers,
                           int32_t m, int32_t t,
                           std::vector<uint8_t>* forbidden) {
  std::vector<int32_t> diff(m + 2, 0);
  int32_t min_first_cut = 0;
  for (const std::vector<int32_t>& units : readers) {
    if (units.size() < 2) continue;
    auto first_after = std::lower_bound(units.begin(), units.end(), t);
    if (first_after == units.begin()) continue;  // all in the last slice
    const int32_t last_before = *(first_after - 1);
    if (first_after != units.end()) {
      min_first_cut = std::max(min_first_cut, last_before + 1);
    } else {
      // No cut in (first reader, last reader]: one slice holds them all.
      diff[units.front() + 1] += 1;
      diff[last_before + 1] -= 1;
    }
  }
  forbidden->assign(m + 1, 0);
  int32_t running = 0;
  for (int32_t x = 0; x <= m; ++x) {
    running += diff[x];
    (*forbidden)[x] = running > 0;
  }
  return min_first_cut;
}

}  // namespace

std::optional<WeightIpus> WeightOnTwoIpus(
    const ShardingProblem& problem, const std::vector<int32_t>& ipu_of_node) {
  std::vector<std::pair<int32_t, int32_t>> pairs;  // (weight, IPU)
  for (int32_t node = 0; node < problem.num_nodes(); ++node) {
    for (int32_t w : problem.node_weights[node])
      if (Variable(problem, w)) pairs.emplace_back(w, ipu_of_node[node]);
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  std::optional<WeightIpus> out;
  for (size_t i = 0; i < pairs.size();) {
    size_t j = i;
    while (j < pairs.size() && pairs[j].first == pairs[i].first) ++j;
    const int32_t w = pairs[i].first;
    if (j - i >= 2 && (!out || problem.weight_size_bytes[w] >
                                   problem.weight_size_bytes[out->weight])) {
      out = WeightIpus{w, {}};
      for (size_t x = i; x < j; ++x) out->ipus.push_back(pairs[x].second);
    }
    i = j;
  }
  return out;
}

std::optional<int32_t> FarApartWeight(const ShardingProblem& problem) {
  const size_t num_weights = problem.weight_size_bytes.size();
  std::vector<int32_t> first(num_weights, -1), last(num_weights, -1);
  for (int32_t node = 0; node < problem.num_nodes(); ++node) {
    const int32_t pos = problem.topo_position[node];
    for (int32_t w : problem.node_weights[node]) {
      first[w] = first[w] < 0 ? pos : std::min(first[w], pos);
      last[w] = std::max(last[w], pos);
    }
  }
  int64_t total_bytes = 0;
  for (int64_t b : problem.weight_size_bytes) total_bytes += b;
  std::optional<int32_t> out;
  for (size_t w = 0; w < num_weights; ++w) {
    const int32_t id = static_cast<int32_t>(w);
    if (first[w] < 0 || 2 * (last[w] - first[w]) <= problem.num_nodes() ||
        !Variable(problem, id) ||
        100 * problem.weight_size_bytes[w] < total_bytes) {
      continue;
    }
    if (!out ||
        problem.weight_size_bytes[w] > problem.weight_size_bytes[*out]) {
      out = static_cast<int32_t>(w);
    }
  }
  return out;
}

RevisitSlicing SliceWithLastStageOnIpu0(
    const ShardingProblem& problem, const DeviceModel& model,
    const SliceOrder& order, int num_ipus, bool variable_weights, double beat_s,
    std::chrono::steady_clock::time_point deadline,
    int64_t max_fit_evaluations) {
  RevisitSlicing out;
  const int32_t m = static_cast<int32_t>(order.units.size());
  if (num_ipus < 2 || m < num_ipus + 1) return out;
  internal::SliceDp dp(problem, model, order, num_ipus, deadline,
                       max_fit_evaluations);
  std::vector<std::vector<int32_t>> readers;
  if (variable_weights) readers = ReaderUnits(problem, dp.unit_of_node());
  double best = beat_s;
  RevisitSlicing fastest_any;  // ignoring memory, when nothing fits
  std::vector<uint8_t> forbidden;
  for (int32_t t = m - 1; t >= num_ipus; --t) {
    // The last slice's compute alone only grows as t falls.
    if (dp.Prefix(m) - dp.Prefix(t) >= best) break;
    if (std::chrono::steady_clock::now() > deadline) {
      out.complete = false;
      break;
    }
    if (variable_weights) {
      const int32_t min_first = VariableWeightCuts(readers, m, t, &forbidden);
      dp.SetForbiddenCuts(forbidden, min_first);
    }
    dp.SetTail(t);
    SliceResult fastest = dp.Solve(/*ignore_memory=*/true);
    out.complete &= fastest.complete;
    out.fit_evaluations = fastest.fit_evaluations;
    if (!fastest.found) continue;
    if (!fastest.fits && beat_s == kInf &&
        (!fastest_any.found ||
         fastest.bottleneck_s < fastest_any.bottleneck_s)) {
      fastest_any = {true, false, true, fastest.bottleneck_s, fastest.cuts, 0};
    }
    if (fastest.bottleneck_s >= best) continue;
    SliceResult r = fastest.fits ? fastest : dp.Solve(/*ignore_memory=*/false);
    out.complete &= r.complete;
    out.fit_evaluations = r.fit_evaluations;
    if (!r.found || !r.fits || r.bottleneck_s >= best) continue;
    best = r.bottleneck_s;
    out.found = out.fits = true;
    out.bottleneck_s = r.bottleneck_s;
    out.cuts = r.cuts;
  }
  if (!out.found && fastest_any.found) {
    const bool complete = out.complete;
    const int64_t evaluations = out.fit_evaluations;
    out = fastest_any;
    out.complete = complete;
    out.fit_evaluations = evaluations;
  }
  return out;
}

Assignment RevisitAssignment(const SliceOrder& order,
                             const std::vector<int32_t>& cuts, int num_nodes) {
  const int k = static_cast<int>(cuts.size()) - 1;
  Assignment a;
  a.ipu.assign(num_nodes, 0);
  a.pipeline_stage.assign(num_nodes, 0);
  auto place = [&](int32_t from, int32_t to, int32_t ipu, int32_t stage) {
    for (int32_t u = from; u < to; ++u) {
      for (int32_t node : order.units[u]) {
        a.ipu[node] = ipu;
        a.pipeline_stage[node] = stage;
      }
    }
  };
  for (int j = 0; j < k; ++j) place(cuts[j], cuts[j + 1], j, j);
  place(cuts[k], static_cast<int32_t>(order.units.size()), 0, k);
  return a;
}

std::optional<StrategyResult> RevisitCandidate(const StrategyContext& c,
                                               double beat_s, double seconds) {
  const ShardingProblem& p = *c.problem;
  if (c.num_ipus < 2 || seconds <= 0) return std::nullopt;
  const auto deadline = SecondsAfter(std::chrono::steady_clock::now(), seconds);
  const DeviceModel& model = c.Model();
  const OptimalOptions defaults;
  std::vector<SliceOrder> orders;
  orders.push_back(SubgraphOrder(p, c.num_ipus));
  orders.push_back(TopologicalNodeOrder(p, defaults.max_units));
  SliceOrder depth_first = DepthFirstNodeOrder(p, defaults.max_units);
  if (depth_first.units != orders.back().units)
    orders.push_back(std::move(depth_first));
  const SliceOrder* best_order = nullptr;
  RevisitSlicing best;
  for (const SliceOrder& order : orders) {
    const double beat =
        best.found && best.fits ? std::min(beat_s, best.bottleneck_s) : beat_s;
    RevisitSlicing r = SliceWithLastStageOnIpu0(
        p, model, order, c.num_ipus, c.variable_weights, beat, deadline);
    if (!r.found) continue;
    if (best_order == nullptr || (r.fits && !best.fits) ||
        (r.fits == best.fits && r.bottleneck_s < best.bottleneck_s)) {
      best = std::move(r);
      best_order = &order;
    }
  }
  if (best_order == nullptr) return std::nullopt;
  const double amp = c.device.available_memory_proportion();
  Assignment sliced = RevisitAssignment(*best_order, best.cuts, p.num_nodes());
  Assignment sunk = SinkConstants(p, sliced);
  StrategyResult before = Evaluated(c, std::move(sliced), amp);
  // Sinking may empty stage 0 (its only nodes constants read later): a plan
  // with no stage 0 is no plan (ValidateAssignment), and the certificate of
  // Note [Revisit bound] does not cover it.
  const bool stage0_kept =
      std::find(sunk.pipeline_stage.begin(), sunk.pipeline_stage.end(), 0) !=
      sunk.pipeline_stage.end();
  if (sunk.ipu == before.assignment.ipu || !stage0_kept) return before;
  StrategyResult after = Evaluated(c, std::move(sunk), amp);
  return BetterResult(before, after) ? before : after;
}

}  // namespace autoshard
