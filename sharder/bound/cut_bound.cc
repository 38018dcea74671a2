#include "sharder/bound/cut_bound.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "sharder/bound/max_flow.h"
#include "sharder/strategies/ideal_lattice.h"

namespace autoshard {
namespace {

// The smallest cuts of ideals whose compute lies in a window (Note [Cut
// bound]): the network, and the ancestor and descendant times that force
// nodes in or out.
class ClosureCuts {
 public:
  ClosureCuts(const ShardingProblem& problem, const DeviceModel& model)
      : problem_(problem), model_(model) {
    passive_ = PassiveConstants(problem);
    for (int32_t n : problem.topo_order) {
      if (passive_[n]) continue;
      total_s_ += model.NodeTime(n);
      ++active_;
    }
    tolerance_s_ = 1e-9 * total_s_;
    if (active_ <= kCutBoundExactNodes) {
      ExactReach();
    } else {
      LongestPaths();
    }
    BuildArcs();
  }

  double total_s() const { return total_s_; }
  double tolerance_s() const { return tolerance_s_; }
  int64_t work() const { return work_; }

  // The fewest bytes crossing the boundary of an ideal whose compute lies in
  // [lo, hi] (a lower bound on it); -1 when no ideal can.
  int64_t MinCut(double lo, double hi) {
    std::vector<int32_t> in, out;
    for (int32_t v : problem_.topo_order) {
      if (passive_[v]) continue;
      const bool must_in = total_s_ - desc_s_[v] < lo - tolerance_s_;
      const bool must_out = anc_s_[v] > hi + tolerance_s_;
      if (must_in && must_out) return -1;
      if (must_in) in.push_back(v);
      if (must_out) out.push_back(v);
    }
    if (in.empty() || out.empty()) return 0;  // the empty or the full ideal
    // Each forced set is a threshold set of a fixed order (by W - P(desc v),
    // by P(anc v)), so its size names it: the last max-flow's sets again.
    const std::pair<size_t, size_t> sizes(in.size(), out.size());
    if (sizes == last_sizes_) return last_cut_;
    MaxFlow flow(vertices_);
    for (const Arc& a : arcs_) flow.AddArc(a.u, a.v, a.capacity);
    for (int32_t v : in) flow.AddArc(0, 2 + v, infinite_);
    for (int32_t v : out) flow.AddArc(2 + v, 1, infinite_);
    const int64_t cut = flow.Solve(0, 1, infinite_, &work_);
    last_sizes_ = sizes;
    last_cut_ = cut >= infinite_ ? -1 : cut;
    return last_cut_;
  }

 private:
  // Σ times of each node's ancestors and descendants (itself included), by
  // bit sets over the active nodes.
  void ExactReach() {
    const int n = problem_.num_nodes();
    std::vector<int32_t> bit(n, -1), node_of;
    for (int32_t v : problem_.topo_order)
      if (!passive_[v]) {
        bit[v] = static_cast<int32_t>(node_of.size());
        node_of.push_back(v);
      }
    const size_t words = (node_of.size() + 63) / 64;
    std::vector<uint64_t> sets(words * node_of.size());
    auto sum = [&](size_t b) {
      double total = 0;
      for (size_t w = 0; w < words; ++w)
        for (uint64_t x = sets[b * words + w]; x != 0; x &= x - 1)
          total += model_.NodeTime(node_of[w * 64 + __builtin_ctzll(x)]);
      return total;
    };
    anc_s_.assign(n, 0);
    desc_s_.assign(n, 0);
    for (int pass = 0; pass < 2; ++pass) {
      std::fill(sets.begin(), sets.end(), 0);
      for (size_t i = 0; i < node_of.size(); ++i) {
        const size_t b = pass == 0 ? i : node_of.size() - 1 - i;
        const int32_t v = node_of[b];
        sets[b * words + b / 64] |= uint64_t{1} << (b % 64);
        const auto& from =
            pass == 0 ? problem_.producers[v] : problem_.consumers[v];
        for (int32_t u : from) {
          if (bit[u] < 0) continue;
          for (size_t w = 0; w < words; ++w)
            sets[b * words + w] |= sets[bit[u] * words + w];
        }
        (pass == 0 ? anc_s_ : desc_s_)[v] = sum(b);
      }
    }
  }

  // The heaviest path into and out of each node: at most its ancestors' and
  // descendants' times.
  void LongestPaths() {
    const int n = problem_.num_nodes();
    anc_s_.assign(n, 0);
    desc_s_.assign(n, 0);
    for (int32_t v : problem_.topo_order) {
      if (passive_[v]) continue;
      for (int32_t u : problem_.producers[v])
        if (!passive_[u]) anc_s_[v] = std::max(anc_s_[v], anc_s_[u]);
      anc_s_[v] += model_.NodeTime(v);
    }
    for (auto it = problem_.topo_order.rbegin();
         it != problem_.topo_order.rend(); ++it) {
      const int32_t v = *it;
      if (passive_[v]) continue;
      for (int32_t c : problem_.consumers[v])
        if (!passive_[c]) desc_s_[v] = std::max(desc_s_[v], desc_s_[c]);
      desc_s_[v] += model_.NodeTime(v);
    }
  }

  // The closure network without source and sink arcs: vertex 0 the source,
  // 1 the sink, 2 + v node v, then one per cut-able tensor.
  void BuildArcs() {
    vertices_ = 2 + problem_.num_nodes();
    int64_t bytes = 0;
    for (int32_t v : problem_.topo_order) {
      if (passive_[v]) continue;
      for (size_t slot = 0; slot < problem_.output_bytes[v].size(); ++slot) {
        const int64_t b = problem_.output_bytes[v][slot];
        if (b > 0) bytes += b;
      }
    }
    infinite_ = bytes + 1;
    for (int32_t v : problem_.topo_order) {
      if (passive_[v]) continue;
      for (int32_t u : problem_.producers[v])
        if (!passive_[u]) arcs_.push_back({2 + v, 2 + u, infinite_});
      for (size_t slot = 0; slot < problem_.output_bytes[v].size(); ++slot) {
        const int64_t b = problem_.output_bytes[v][slot];
        if (b <= 0) continue;
        const int32_t x = vertices_++;
        arcs_.push_back({2 + v, x, b});
        for (int32_t c : problem_.output_consumers[v][slot])
          if (!passive_[c]) arcs_.push_back({x, 2 + c, infinite_});
      }
    }
  }

  struct Arc {
    int32_t u, v;
    int64_t capacity;
  };
  const ShardingProblem& problem_;
  const DeviceModel& model_;
  std::vector<uint8_t> passive_;
  std::vector<double> anc_s_, desc_s_;
  std::vector<Arc> arcs_;
  double total_s_ = 0, tolerance_s_ = 0;
  int32_t active_ = 0, vertices_ = 0;
  int64_t infinite_ = 1, work_ = 0;
  std::pair<size_t, size_t> last_sizes_{0, 0};  // of the last max-flow
  int64_t last_cut_ = 0;
};

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

// PopART's adjacent copies: the DP over compute buckets of Note [Cut bound].
double AdjacentBound(ClosureCuts& cuts, const DeviceModel& model, int k,
                     const CutBoundOptions& options, CutBoundResult* result) {
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
    best = std::min(best, std::max(f[a], cuts.total_s() - hi[a] + copy_s[a]));
  return best - cuts.tolerance_s();
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
          : AdjacentBound(cuts, model, num_ipus, options, &result);
  result.work = cuts.work();
  result.improved = bound > cheap;
  result.bound_s = std::max(cheap, bound);
  return result;
}

}  // namespace autoshard
