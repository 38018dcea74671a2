#include "solver/bound/cut_bound.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <vector>

#include "solver/bound/window_cut.h"
#include "solver/strategies/closure_cuts.h"

namespace autoshard {
namespace {

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

// The DP of Note [Cut bound] over buckets [lo[b], hi[b]] whose boundaries
// copy at least copy_s[b] seconds (infinity: no ideal there). `chain`
// (optional): the buckets of a best chain's boundaries I_0..I_{k-2}.
double ChainBound(const std::vector<double>& lo, const std::vector<double>& hi,
                  const std::vector<double>& copy_s, double total_s, int k,
                  std::vector<int>* chain = nullptr) {
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
      for (int a = 0; a <= b; ++a) {
        if (f[a] >= next[b]) continue;  // max(f[a], ...) cannot be less
        const double stage =
            std::max(0.0, lo[b] - hi[a]) + copy_s[a] + copy_s[b];
        const double value = std::max(f[a], stage);
        if (value < next[b]) {
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
  return best;
}

// The buckets of Note [Cut bound]: [lo[b], hi[b]] and the copy seconds of
// their smallest cut (infinity: no ideal there).
struct Buckets {
  std::vector<double> lo, hi, copy_s;
};

Buckets PlainBuckets(ClosureCuts& cuts, const DeviceModel& model,
                     const CutBoundOptions& options, int split,
                     CutBoundResult* result) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const int cut_buckets = options.buckets, nb = cut_buckets * split;
  const double width = cuts.total_s() / nb;
  Buckets k{std::vector<double>(nb), std::vector<double>(nb),
            std::vector<double>(nb, 0)};
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
  double value = ChainBound(b->lo, b->hi, b->copy_s, cuts.total_s(), k, &chain);
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
        ChainBound(b->lo, b->hi, b->copy_s, cuts.total_s(), k, &chain);
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
  Buckets b = PlainBuckets(cuts, model, options, options.dp_split, result);
  const double plain = ChainBound(b.lo, b.hi, b.copy_s, cuts.total_s(), k);
  if (plain >= upper_s * 0.99 || options.window_groups <= 0) {
    return plain - cuts.tolerance_s();
  }
  WindowBuckets(cuts, model, options, result, &b);
  const double windows =
      std::max(plain, ChainBound(b.lo, b.hi, b.copy_s, cuts.total_s(), k));
  if (windows - cuts.tolerance_s() >= upper_s * 0.99 ||
      options.branched_sides <= 0) {
    return windows - cuts.tolerance_s();
  }
  return std::max(windows, BranchedBuckets(cuts, problem, model, k, upper_s,
                                           options, result, &b)) -
         cuts.tolerance_s();
}

// Note [Revisit cut bound]: whether a chain of buckets has every stage
// 1..k-1 at most t and IPU 0's two stages together at most t.
bool RevisitFeasible(const Buckets& b, double total_s, int k, double t) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const int nb = static_cast<int>(b.lo.size());
  // g[x]: the least time of stage 0 over chains I_0..I_d with I_d in x.
  std::vector<double> g(nb, kInf), next(nb);
  for (int x = 0; x < nb; ++x) {
    const double head = b.lo[x] + b.copy_s[x];
    if (head <= t) g[x] = head;
  }
  for (int d = 1; d < k; ++d) {
    for (int y = 0; y < nb; ++y) {
      next[y] = kInf;
      if (b.copy_s[y] == kInf) continue;
      for (int x = 0; x <= y; ++x) {
        if (g[x] >= next[y]) continue;
        const double stage =
            std::max(0.0, b.lo[y] - b.hi[x]) + b.copy_s[x] + b.copy_s[y];
        if (stage <= t) next[y] = g[x];
      }
    }
    g.swap(next);
  }
  for (int x = 0; x < nb; ++x) {
    if (g[x] == kInf) continue;
    if (g[x] + std::max(0.0, total_s - b.hi[x]) + b.copy_s[x] <= t) return true;
  }
  return false;
}

// The largest t in [lower_s, upper_s] RevisitFeasible rules out (bisection),
// lower_s when none is.
double RevisitBisection(const Buckets& b, double total_s, int k, double lower_s,
                        double upper_s, int steps, double tolerance_s) {
  double lo = lower_s, hi = upper_s;
  if (RevisitFeasible(b, total_s, k, lo + tolerance_s)) return lower_s;
  for (int step = 0; step < steps; ++step) {
    const double mid = (lo + hi) / 2;
    (RevisitFeasible(b, total_s, k, mid + tolerance_s) ? hi : lo) = mid;
  }
  return lo;
}

}  // namespace

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
  ClosureCuts cuts(problem, model);
  const double bound =
      problem.copies_through_host
          ? HostBound(cuts, model, num_ipus, cheap, upper_s, options, &result)
          : AdjacentBound(cuts, problem, model, num_ipus, upper_s, options,
                          &result);
  result.work = cuts.work();
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
  Buckets b = PlainBuckets(cuts, model, options, 1, &result);
  double bound = RevisitBisection(b, cuts.total_s(), num_ipus, cheap, upper_s,
                                  options.bisection_steps, cuts.tolerance_s());
  if (bound < upper_s * 0.99 && options.window_groups > 0) {
    WindowBuckets(cuts, model, options, &result, &b);
    bound = std::max(
        bound, RevisitBisection(b, cuts.total_s(), num_ipus, bound, upper_s,
                                options.bisection_steps, cuts.tolerance_s()));
  }
  result.work = cuts.work();
  result.improved = bound > cheap;
  result.bound_s = std::max(cheap, bound);
  return result;
}

}  // namespace autoshard
