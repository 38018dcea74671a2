#include "solver/strategies/optimal_strategy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/deadline.h"
#include "base/status_macros.h"
#include "costmodel/node_bound.h"
#include "costmodel/weight_location.h"
#include "graph/shapes.h"
#include "solver/strategies/auto_strategy.h"
#include "solver/strategies/builtin.h"
#include "solver/strategies/raw_strategy.h"
#include "solver/strategies/slice_dp.h"
#include "solver/strategies/subgraphs.h"

namespace autoshard {
namespace {

using internal::SliceDp;

// Cuts a node order into at most `max_units` units of consecutive nodes.
SliceOrder Blocks(std::string name, const std::vector<int32_t>& nodes,
                  int max_units) {
  SliceOrder order;
  const int64_t n = static_cast<int64_t>(nodes.size());
  const int64_t per_unit =
      max_units > 0 && n > max_units ? (n + max_units - 1) / max_units : 1;
  order.name = per_unit > 1
                   ? absl::StrCat(name, " in blocks of ", per_unit, " nodes")
                   : std::move(name);
  for (int64_t i = 0; i < n; i += per_unit) {
    order.units.emplace_back(nodes.begin() + i,
                             nodes.begin() + std::min(n, i + per_unit));
  }
  return order;
}

Assignment FromCuts(const SliceOrder& order, const std::vector<int32_t>& cuts,
                    int num_nodes) {
  Assignment a;
  a.ipu.assign(num_nodes, 0);
  a.pipeline_stage.assign(num_nodes, 0);
  for (size_t d = 0; d + 1 < cuts.size(); ++d) {
    for (int32_t u = cuts[d]; u < cuts[d + 1]; ++u) {
      for (int32_t node : order.units[u]) {
        a.ipu[node] = a.pipeline_stage[node] = static_cast<int32_t>(d);
      }
    }
  }
  return a;
}

}  // namespace

SliceResult SliceOptimally(const ShardingProblem& problem,
                           const DeviceModel& model, const SliceOrder& order,
                           int num_ipus, bool ignore_memory,
                           std::chrono::steady_clock::time_point deadline,
                           int64_t max_fit_evaluations) {
  SliceDp dp(problem, model, order, num_ipus, deadline, max_fit_evaluations);
  SliceResult fastest = dp.Solve(/*ignore_memory=*/true);
  if (ignore_memory || !fastest.found || fastest.fits || !fastest.complete) {
    if (!ignore_memory && fastest.found && !fastest.fits) fastest.found = false;
    return fastest;
  }
  // The fastest slicing overflows: the DP again, with the constraint.
  return dp.Solve(/*ignore_memory=*/false);
}

SliceOrder TopologicalNodeOrder(const ShardingProblem& problem, int max_units) {
  return Blocks("topological nodes", problem.topo_order, max_units);
}

SliceOrder DepthFirstNodeOrder(const ShardingProblem& problem, int max_units) {
  const int n = problem.num_nodes();
  std::vector<int32_t> order;
  order.reserve(n);
  std::vector<uint8_t> done(n, 0);
  // (node, index of the next producer to visit)
  std::vector<std::pair<int32_t, size_t>> stack;
  for (int32_t sink : problem.topo_order) {
    if (!problem.consumers[sink].empty() || done[sink]) continue;
    stack.emplace_back(sink, 0);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < problem.producers[node].size()) {
        const int32_t producer = problem.producers[node][next++];
        if (!done[producer]) stack.emplace_back(producer, 0);
        continue;
      }
      if (!done[node]) {
        done[node] = 1;
        order.push_back(node);
      }
      stack.pop_back();
    }
  }
  return Blocks("depth-first nodes", order, max_units);
}

SliceOrder SubgraphOrder(const ShardingProblem& problem, int num_ipus) {
  const SubgraphSet set = SubgraphsFor(problem, num_ipus);
  SliceOrder order;
  order.name = "subgraphs";
  for (const Subgraph& s : set.subgraphs()) order.units.push_back(s.nodes);
  return order;
}

absl::StatusOr<OptimalResult> OptimalStrategy(const ShardingProblem& problem,
                                              const DeviceModel& model,
                                              int num_ipus,
                                              const OptimalOptions& options) {
  const int n = problem.num_nodes();
  if (num_ipus < 1 || num_ipus > n) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot slice ", n, " nodes onto ", num_ipus, " IPUs"));
  }
  const auto deadline =
      SecondsAfter(std::chrono::steady_clock::now(), options.max_seconds);
  std::vector<SliceOrder> orders;
  orders.push_back(SubgraphOrder(problem, num_ipus));
  orders.push_back(TopologicalNodeOrder(problem, options.max_units));
  SliceOrder depth_first = DepthFirstNodeOrder(problem, options.max_units);
  if (depth_first.units != orders.back().units)
    orders.push_back(std::move(depth_first));

  OptimalResult out;
  const SliceOrder* best_order = nullptr;
  SliceResult best;
  for (const SliceOrder& order : orders) {
    if (static_cast<int>(order.units.size()) < num_ipus) continue;
    if (options.nothing_fits) {
      out.tried.push_back(
          {order.name, static_cast<int32_t>(order.units.size()), false, 0});
      continue;
    }
    SliceResult r = SliceOptimally(problem, model, order, num_ipus,
                                   /*ignore_memory=*/false, deadline,
                                   options.max_fit_evaluations);
    out.complete &= r.complete;
    out.fit_evaluations += r.fit_evaluations;
    out.tried.push_back({order.name, static_cast<int32_t>(order.units.size()),
                         r.found, r.found ? r.bottleneck_s : 0});
    if (r.found &&
        (best_order == nullptr || r.bottleneck_s < best.bottleneck_s)) {
      best = std::move(r);
      best_order = &order;
    }
  }
  if (best_order == nullptr) {
    // Nothing fits: the fastest slicing of the first order that has one.
    for (const SliceOrder& order : orders) {
      if (static_cast<int>(order.units.size()) < num_ipus) continue;
      SliceResult r = SliceOptimally(problem, model, order, num_ipus,
                                     /*ignore_memory=*/true, deadline);
      if (!r.found) continue;
      best = std::move(r);
      best_order = &order;
      break;
    }
  }
  if (best_order == nullptr) {
    return absl::DeadlineExceededError(
        "the optimal strategy ran out of time before it found a split");
  }
  // Cuts from a DP whose times were not finite are not a slicing: refuse
  // them rather than index with them (ValidateDeviceProfile keeps times
  // finite; this is the last line).
  const int32_t units = static_cast<int32_t>(best_order->units.size());
  for (size_t d = 0; d < best.cuts.size(); ++d) {
    if (best.cuts[d] < 0 || best.cuts[d] > units ||
        (d > 0 && best.cuts[d] < best.cuts[d - 1]) ||
        !std::isfinite(best.bottleneck_s)) {
      return absl::InternalError(
          "the optimal strategy's stage times are not finite numbers");
    }
  }
  out.assignment = FromCuts(*best_order, best.cuts, n);
  out.fits = best.fits;
  out.bottleneck_s = best.bottleneck_s;
  out.order = best_order->name;
  out.units = static_cast<int32_t>(best_order->units.size());
  return out;
}

namespace {

// The optimal strategy slices an order in which a constant (a weight's
// Identity, say) may sit far from its reader; SinkConstants moves it there
// when the split is no worse for it (fewer cut tensors, fewer points):
// `sliced` evaluated, or the sunk split when it is not worse by auto's order
// (BetterResult).
StrategyResult SinkConstantsIfNoWorse(const StrategyContext& c,
                                      Assignment sliced) {
  const double amp = c.device.available_memory_proportion();
  Assignment sunk = SinkConstants(*c.problem, sliced);
  const bool moved = sunk.ipu != sliced.ipu;
  StrategyResult before = Evaluated(c, std::move(sliced), amp);
  if (!moved) return before;
  StrategyResult after = Evaluated(c, std::move(sunk), amp);
  return BetterResult(before, after) ? before : after;
}

// The DPs' summary for the plan.
proto::OptimalSummary OptimalSummaryOf(const OptimalResult& r, double seconds) {
  proto::OptimalSummary s;
  s.set_order(r.order);
  s.set_units(r.units);
  s.set_fits(r.fits);
  s.set_complete(r.complete);
  s.set_bottleneck_s(r.bottleneck_s);
  s.set_fit_evaluations(r.fit_evaluations);
  for (const OptimalResult::Tried& t : r.tried) {
    proto::OrderResult* o = s.add_orders();
    o->set_order(t.order);
    o->set_units(t.units);
    o->set_fits(t.fits);
    o->set_bottleneck_s(t.bottleneck_s);
  }
  s.set_seconds(seconds);
  return s;
}

}  // namespace

absl::StatusOr<StrategyResult> OptimalOrRaw(const StrategyContext& c,
                                            const Assignment& raw) {
  const auto optimal_start = std::chrono::steady_clock::now();
  const DeviceModel& model = c.Model();
  OptimalOptions options;
  options.max_seconds = c.max_search_s;
  // Known not to fit: a node no IPU holds (costmodel/node_bound.h), or
  // weights that alone exceed the k IPUs' memory (every weight is stored on
  // some IPU, as the search's WeightsExceedMemory and --num-ipus auto
  // count): the DP with memory would find nothing, after rounds that each
  // cost a full pass (the Llama-2-70B shapes on 128 IPUs: 15,628 tile-memory
  // evaluations, 5-12 s), so only the fastest slicing is looked for.
  const double all_memory_bytes =
      static_cast<double>(c.num_ipus) * c.device.tiles_per_ipu() *
      static_cast<double>(c.device.bytes_per_tile());
  options.nothing_fits =
      NodeThatNoIpuHolds(*c.problem, model).has_value() ||
      static_cast<double>(ResidentWeightBytes(*c.problem)) > all_memory_bytes;
  absl::StatusOr<OptimalResult> r =
      OptimalStrategy(*c.problem, model, c.num_ipus, options);
  if (!r.ok()) {
    if (!absl::IsDeadlineExceeded(r.status())) return r.status();
    StrategyResult out = SinkConstantsIfNoWorse(c, raw);
    out.warnings.push_back(absl::StrCat(
        "the optimal strategy found no split within --max-search-seconds ",
        c.max_search_s, "; the raw split is used"));
    out.summary.mutable_optimal()->set_complete(false);
    return out;
  }
  const double seconds = SecondsSince(optimal_start);
  StrategyResult out = SinkConstantsIfNoWorse(c, std::move(r->assignment));
  *out.summary.mutable_optimal() = OptimalSummaryOf(*r, seconds);
  // Its slicings ignore the constraints; Evaluated repaired the chosen one
  // (Note [Constraints in every strategy], constraints.h): the summary
  // gives the repaired split's figures.
  if (c.problem->HasConstraints()) {
    out.summary.mutable_optimal()->set_fits(out.evaluation.fits);
    out.summary.mutable_optimal()->set_bottleneck_s(
        out.evaluation.performance.bottleneck_s);
  }
  return out;
}

namespace {

class Optimal : public Strategy {
 public:
  absl::string_view name() const override { return "optimal"; }
  absl::StatusOr<StrategyResult> Run(const StrategyContext& c) const override {
    ASSIGN_OR_RETURN(Assignment raw, RawSplit(c));
    return OptimalOrRaw(c, raw);
  }
};

}  // namespace

const Strategy& OptimalStrategyInstance() {
  static const Optimal optimal;
  return optimal;
}

}  // namespace autoshard
