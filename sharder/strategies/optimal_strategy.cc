#include "sharder/strategies/optimal_strategy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "graph/shapes.h"
#include "graph/status_macros.h"
#include "sharder/pod/node_bound.h"
#include "sharder/strategies/auto_strategy.h"
#include "sharder/strategies/builtin.h"
#include "sharder/strategies/raw_strategy.h"
#include "sharder/strategies/subgraphs.h"

namespace autoshard {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// One run of the DP of Note [Slicing DP] over a fixed order.
class SliceDp {
 public:
  SliceDp(const ShardingProblem& problem, const DeviceModel& model,
          const SliceOrder& order, int num_ipus,
          std::chrono::steady_clock::time_point deadline,
          int64_t max_fit_evaluations)
      : max_fit_evaluations_(max_fit_evaluations),
        problem_(problem),
        model_(model),
        order_(order),
        k_(num_ipus),
        m_(static_cast<int32_t>(order.units.size())),
        deadline_(deadline) {
    const int n = problem.num_nodes();
    std::vector<int32_t> unit_of_node(n, -1);
    for (int32_t u = 0; u < m_; ++u) {
      for (int32_t node : order.units[u]) unit_of_node[node] = u;
    }
    prefix_s_.assign(m_ + 1, 0);
    for (int32_t u = 0; u < m_; ++u) {
      double t = 0;
      for (int32_t node : order.units[u]) t += model.NodeTime(node);
      prefix_s_[u + 1] = prefix_s_[u] + t;
    }
    // C[x]: bytes of the tensors produced before unit x and read at or after
    // it, as a difference array over [p + 1, q] per tensor.
    std::vector<double> diff(m_ + 2, 0);  // in double: no overflow
    for (int32_t node = 0; node < n; ++node) {
      const int32_t p = unit_of_node[node];
      for (size_t slot = 0; slot < problem.output_bytes[node].size(); ++slot) {
        int32_t q = p;
        for (int32_t c : problem.output_consumers[node][slot])
          q = std::max(q, unit_of_node[c]);
        if (q <= p) continue;
        const int64_t bytes = problem.output_bytes[node][slot];
        diff[p + 1] += static_cast<double>(bytes);
        diff[q + 1] -= static_cast<double>(bytes);
      }
    }
    boundary_bytes_.assign(m_ + 1, 0);
    double running = 0;
    for (int32_t x = 0; x <= m_; ++x) {
      running += diff[x];
      boundary_bytes_[x] = std::max(running, 0.0);
    }
    capacity_bytes_ = static_cast<double>(model.profile().tiles_per_ipu()) *
                      static_cast<double>(model.profile().bytes_per_tile());
    ipu_scratch_.assign(n, 1);
    step_scratch_.assign(n, -1);
    weight_stamp_.assign(problem.weight_size_bytes.size(), -1);
  }

  // Seconds of the stage that runs units [a, b).
  double Time(int32_t a, int32_t b) const {
    return prefix_s_[b] - prefix_s_[a] +
           model_.CopySeconds(boundary_bytes_[a]) +
           model_.CopySeconds(boundary_bytes_[b]);
  }

  // Whether units [a, b) fit one IPU (remembered). Past the budget of
  // evaluations, answers "no" and marks the DP incomplete.
  bool Fits(int32_t a, int32_t b) {
    const int64_t key = static_cast<int64_t>(a) * (m_ + 1) + b;
    auto it = fit_memo_.find(key);
    if (it != fit_memo_.end()) return it->second;
    if (fit_evaluations_ >= max_fit_evaluations_) {
      complete_ = false;
      return false;
    }
    schedule_.clear();
    for (int32_t u = a; u < b; ++u) {
      schedule_.insert(schedule_.end(), order_.units[u].begin(),
                       order_.units[u].end());
    }
    // The plan costs an IPU with its nodes in the graph's topological order
    // (DeviceModel::EvaluateMemory); liveness depends on it, so the same.
    std::sort(schedule_.begin(), schedule_.end(), [&](int32_t x, int32_t y) {
      return problem_.topo_position[x] < problem_.topo_position[y];
    });
    for (int32_t node : schedule_) ipu_scratch_[node] = 0;
    const IpuMemory memory =
        model_.EvaluateSchedule(ipu_scratch_, 0, schedule_, &step_scratch_);
    for (int32_t node : schedule_) ipu_scratch_[node] = 1;
    ++fit_evaluations_;
    fit_memo_.emplace(key, memory.fits);
    return memory.fits;
  }

  // The whole DP: rounds with a growing cap on stage times.
  SliceResult Solve(bool ignore_memory) {
    SliceResult result;
    if (k_ < 1 || k_ > m_) return result;
    double max_boundary = 0;
    for (double c : boundary_bytes_) max_boundary = std::max(max_boundary, c);
    // No stage time exceeds this, so a round with this cap skips nothing.
    const double cap_all = prefix_s_[m_] + 2 * model_.CopySeconds(max_boundary);
    double max_unit_s = 0;
    for (int32_t u = 0; u < m_; ++u)
      max_unit_s = std::max(max_unit_s, prefix_s_[u + 1] - prefix_s_[u]);
    double cap = std::max(prefix_s_[m_] / k_, max_unit_s) * 1.05;
    if (!(cap > 0) || cap > cap_all) cap = cap_all;
    // Every stage time is 0 (only folded constants and no cut bytes): no cap.
    if (!(cap > 0)) cap = kInf;
    while (true) {
      double next_cap = kInf;
      const double value = Round(cap, ignore_memory, &next_cap);
      // Past the evaluation budget a found slicing fits but is not proven
      // the fastest; past the deadline the round did not finish.
      if (value <= cap) {
        result.found = true;
        result.bottleneck_s = value;
        break;
      }
      if (!complete_) break;
      if (cap >= cap_all || cap == kInf) break;  // nothing was skipped
      cap = std::min(cap_all,
                     std::max(cap * 1.25, next_cap == kInf ? 0.0 : next_cap));
    }
    result.complete = complete_;
    if (result.found) {
      result.cuts.assign(k_ + 1, 0);
      int32_t b = m_;
      for (int j = k_; j >= 1; --j) {
        result.cuts[j] = b;
        b = arg_[Index(j, b)];
      }
      result.cuts[0] = 0;
      result.fits = true;
      if (ignore_memory) {
        for (int j = 0; j < k_; ++j)
          result.fits &= Fits(result.cuts[j], result.cuts[j + 1]);
      }
    }
    result.fit_evaluations = fit_evaluations_;
    return result;
  }

 private:
  size_t Index(int j, int32_t b) const {
    return static_cast<size_t>(j) * (m_ + 1) + b;
  }

  // One round with stage times capped at `cap`: the optimum if it is <= cap,
  // else kInf; `next_cap` gets the smallest value skipped for the cap.
  double Round(double cap, bool ignore_memory, double* next_cap) {
    best_.assign(static_cast<size_t>(k_ + 1) * (m_ + 1), kInf);
    arg_.assign(best_.size(), -1);
    best_[Index(0, 0)] = 0;
    const double total = prefix_s_[m_];
    std::vector<Candidate> candidates;
    std::vector<std::pair<double, int32_t>> values;  // (value, a)
    for (int32_t b = 1; b <= m_; ++b) {
      if ((b & 63) == 0 && std::chrono::steady_clock::now() > deadline_) {
        complete_ = false;
        return kInf;
      }
      // IPUs j that can end at b: every IPU gets a unit, and no stage exceeds
      // the cap in compute time alone.
      int jmin = std::max(1, k_ - (m_ - b));
      int jmax = std::min(k_, b);
      if (cap < kInf) {
        jmin = std::max(jmin, static_cast<int>(
                                  std::ceil(prefix_s_[b] / cap * (1 - 1e-12))));
        jmax = std::min(
            jmax, k_ - static_cast<int>(std::ceil((total - prefix_s_[b]) / cap *
                                                  (1 - 1e-12))));
      }
      if (jmin > jmax) continue;
      candidates.clear();
      const int64_t stamp = ++weight_stamp_count_;  // unique over rounds
      double placed_bytes = 0;  // weights and code: see the header
      for (int32_t a = b - 1; a >= 0; --a) {
        if (prefix_s_[b] - prefix_s_[a] > cap) {
          *next_cap = std::min(*next_cap, prefix_s_[b] - prefix_s_[a]);
          break;
        }
        if (!ignore_memory) {
          // The slice's weights and code are placed whatever else it holds,
          // and only grow as the slice does: past the IPU's memory, no
          // longer slice fits either.
          for (int32_t node : order_.units[a]) {
            placed_bytes += static_cast<double>(model_.CodeBytes(node));
            for (int32_t w : problem_.node_weights[node]) {
              if (weight_stamp_[w] == stamp) continue;
              weight_stamp_[w] = stamp;
              placed_bytes +=
                  static_cast<double>(problem_.weight_size_bytes[w]);
            }
          }
          if (placed_bytes > capacity_bytes_) break;
        }
        const double t = Time(a, b);
        if (t > cap) {
          *next_cap = std::min(*next_cap, t);
          continue;
        }
        candidates.push_back({a, t});
      }
      for (int j = jmin; j <= jmax; ++j) {
        if (ignore_memory) {
          // Every slice counts as fitting: the smallest value (on a tie the
          // smaller a), as the sort below would give, in one pass.
          SelectSmallest(j, b, candidates);
          continue;
        }
        values.clear();
        for (const Candidate& c : candidates) {
          const double before = best_[Index(j - 1, c.a)];
          if (before == kInf) continue;
          values.emplace_back(std::max(before, c.time_s), c.a);
        }
        // Smallest value first; on a tie the longer slice (smaller a).
        std::sort(values.begin(), values.end());
        for (auto [value, a] : values) {
          if (ignore_memory || Fits(a, b)) {
            best_[Index(j, b)] = value;
            arg_[Index(j, b)] = a;
            break;
          }
        }
      }
    }
    return best_[Index(k_, m_)];
  }

  struct Candidate {
    int32_t a;
    double time_s;
  };

  // f[j][b] = min over the candidates a of max(f[j-1][a], time(a, b)),
  // ties to the smaller a; O(candidates).
  void SelectSmallest(int j, int32_t b, const std::vector<Candidate>& cands) {
    double best_value = kInf;
    int32_t best_a = -1;
    for (const Candidate& c : cands) {
      const double before = best_[Index(j - 1, c.a)];
      if (before == kInf) continue;
      const double value = std::max(before, c.time_s);
      if (value < best_value || (value == best_value && c.a < best_a)) {
        best_value = value;
        best_a = c.a;
      }
    }
    if (best_a < 0) return;
    best_[Index(j, b)] = best_value;
    arg_[Index(j, b)] = best_a;
  }

  const int64_t max_fit_evaluations_;
  const ShardingProblem& problem_;
  const DeviceModel& model_;
  const SliceOrder& order_;
  const int k_;
  const int32_t m_;
  const std::chrono::steady_clock::time_point deadline_;
  std::vector<double> prefix_s_;        // Σ unit times, m + 1 values
  std::vector<double> boundary_bytes_;  // C[x], m + 1 values
  double capacity_bytes_ = 0;           // tiles x bytes per tile
  std::vector<double> best_;            // f[j][b]
  std::vector<int32_t> arg_;            // the a that gave it
  absl::flat_hash_map<int64_t, bool> fit_memo_;
  int64_t fit_evaluations_ = 0;
  bool complete_ = true;
  std::vector<int32_t> ipu_scratch_, step_scratch_, schedule_;
  std::vector<int64_t> weight_stamp_;  // the scan that last counted it
  int64_t weight_stamp_count_ = 0;
};

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
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(options.max_seconds));
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
  options.nothing_fits = pod::NodeThatNoIpuHolds(*c.problem, model).has_value();
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
