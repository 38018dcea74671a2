#include "solver/strategies/auto_steps.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>
#include <vector>

#include "base/deadline.h"
#include "solver/strategies/auto_strategy.h"
#include "solver/strategies/builtin.h"
#include "solver/strategies/closure_cuts.h"
#include "solver/strategies/cut_moves.h"
#include "solver/strategies/ideal_moves.h"
#include "solver/strategies/neighbour_moves.h"
#include "solver/strategies/optimal_strategy.h"
#include "solver/strategies/reader_hoist.h"

namespace autoshard {
namespace auto_internal {

// The slicing DP (Note [Slicing DP]) on MinCutOrder's order
// (solver/strategies/closure_cuts.h, kMinCutOrderWindows windows), memory
// judged, within `seconds_left`: a candidate "min-cut order" when its slicing
// is faster than `best` (judged with memory by Evaluated), else nullopt.
std::optional<Candidate> SlicedMinCutOrder(const StrategyContext& c,
                                           const Candidate& best,
                                           double seconds_left, bool balanced) {
  const ShardingProblem& p = *c.problem;
  if (c.num_ipus < 2 || !best.result.evaluation.fits ||
      p.num_nodes() > kMaxNodeGranularity || seconds_left <= 0) {
    return std::nullopt;
  }
  const auto t = std::chrono::steady_clock::now();
  const DeviceModel& model = c.Model();
  const char* name = balanced ? "balanced min-cut order" : "min-cut order";
  SliceOrder order{name, {}};
  for (int32_t v : MinCutOrder(p, model, kMinCutOrderWindows, balanced))
    order.units.push_back({v});
  const SliceResult r =
      SliceOptimally(p, model, order, c.num_ipus, /*ignore_memory=*/false,
                     SecondsAfter(t, seconds_left));
  // Faster by more than rounding, else not worth judging.
  if (!r.found ||
      r.bottleneck_s >=
          best.result.evaluation.performance.bottleneck_s * (1 - 1e-9)) {
    return std::nullopt;
  }
  std::vector<int32_t> ipu(p.num_nodes(), 0);
  for (size_t d = 0; d + 1 < r.cuts.size(); ++d)
    for (int32_t u = r.cuts[d]; u < r.cuts[d + 1]; ++u)
      ipu[order.units[u][0]] = static_cast<int32_t>(d);
  return Candidate{name,
                   Evaluated(c, Assignment{ipu, ipu},
                             c.device.available_memory_proportion()),
                   SecondsSince(t)};
}

// Moves between ideals from the best candidate's split (Note [Ideal moves],
// solver/strategies/ideal_moves.h), within kIdealMovesSeconds: a candidate
// "<its name>+moves" when they lower its bottleneck (judged with memory by
// Evaluated), else nullopt.
std::optional<Candidate> Moved(const StrategyContext& c, const Candidate& from,
                               double seconds_left) {
  const ShardingProblem& p = *c.problem;
  const PlanEvaluation& e = from.result.evaluation;
  if (c.num_ipus < 2 || !e.fits || p.num_nodes() > kMaxNodeGranularity ||
      seconds_left <= 0) {
    return std::nullopt;
  }
  const auto t = std::chrono::steady_clock::now();
  const DeviceModel& model = c.Model();
  IdealMovesOptions options;
  options.deadline =
      SecondsAfter(t, std::min(seconds_left, kIdealMovesSeconds));
  IdealMovesResult r = ImproveByIdealMoves(p, model, c.num_ipus,
                                           from.result.assignment.ipu, options);
  // Then Note [Neighbour moves] (solver/strategies/neighbour_moves.h)
  // within the same time: never slower than the ideal moves' split. Both
  // ignore memory, so each split is judged with it and the better kept
  // (BetterResult): the neighbour moves may fill an IPU past its memory.
  NeighbourMovesOptions neighbour;
  neighbour.max_steps = 64;
  neighbour.deadline = options.deadline;
  const NeighbourMovesResult nr =
      ImproveByNeighbourMoves(p, model, c.num_ipus, r.ipu, neighbour);
  const double from_s = e.performance.bottleneck_s * (1 - 1e-9);
  const double prop = from.result.available_memory_proportion;
  std::optional<StrategyResult> best;
  if (r.bottleneck_s < from_s) {
    best = Evaluated(c, Assignment{r.ipu, r.ipu}, prop);
  }
  if (nr.bottleneck_s < std::min(from_s, r.bottleneck_s * (1 - 1e-9))) {
    StrategyResult moved = Evaluated(c, Assignment{nr.ipu, nr.ipu}, prop);
    if (!best || BetterResult(moved, *best)) best = std::move(moved);
  }
  // Then Note [Cut moves] (solver/strategies/cut_moves.h) from the better
  // of those: the balanced least cuts the ideal moves' enumeration misses on
  // wide pairs; never slower than its start, which it keeps fitting, within
  // its own kIdealMovesSeconds.
  const StrategyResult& start = best ? *best : from.result;
  CutMovesOptions cut;
  cut.deadline = SecondsAfter(
      std::chrono::steady_clock::now(),
      std::max(0.0,
               std::min(seconds_left - SecondsSince(t), kIdealMovesSeconds)));
  const CutMovesResult cr =
      ImproveByCutMoves(p, model, c.num_ipus, start.assignment.ipu, cut);
  if (cr.bottleneck_s <
      start.evaluation.performance.bottleneck_s * (1 - 1e-9)) {
    StrategyResult moved = Evaluated(c, Assignment{cr.ipu, cr.ipu}, prop);
    if (BetterResult(moved, start)) best = std::move(moved);
  }
  if (!best) return std::nullopt;
  return Candidate{from.strategy + "+moves", *std::move(best), SecondsSince(t)};
}

// Reader hoisting from the best candidate's split (Note [Reader hoisting],
// solver/strategies/reader_hoist.h), within kReaderHoistSeconds: a
// candidate "<its name>+hoist" when it lowers its bottleneck (judged with
// memory by Evaluated), else nullopt.
std::optional<Candidate> Hoisted(const StrategyContext& c,
                                 const Candidate& from, double seconds_left) {
  const ShardingProblem& p = *c.problem;
  const PlanEvaluation& e = from.result.evaluation;
  if (c.num_ipus < 3 || !e.fits || p.num_nodes() > kMaxNodeGranularity ||
      seconds_left <= 0) {
    return std::nullopt;
  }
  const auto t = std::chrono::steady_clock::now();
  ReaderHoistOptions options;
  options.deadline =
      SecondsAfter(t, std::min(seconds_left, kReaderHoistSeconds));
  const ReaderHoistResult r = ImproveByReaderHoisting(
      p, c.Model(), c.num_ipus, from.result.assignment.ipu, options);
  if (r.hoists == 0 ||
      r.bottleneck_s >= e.performance.bottleneck_s * (1 - 1e-9)) {
    return std::nullopt;
  }
  return Candidate{from.strategy + "+hoist",
                   Evaluated(c, Assignment{r.ipu, r.ipu},
                             from.result.available_memory_proportion),
                   SecondsSince(t)};
}

}  // namespace auto_internal
}  // namespace autoshard
