#include "solver/bound/cut_bound.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <limits>
#include <vector>

#include "solver/bound/end_windows.h"
#include "solver/bound/window_cut.h"
#include "solver/strategies/closure_cuts.h"

namespace autoshard {
namespace internal {

double ChainBound(const std::vector<double>& lo, const std::vector<double>& hi,
                  const std::vector<double>& copy_s, double total_s, int k,
                  double cap_s, std::vector<int>* chain) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const int nb = static_cast<int>(lo.size());
  // f[b]: the least bottleneck of IPUs 0..d with P(I_d) in bucket b;
  // from[d][b]: the bucket of I_{d-1} it came from.
  std::vector<double> f(nb), next(nb);
  std::vector<std::vector<int>> from;
  if (chain != nullptr) from.assign(std::max(0, k - 1), std::vector<int>(nb));
  for (int b = 0; b < nb; ++b) f[b] = lo[b] + copy_s[b];
  for (int d = 1; d + 1 < k; ++d) {
    for (int b = 0; b < nb; ++b) {
      next[b] = kInf;
      if (copy_s[b] == kInf) continue;
      // Note [Capped chain DP]: from b down, the stage's compute only grows;
      // ties go to the smallest a.
      for (int a = b; a >= 0; --a) {
        const double span = lo[b] - hi[a];
        if (span > next[b] || span > cap_s) break;
        if (f[a] > next[b]) continue;  // max(f[a], ...) cannot be less
        const double stage = std::max(0.0, span) + copy_s[a] + copy_s[b];
        const double value = std::max(f[a], stage);
        if (value <= next[b]) {
          next[b] = value;
          if (chain != nullptr) from[d][b] = a;
        }
      }
    }
    f.swap(next);
  }
  double best = kInf;
  int last = 0;
  for (int a = 0; a < nb; ++a) {
    const double value = std::max(f[a], total_s - hi[a] + copy_s[a]);
    if (value < best) {
      best = value;
      last = a;
    }
  }
  if (chain != nullptr && k >= 2 && best < kInf) {
    chain->assign(k - 1, 0);
    (*chain)[k - 2] = last;
    for (int d = k - 2; d > 0; --d) (*chain)[d - 1] = from[d][(*chain)[d]];
  } else if (chain != nullptr) {
    chain->clear();
  }
  // Note [Capped chain DP]: min(result, cap) is exact.
  return std::min(best, cap_s);
}

}  // namespace internal

namespace {

using internal::ChainBound;

// Through host memory: whether a split with every stage time <= T can
// exist, by the windows of Note [Cut bound] (copies: Σ stage times only).
bool HostFeasible(ClosureCuts& cuts, const DeviceModel& model, int k,
                  double t) {
  double most = 0;
  for (int j = 0; j + 1 < k; ++j) {
    const double lo = cuts.total_s() - (k - 1 - j) * t, hi = (j + 1) * t;
    if (lo > hi + cuts.tolerance_s()) return false;
    const int64_t cut = cuts.MinCut(lo, hi);
    if (cut < 0) return false;
    most = std::max(most, model.CopySeconds(static_cast<double>(cut)));
  }
  return cuts.total_s() + 2 * most <= k * t + cuts.tolerance_s();
}

double HostBound(ClosureCuts& cuts, const DeviceModel& model, int k,
                 double cheap, double upper, const CutBoundOptions& options,
                 CutBoundResult* result) {
  double lo = cheap, hi = upper;
  if (HostFeasible(cuts, model, k, lo)) return cheap;
  for (int step = 0; step < options.bisection_steps; ++step) {
    if (cuts.work() > options.max_work) {
      result->out_of_work = true;
      break;
    }
    const double mid = (lo + hi) / 2;
    (HostFeasible(cuts, model, k, mid) ? hi : lo) = mid;
  }
  return lo;
}

// The buckets of Note [Cut bound]: [lo[b], hi[b]] and the copy seconds of
// their smallest cut (infinity: no ideal there).
struct Buckets {
  std::vector<double> lo, hi, copy_s;
  double pooled_s = 0;  // Note [Pooled late branches]
};

// Note [Pooled late branches]: the late branches of Note [Late branches]
// are dropped, but every plan still runs their compute D on some IPU; a
// plan restricted to the rest keeps each IPU's time at least its stage's
// time there plus the dropped compute it holds. Summed over the k IPUs, a
// plan of bottleneck t has k t >= sum of its stages' times + D = W + D +
// sum over stages of its copies, each boundary's copy counted on both its
// sides (the revisit chain's k boundaries too, IPU 0's two stages summed).
// So a chain of buckets b_j whose copies sum_j 2 copy_s[b_j] exceed
// k t - W - D admits no such plan. The DPs keep, beside the reach (or the
// least stage-0 time), per bucket the least copies sum over the chains
// whose steps the kept reach allows: each a best over perhaps different
// chains, so a real chain's values are never better (a relaxation, as Note
// [Reach DP]'s). Off (no sum kept) when D is 0.

// Note [Reach DP]: whether some chain x_0 <= ... <= x_{k-2} with x_j in
// bucket b_j has x_0 + copy_s[b_0] <= t, every middle stage
// x_d - x_{d-1} + copy_s[b_{d-1}] + copy_s[b_d] <= t and the last
// W - x_{k-2} + copy_s[b_{k-2}] <= t; per bucket the largest x_d reachable.
bool ReachFeasible(const Buckets& b, double total_s, int k, double t) {
  constexpr double kNone = -std::numeric_limits<double>::infinity();
  const int nb = static_cast<int>(b.lo.size());
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> reach(nb, kNone), next(nb);
  // Note [Pooled late branches]: the least copies sum per bucket.
  const bool pooled = b.pooled_s > 0;
  std::vector<double> sum(pooled ? nb : 0, kInf), next_sum(sum.size());
  for (int y = 0; y < nb; ++y) {
    const double x = std::min(b.hi[y], t - b.copy_s[y]);
    if (x >= b.lo[y]) {
      reach[y] = x;
      if (pooled) sum[y] = 2 * b.copy_s[y];
    }
  }
  // Without the pooled sums the best x for y is the largest
  // reach[x] - copy_s[x] over the window [first, y], both ends only rising
  // with y: a sliding-window maximum (a deque of candidates, decreasing),
  // O(buckets) a stage instead of O(buckets x window) (at 256 IPUs a stage
  // may span a sixth of the graph's buckets).
  std::deque<int> window;
  for (int d = 1; d + 1 < k; ++d) {
    // A stage spans at most t of compute: only buckets from `first` on.
    int first = 0, pushed = 0;
    window.clear();
    for (int y = 0; y < nb; ++y) {
      next[y] = kNone;
      if (pooled) next_sum[y] = kInf;
      while (first < y && b.hi[first] < b.lo[y] - t) ++first;
      if (!pooled) {
        for (; pushed <= y; ++pushed) {
          if (reach[pushed] == kNone) continue;
          const double value = reach[pushed] - b.copy_s[pushed];
          while (!window.empty() &&
                 reach[window.back()] - b.copy_s[window.back()] <= value)
            window.pop_back();
          window.push_back(pushed);
        }
        while (!window.empty() && window.front() < first) window.pop_front();
      }
      if (!(b.copy_s[y] <= t)) continue;
      double best = kNone, least = kInf;
      if (!pooled) {
        if (!window.empty()) {
          const int x = window.front();
          best = std::min(b.hi[y], reach[x] + t - b.copy_s[x] - b.copy_s[y]);
        }
      } else {
        for (int x = first; x <= y; ++x) {
          if (reach[x] == kNone) continue;
          const double position =
              std::min(b.hi[y], reach[x] + t - b.copy_s[x] - b.copy_s[y]);
          best = std::max(best, position);
          if (position >= b.lo[y]) least = std::min(least, sum[x]);
        }
      }
      if (best >= b.lo[y]) {
        next[y] = best;
        if (pooled) next_sum[y] = least + 2 * b.copy_s[y];
      }
    }
    reach.swap(next);
    sum.swap(next_sum);
  }
  for (int x = 0; x < nb; ++x) {
    if (reach[x] == kNone || total_s - reach[x] + b.copy_s[x] > t) continue;
    if (pooled && total_s + b.pooled_s + sum[x] > k * t) continue;
    return true;
  }
  return false;
}

// The largest t in [lower_s, upper_s] ReachFeasible rules out (bisection to
// `steps` halvings), lower_s when none is.
double ReachBisection(const Buckets& b, double total_s, int k, double lower_s,
                      double upper_s, int steps, double tolerance_s) {
  double lo = lower_s, hi = upper_s;
  if (ReachFeasible(b, total_s, k, lo + tolerance_s)) return lower_s;
  for (int step = 0; step < steps; ++step) {
    const double mid = (lo + hi) / 2;
    (ReachFeasible(b, total_s, k, mid + tolerance_s) ? hi : lo) = mid;
  }
  return lo;
}

Buckets PlainBuckets(ClosureCuts& cuts, const DeviceModel& model, int num_ipus,
                     const CutBoundOptions& options, int split,
                     CutBoundResult* result) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const int cut_buckets = options.buckets, nb = cut_buckets * split;
  const double width = cuts.total_s() / nb;
  Buckets k{std::vector<double>(nb), std::vector<double>(nb),
            std::vector<double>(nb, 0)};
  k.pooled_s = options.pooled_s;
  for (int b = 0; b < nb; ++b) {
    k.lo[b] = b * width;
    k.hi[b] = b + 1 == nb ? cuts.total_s() : (b + 1) * width;
  }
  // Note [Split buckets]: one smallest cut per `split` DP buckets.
  for (int c = 0; c < cut_buckets; ++c) {
    if (cuts.work() > options.max_work) {
      result->out_of_work = true;  // the cuts left count 0: still valid
      continue;
    }
    const int first = c * split, last = first + split - 1;
    const int64_t cut = cuts.MinCut(k.lo[first], k.hi[last]);
    const double copy_s =
        cut < 0 ? kInf : model.CopySeconds(static_cast<double>(cut));
    for (int b = first; b <= last; ++b) k.copy_s[b] = copy_s;
  }
  // Note [Exact end windows] (end_windows.h).
  const EndWindows ends =
      ExactEndWindows(cuts.problem(), model, num_ipus, k.lo, k.hi,
                      cuts.tolerance_s(), options.end_ideals);
  for (int b = 0; b < nb; ++b) {
    const int64_t least = ends.least_bytes[b];
    if (least == EndWindows::kNoIdeal) {
      k.copy_s[b] = kInf;
    } else if (least > 0) {
      k.copy_s[b] =
          std::max(k.copy_s[b], model.CopySeconds(static_cast<double>(least)));
    }
  }
  return k;
}

// Note [Window cuts] raise the buckets' copy seconds.
void WindowBuckets(ClosureCuts& cuts, const DeviceModel& model,
                   const CutBoundOptions& options, CutBoundResult* result,
                   Buckets* k) {
  const int nb = static_cast<int>(k->lo.size());
  cuts.set_max_work(options.max_work);
  const int per = std::max(1, nb / options.window_groups);
  for (int g = 0; g < nb && cuts.work() <= options.max_work; g += per) {
    const int last = std::min(nb, g + per) - 1;
    const double bytes = cuts.WindowCut(k->lo[g], k->hi[last]);
    if (bytes <= 0) continue;
    for (int b = g; b <= last; ++b)
      k->copy_s[b] = std::max(k->copy_s[b], model.CopySeconds(bytes));
  }
  result->out_of_work |= cuts.work() > options.max_work;
}

// Note [Chain-directed window cuts]: refines the windows around the
// buckets that the DP's best chains pass through, a group of `per` buckets
// first, then ever narrower (Note [Narrowing window cuts]); returns the last
// DP's value.
double BranchedBuckets(ClosureCuts& cuts, const ShardingProblem& problem,
                       const DeviceModel& model, int k, double upper_s,
                       const CutBoundOptions& options, CutBoundResult* result,
                       Buckets* b) {
  const int nb = static_cast<int>(b->lo.size());
  const int per = std::max(1, nb / std::max(1, options.window_groups));
  // width[x]: the buckets of the narrowest window refined around bucket x
  // (0: none yet); the next is a quarter of it, aligned to multiples.
  std::vector<int> width(nb, 0);
  BranchedCutOptions branched;
  branched.max_sides = options.branched_sides;
  branched.deadline = options.branched_deadline;
  // Its own work budget after the window cuts' (Note [Split buckets]).
  const int64_t max_work = cuts.work() + options.branched_work;
  branched.max_work = max_work;
  std::vector<int> chain;
  double value =
      ChainBound(b->lo, b->hi, b->copy_s, cuts.total_s(), k, upper_s, &chain);
  const double start = value;
  int stalls = 0;  // rounds in a row that raised the DP by less than 0.1%
  // The boundaries of the chain's critical stages (within 0.1% of its
  // value): only raising their copies can raise the DP's value.
  auto critical = [&](int d) {
    const int last = static_cast<int>(chain.size()) - 1;
    auto stage = [&](int s) {  // IPU s of the chain (0..k-1)
      if (s == 0) return b->lo[chain[0]] + b->copy_s[chain[0]];
      if (s > last)
        return cuts.total_s() - b->hi[chain[last]] + b->copy_s[chain[last]];
      return std::max(0.0, b->lo[chain[s]] - b->hi[chain[s - 1]]) +
             b->copy_s[chain[s - 1]] + b->copy_s[chain[s]];
    };
    return std::max(stage(d), stage(d + 1)) >= value * 0.999;
  };
  while (value - cuts.tolerance_s() < upper_s * 0.99) {
    bool any = false;
    for (int d = 0; d < static_cast<int>(chain.size()); ++d) {
      if (!critical(d)) continue;
      const int x = chain[d];
      if (width[x] == 1) continue;
      if (cuts.work() > max_work ||
          std::chrono::steady_clock::now() >= options.branched_deadline) {
        result->out_of_work = true;
        break;
      }
      const int w = width[x] == 0 ? per : std::max(1, width[x] / 4);
      any = true;
      ++result->branched_groups;
      const int first = x / w * w, last = std::min(nb, first + w) - 1;
      const BranchedCut cut = BranchedWindowCut(
          cuts, problem, model, b->lo[first], b->hi[last], branched);
      const double copy_s = model.CopySeconds(cut.bytes);
      for (int y = first; y <= last; ++y) {
        b->copy_s[y] = std::max(b->copy_s[y], copy_s);
        width[y] = width[y] == 0 ? w : std::min(width[y], w);
      }
    }
    // A round the budget cut short still raised the copies it refined.
    if (!any && !result->out_of_work) break;
    // Raised copy seconds only raise the DP's value (it is a min of maxes
    // of sums of them): keep the largest anyway. Two rounds in a row that
    // raised it by less than 0.1% end the search (the cheap early exit; one
    // is not enough, as a group's proof often moves the chain to a
    // neighbouring bucket that only a narrower window lifts).
    const double next =
        ChainBound(b->lo, b->hi, b->copy_s, cuts.total_s(), k, upper_s, &chain);
    stalls = next < value * 1.001 ? stalls + 1 : 0;
    value = std::max(value, next);
    if (stalls >= 2 || result->out_of_work) break;
  }
  result->branched = value > start;
  return value;
}

// PopART's adjacent copies: the DP over compute buckets of Note [Cut bound];
// when it leaves the plan (`upper_s`) more than 1% above, again with the
// window cuts of Note [Window cuts] over groups of buckets.
double AdjacentBound(ClosureCuts& cuts, const ShardingProblem& problem,
                     const DeviceModel& model, int k, double upper_s,
                     const CutBoundOptions& options, CutBoundResult* result) {
  Buckets b = PlainBuckets(cuts, model, k, options, options.dp_split, result);
  double bound = ChainBound(b.lo, b.hi, b.copy_s, cuts.total_s(), k, upper_s);
  // Note [Reach DP]: from the chain bound (which it never proves less than)
  // up to the plan.
  auto reach = [&] {
    if (bound < upper_s) {
      bound = std::max(
          bound, ReachBisection(b, cuts.total_s(), k, bound, upper_s,
                                options.bisection_steps, cuts.tolerance_s()));
    }
  };
  if (options.reach_dp) reach();
  if (bound >= upper_s * 0.99 || options.window_groups <= 0) {
    return bound - cuts.tolerance_s();
  }
  WindowBuckets(cuts, model, options, result, &b);
  bound = std::max(
      bound, ChainBound(b.lo, b.hi, b.copy_s, cuts.total_s(), k, upper_s));
  if (options.reach_dp) reach();
  if (bound - cuts.tolerance_s() >= upper_s * 0.99 ||
      options.branched_sides <= 0) {
    return bound - cuts.tolerance_s();
  }
  bound = std::max(bound, BranchedBuckets(cuts, problem, model, k, upper_s,
                                          options, result, &b));
  // The refined buckets' copies are still lower bounds: Note [Reach DP]
  // on them too.
  if (options.reach_dp) reach();
  return bound - cuts.tolerance_s();
}

// Note [Revisit cut bound]: whether a chain of buckets has every stage
// 1..k-1 at most t and IPU 0's two stages together at most t; with
// `reach`, also Note [Reach DP]'s positions (per bucket the least stage-0
// time and the largest position over the chains that reach it, perhaps two
// different chains: a relaxation). A stage spans at most t of compute, so
// only buckets less than t apart are paired.
bool RevisitFeasible(const Buckets& b, double total_s, int k, double t,
                     bool reach) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const int nb = static_cast<int>(b.lo.size());
  // g[x]: the least time of stage 0 over chains I_0..I_d with I_d in x;
  // far[x]: the largest P(I_d) of such chains whose stages keep Note [Reach
  // DP]'s constraints, -infinity when none.
  std::vector<double> g(nb, kInf), next(nb), far(nb, -kInf), next_far(nb);
  // Note [Pooled late branches]: the least copies sum per bucket.
  const bool pooled = b.pooled_s > 0;
  std::vector<double> sum(pooled ? nb : 0, kInf), next_sum(sum.size());
  for (int x = 0; x < nb; ++x) {
    const double head = b.lo[x] + b.copy_s[x];
    if (head <= t) {
      g[x] = head;
      far[x] = std::min(b.hi[x], t - b.copy_s[x]);
      if (pooled) sum[x] = 2 * b.copy_s[x];
    }
  }
  for (int d = 1; d < k; ++d) {
    int first = 0;
    for (int y = 0; y < nb; ++y) {
      next[y] = kInf;
      next_far[y] = -kInf;
      if (pooled) next_sum[y] = kInf;
      while (first < y && b.hi[first] < b.lo[y] - t) ++first;
      if (!(b.copy_s[y] <= t)) continue;
      for (int x = first; x <= y; ++x) {
        if (g[x] == kInf) continue;
        const double stage =
            std::max(0.0, b.lo[y] - b.hi[x]) + b.copy_s[x] + b.copy_s[y];
        if (stage > t) continue;
        double position = b.hi[y];
        if (reach) {
          position = std::min(b.hi[y], far[x] + t - b.copy_s[x] - b.copy_s[y]);
          if (position < b.lo[y]) continue;
        }
        next[y] = std::min(next[y], g[x]);
        next_far[y] = std::max(next_far[y], position);
        if (pooled)
          next_sum[y] = std::min(next_sum[y], sum[x] + 2 * b.copy_s[y]);
      }
    }
    g.swap(next);
    far.swap(next_far);
    sum.swap(next_sum);
  }
  for (int x = 0; x < nb; ++x) {
    if (g[x] == kInf) continue;
    if (pooled && total_s + b.pooled_s + sum[x] > k * t) continue;
    const double last = reach ? far[x] : b.hi[x];
    if (g[x] + std::max(0.0, total_s - last) + b.copy_s[x] <= t) return true;
  }
  return false;
}

// The largest t in [lower_s, upper_s] RevisitFeasible rules out (bisection),
// lower_s when none is.
double RevisitBisection(const Buckets& b, double total_s, int k, double lower_s,
                        double upper_s, int steps, double tolerance_s,
                        bool reach) {
  double lo = lower_s, hi = upper_s;
  if (RevisitFeasible(b, total_s, k, lo + tolerance_s, reach)) return lower_s;
  for (int step = 0; step < steps; ++step) {
    const double mid = (lo + hi) / 2;
    (RevisitFeasible(b, total_s, k, mid + tolerance_s, reach) ? hi : lo) = mid;
  }
  return lo;
}

// Note [Revisit cut bound] on `cuts`' problem: the bisection over plain
// buckets and, when it leaves the plan more than 1% above, over window
// cuts (`window_groups` groups).
double RevisitAdjacent(ClosureCuts& cuts, const DeviceModel& model, int k,
                       double lower_s, double upper_s,
                       const CutBoundOptions& options, CutBoundResult* result) {
  Buckets b = PlainBuckets(cuts, model, k, options, 1, result);
  double bound = RevisitBisection(b, cuts.total_s(), k, lower_s, upper_s,
                                  options.bisection_steps, cuts.tolerance_s(),
                                  options.reach_dp);
  if (bound < upper_s * 0.99 && options.window_groups > 0) {
    WindowBuckets(cuts, model, options, result, &b);
    bound =
        std::max(bound, RevisitBisection(b, cuts.total_s(), k, bound, upper_s,
                                         options.bisection_steps,
                                         cuts.tolerance_s(), options.reach_dp));
  }
  return bound;
}

// Note [Late branches]: `bound_on(cuts, reduced problem, model, options)`
// on the problem without its late branches, first with `options`' window
// groups, then, when that proved more than `lower_s` and still leaves the plan
// more than 1% above, with late_window_groups window cuts (the costly part:
// only where the relaxation helps); lower_s when nothing is dropped.
template <typename BoundOn>
double LateBound(const ShardingProblem& problem, const DeviceModel& model,
                 double lower_s, double upper_s, const CutBoundOptions& options,
                 CutBoundResult* result, const BoundOn& bound_on) {
  double dropped_s = 0;
  const ShardingProblem late = DropLateBranches(
      problem, model, options.late_share * upper_s, &dropped_s);
  if (!(dropped_s > 0)) return lower_s;
  // Its times are node_time_s, which the model takes over the precision's
  // peak (as the filler bound's reduced problem).
  const DeviceModel late_model(late, model.profile(), Precision::kFp32);
  ClosureCuts cuts(late, late_model);
  CutBoundOptions o = options;
  o.max_work = options.late_max_work;
  // Note [Pooled late branches]: D still runs on some IPU.
  o.pooled_s = options.pool_late ? dropped_s : 0;
  // Note [Chain-directed window cuts] runs on the whole graph only: its
  // clock is the cascade's, spent there.
  o.branched_sides = 0;
  o.dp_split = 1;  // Note [Split buckets]: the whole graph's only
  double bound = std::max(lower_s, bound_on(cuts, late, late_model, o));
  if (bound > std::max(lower_s, options.known_s) * (1 + 1e-9) &&
      bound < upper_s * 0.99 && o.window_groups > 0 &&
      o.window_groups < options.late_window_groups) {
    o.window_groups = options.late_window_groups;
    bound = std::max(bound, bound_on(cuts, late, late_model, o));
  }
  result->work += cuts.work();
  return bound;
}

}  // namespace

std::vector<double> HeaviestPathsOutS(const ShardingProblem& problem,
                                      const DeviceModel& model) {
  std::vector<double> desc_s(problem.num_nodes(), 0);
  for (auto it = problem.topo_order.rbegin(); it != problem.topo_order.rend();
       ++it) {
    const int32_t v = *it;
    for (int32_t c : problem.consumers[v])
      desc_s[v] = std::max(desc_s[v], desc_s[c]);
    desc_s[v] += model.NodeTime(v);
  }
  return desc_s;
}

ShardingProblem DropLateBranches(const ShardingProblem& problem,
                                 const DeviceModel& model, double max_s,
                                 double* dropped_s) {
  const int n = problem.num_nodes();
  const std::vector<double> desc_s = HeaviestPathsOutS(problem, model);
  ShardingProblem r = problem;
  r.node_time_s.assign(n, 0);
  for (int32_t v = 0; v < n; ++v) r.node_time_s[v] = model.NodeTime(v);
  // desc_s never rises along an edge, so the set is closed under readers.
  std::vector<uint8_t> late(n, 0);
  double total = 0;
  for (int32_t v = 0; v < n; ++v) {
    if (problem.is_constant[v] || desc_s[v] > max_s) continue;
    late[v] = 1;
    total += model.NodeTime(v);
  }
  for (int32_t v = 0; v < n; ++v) {
    if (!late[v]) continue;
    // A folded constant of no time that reads nothing: out of the lattice
    // with its tensors, which only late nodes read.
    r.is_constant[v] = 1;
    r.node_time_s[v] = 0;
    for (int32_t u : problem.producers[v]) {
      auto& consumers = r.consumers[u];
      consumers.erase(std::remove(consumers.begin(), consumers.end(), v),
                      consumers.end());
      for (auto& readers : r.output_consumers[u])
        readers.erase(std::remove(readers.begin(), readers.end(), v),
                      readers.end());
    }
    r.producers[v].clear();
    r.input_tensors[v].clear();
  }
  if (dropped_s) *dropped_s = total;
  return r;
}

CutBoundResult CutBound(const ShardingProblem& problem,
                        const DeviceModel& model, int num_ipus, double upper_s,
                        const CutBoundOptions& options) {
  CutBoundResult result;
  const double cheap = model.LowerBound(num_ipus);
  result.bound_s = cheap;
  if (num_ipus < 2 || upper_s <= cheap ||
      problem.num_nodes() > options.max_nodes) {
    return result;
  }
  double bound = cheap;
  if (!options.late_only) {
    ClosureCuts cuts(problem, model);
    bound =
        problem.copies_through_host
            ? HostBound(cuts, model, num_ipus, cheap, upper_s, options, &result)
            : AdjacentBound(cuts, problem, model, num_ipus, upper_s, options,
                            &result);
    result.work = cuts.work();
  }
  if (!problem.copies_through_host && options.late_share > 0 &&
      std::max(bound, options.known_s) < upper_s * 0.99) {
    bound = LateBound(problem, model, bound, upper_s, options, &result,
                      [&](ClosureCuts& c, const ShardingProblem& p,
                          const DeviceModel& m, const CutBoundOptions& o) {
                        return AdjacentBound(c, p, m, num_ipus, upper_s, o,
                                             &result);
                      });
  }
  result.improved = bound > cheap;
  result.bound_s = std::max(cheap, bound);
  return result;
}

}  // namespace autoshard

namespace autoshard {

CutBoundResult RevisitCutBound(const ShardingProblem& problem,
                               const DeviceModel& model, int num_ipus,
                               double upper_s, const CutBoundOptions& options) {
  CutBoundResult result;
  const double cheap = model.LowerBound(num_ipus);
  result.bound_s = cheap;
  if (num_ipus < 2 || upper_s <= cheap || problem.copies_through_host ||
      problem.num_nodes() > options.max_nodes) {
    return result;
  }
  ClosureCuts cuts(problem, model);
  double bound =
      RevisitAdjacent(cuts, model, num_ipus, cheap, upper_s, options, &result);
  result.work = cuts.work();
  // Note [Late branches]: a plan whose last stage returns to IPU 0,
  // restricted to the rest, is one of the reduced problem whose every IPU is
  // no slower.
  if (options.late_share > 0 &&
      std::max(bound, options.known_s) < upper_s * 0.99) {
    const double before = bound;
    bound = LateBound(problem, model, bound, upper_s, options, &result,
                      [&](ClosureCuts& c, const ShardingProblem&,
                          const DeviceModel& m, const CutBoundOptions& o) {
                        return RevisitAdjacent(c, m, num_ipus, before, upper_s,
                                               o, &result);
                      });
  }
  result.improved = bound > cheap;
  result.bound_s = std::max(cheap, bound);
  return result;
}

}  // namespace autoshard
