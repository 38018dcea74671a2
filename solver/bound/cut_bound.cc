#include "solver/bound/cut_bound.h"

#include <algorithm>
#include <limits>
#include <vector>

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
// copy at least copy_s[b] seconds (infinity: no ideal there).
double ChainBound(const std::vector<double>& lo, const std::vector<double>& hi,
                  const std::vector<double>& copy_s, double total_s, int k) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const int nb = static_cast<int>(lo.size());
  // f[b]: the least bottleneck of IPUs 0..d with P(I_d) in bucket b.
  std::vector<double> f(nb), next(nb);
  for (int b = 0; b < nb; ++b) f[b] = lo[b] + copy_s[b];
  for (int d = 1; d + 1 < k; ++d) {
    for (int b = 0; b < nb; ++b) {
      next[b] = kInf;
      if (copy_s[b] == kInf) continue;
      for (int a = 0; a <= b; ++a) {
        const double stage =
            std::max(0.0, lo[b] - hi[a]) + copy_s[a] + copy_s[b];
        next[b] = std::min(next[b], std::max(f[a], stage));
      }
    }
    f.swap(next);
  }
  double best = kInf;
  for (int a = 0; a < nb; ++a)
    best = std::min(best, std::max(f[a], total_s - hi[a] + copy_s[a]));
  return best;
}

// PopART's adjacent copies: the DP over compute buckets of Note [Cut bound];
// when it leaves the plan (`upper_s`) more than 1% above, again with the
// window cuts of Note [Window cuts] over groups of buckets.
double AdjacentBound(ClosureCuts& cuts, const DeviceModel& model, int k,
                     double upper_s, const CutBoundOptions& options,
                     CutBoundResult* result) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const int nb = options.buckets;
  const double width = cuts.total_s() / nb;
  std::vector<double> lo(nb), hi(nb), copy_s(nb, 0);
  for (int b = 0; b < nb; ++b) {
    lo[b] = b * width;
    hi[b] = b + 1 == nb ? cuts.total_s() : (b + 1) * width;
    if (cuts.work() > options.max_work) {
      result->out_of_work = true;  // the cuts left count 0: still valid
      continue;
    }
    const int64_t cut = cuts.MinCut(lo[b], hi[b]);
    copy_s[b] = cut < 0 ? kInf : model.CopySeconds(static_cast<double>(cut));
  }
  const double plain = ChainBound(lo, hi, copy_s, cuts.total_s(), k);
  if (plain >= upper_s * 0.99 || options.window_groups <= 0) {
    return plain - cuts.tolerance_s();
  }
  cuts.set_max_work(options.max_work);
  const int per = std::max(1, nb / options.window_groups);
  for (int g = 0; g < nb && cuts.work() <= options.max_work; g += per) {
    const int last = std::min(nb, g + per) - 1;
    const double bytes = cuts.WindowCut(lo[g], hi[last]);
    if (bytes <= 0) continue;
    for (int b = g; b <= last; ++b)
      copy_s[b] = std::max(copy_s[b], model.CopySeconds(bytes));
  }
  result->out_of_work |= cuts.work() > options.max_work;
  return std::max(plain, ChainBound(lo, hi, copy_s, cuts.total_s(), k)) -
         cuts.tolerance_s();
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
          : AdjacentBound(cuts, model, num_ipus, upper_s, options, &result);
  result.work = cuts.work();
  result.improved = bound > cheap;
  result.bound_s = std::max(cheap, bound);
  return result;
}

}  // namespace autoshard
