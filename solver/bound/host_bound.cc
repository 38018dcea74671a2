#include "solver/bound/host_bound.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "solver/strategies/ideal_lattice.h"

namespace autoshard {

double HostChainBound(const ShardingProblem& problem, const DeviceModel& model,
                      int num_ipus, double lower_s, double upper_s,
                      int64_t max_ideals, const ShardingProblem* values_problem,
                      const DeviceModel* values_model, bool* ran) {
  if (ran != nullptr) *ran = false;
  const int h = problem.num_host_devices;
  if (num_ipus < 1 || h < 0 || !(upper_s > lower_s)) return lower_s;
  const IdealLattice lattice(
      values_problem != nullptr ? *values_problem : problem,
      values_model != nullptr ? *values_model : model, max_ideals);
  if (!lattice.complete()) return lower_s;
  if (ran != nullptr) *ran = true;
  const std::vector<uint8_t> passive = PassiveConstants(problem);
  std::vector<double> values;
  values.reserve(lattice.size());
  for (int32_t i : lattice.by_compute()) values.push_back(lattice.compute_s(i));
  values.erase(std::unique(values.begin(), values.end()), values.end());
  const double all = lattice.compute_s(lattice.full());
  // The knapsack's items (IPU s, host s), most IPU time per host second
  // first; nodes free on the host first of all.
  std::vector<std::pair<double, double>> items;
  for (int32_t v = 0; v < problem.num_nodes(); ++v) {
    if (passive[v] || problem.host_time_s.empty() ||
        problem.host_time_s[v] < 0) {
      continue;
    }
    // A node of no IPU time adds no reach (and (0, 0) would tie with every
    // item in the sort, no strict weak ordering).
    if (model.NodeTime(v) > 0)
      items.emplace_back(model.NodeTime(v), problem.host_time_s[v]);
  }
  std::sort(items.begin(), items.end(), [](auto x, auto y) {
    return x.first * y.second > y.first * x.second;
  });
  auto host_reach_s = [&](double t) {  // X_h(t)
    double ipu = 0, budget = t;
    for (auto [time, host] : items) {
      if (host <= budget) {
        ipu += time;
        budget -= host;
      } else {
        ipu += time * budget / host;
        break;
      }
    }
    return ipu;
  };
  // Lenient by 1e-12 x P(all): a step that only rounding rules out counts
  // as possible (the bound only gets smaller).
  const double slack = 1e-12 * std::max(all, 1e-30);
  auto reach = [&](double p, double step) {
    auto it = std::upper_bound(values.begin(), values.end(), p + step + slack);
    return it == values.begin() ? p : std::max(p, *(it - 1));
  };
  std::vector<double> furthest(static_cast<size_t>(h + 1) * (num_ipus + 1));
  auto feasible = [&](double t) {
    const double host_step = host_reach_s(t);
    for (int c = 0; c <= h; ++c) {
      for (int j = 0; j <= num_ipus; ++j) {
        double r = 0;
        if (j > 0)
          r = std::max(r, reach(furthest[c * (num_ipus + 1) + j - 1], t));
        if (c > 0)
          r = std::max(
              r, reach(furthest[(c - 1) * (num_ipus + 1) + j], host_step));
        furthest[c * (num_ipus + 1) + j] = r;
      }
    }
    return furthest.back() >= all - slack;
  };
  double lo = lower_s, hi = upper_s;
  if (feasible(lo)) return lower_s;
  for (int step = 0; step < 60 && hi - lo > 1e-12 * hi; ++step) {
    const double mid = (lo + hi) / 2;
    (feasible(mid) ? hi : lo) = mid;
  }
  return lo;
}

double HostWorkBound(const ShardingProblem& problem, const DeviceModel& model,
                     int num_ipus) {
  const int h = problem.num_host_devices;
  double single = 0, ipu_work = 0, must_host = 0;
  std::vector<std::pair<double, double>> movable;  // (ipu s, host s)
  for (int32_t v = 0; v < problem.num_nodes(); ++v) {
    if (problem.is_constant[v]) continue;
    const double t = model.NodeTime(v), host = problem.host_time_s[v];
    if (!problem.host_only.empty() && problem.host_only[v]) {
      must_host += host;
      single = std::max(single, host);
      continue;
    }
    ipu_work += t;
    single = std::max(single, host < 0 ? t : std::min(t, host));
    // A node of no IPU time frees nothing (and (0, 0) would tie with
    // every item in the sort).
    if (host >= 0 && t > 0) movable.emplace_back(t, host);
  }
  std::sort(movable.begin(), movable.end(), [](auto x, auto y) {
    return x.first * y.second > y.first * x.second;  // t/h descending
  });
  auto holds = [&](double T) {
    double budget = h * T - must_host, left = ipu_work;
    if (budget < 0) return false;
    for (auto [t, host] : movable) {
      if (left <= num_ipus * T) break;
      const double share = host > 0 ? std::min(1.0, budget / host) : 1.0;
      left -= share * t;
      budget -= share * host;
      if (budget <= 0) break;
    }
    return left <= num_ipus * T * (1 + 1e-12);
  };
  double lo = single, hi = std::max(single, (ipu_work + must_host) + 1e-30);
  if (holds(lo)) return lo;
  for (int i = 0; i < 100 && hi - lo > 1e-9 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (holds(mid) ? hi : lo) = mid;
  }
  return lo;
}

}  // namespace autoshard
