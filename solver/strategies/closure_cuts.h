// Closure cuts: the fewest bytes that cross the boundary of an ideal
// (Note [Ideals], solver/strategies/ideal_lattice.h) whose compute lies in a
// window, as max-flows over a closure network — what the cut bound
// (solver/bound/cut_bound.h: Note [Cut bound], Note [Window cuts]) and
// auto's min-cut order (MinCutOrder) are made of.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_CLOSURE_CUTS_H_
#define AUTOSHARD_SOLVER_STRATEGIES_CLOSURE_CUTS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"
#include "solver/strategies/ideal_lattice.h"
#include "solver/strategies/max_flow.h"

namespace autoshard {

// Ancestor and descendant times are exact (bit sets) up to this many
// active nodes, else longest paths (smaller, so the bounds stay valid).
inline constexpr int32_t kCutBoundExactNodes = 8192;

// The smallest cuts of ideals whose compute lies in a window (Note [Cut
// bound], solver/bound/cut_bound.h): the network, and the ancestor and
// descendant times that force nodes in or out. Cuts are bytes (int64),
// times seconds; work counts MaxFlow's arc scans.
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

  const ShardingProblem& problem() const { return problem_; }
  double total_s() const { return total_s_; }
  double tolerance_s() const { return tolerance_s_; }
  int64_t work() const { return work_; }

  // The fewest bytes crossing the boundary of an ideal whose compute lies in
  // [lo, hi] (a lower bound on it); -1 when no ideal can.
  int64_t MinCut(double lo, double hi) {
    std::vector<int32_t> in, out;
    if (!Forced(lo, hi, &in, &out)) return -1;
    if (in.empty() || out.empty()) return 0;  // the empty or the full ideal
    // Each forced set is a threshold set of a fixed order (by W - P(desc v),
    // by P(anc v)), so its size names it: the last max-flow's sets again.
    const std::pair<size_t, size_t> sizes(in.size(), out.size());
    if (sizes == last_sizes_) return last_cut_;
    MaxFlow flow = Network(in, out, infinite_);
    const int64_t cut = flow.Solve(0, 1, infinite_, &work_);
    last_sizes_ = sizes;
    last_cut_ = cut >= infinite_ ? -1 : cut;
    return last_cut_;
  }

  // The smallest ideal of least cut for [lo, hi] (MinCut's; per node: in
  // it), empty when no ideal can.
  std::vector<uint8_t> MinCutIdeal(double lo, double hi) {
    std::vector<int32_t> in, out;
    if (!Forced(lo, hi, &in, &out)) return {};
    MaxFlow flow = Network(in, out, infinite_);
    if (flow.Solve(0, 1, infinite_, &work_) >= infinite_) return {};
    std::vector<uint8_t> side(problem_.num_nodes(), 0);
    for (int32_t v : problem_.topo_order)
      side[v] = !passive_[v] && flow.SourceSide(2 + v) ? 1 : 0;
    return side;
  }

  // Note [Window cuts]: a lower bound on the bytes over the boundary of an
  // ideal whose compute lies in [lo, hi], at least MinCut(lo, hi); -1 when
  // no ideal can.
  double WindowCut(double lo, double hi) {
    const int64_t plain = MinCut(lo, hi);
    if (plain <= 0) return static_cast<double>(plain);
    std::vector<int32_t> in, out;
    Forced(lo, hi, &in, &out);
    double best = static_cast<double>(plain);
    double p0 = 0;
    Lagrangian(0, lo, hi, in, out, &p0);
    if (p0 >= lo - tolerance_s_ && p0 <= hi + tolerance_s_) return best;
    // The multiplier's sign: penalise compute above hi, or reward it below
    // lo; its first value: where the plain cut's ideal pays the bytes of the
    // smallest (largest) ideal the window allows, the forced nodes.
    const double sign = p0 > hi ? 1 : -1;
    const double off = p0 > hi ? p0 - hi : lo - p0;
    const double edge = static_cast<double>(EdgeBytes(p0 > hi, in, out));
    double low = 0, high = std::max(best, edge) / off, p = 0;
    for (int step = 0; step < kWidenSteps && work_ <= max_work_; ++step) {
      const double value = Lagrangian(sign * high, lo, hi, in, out, &p);
      best = std::max(best, value);
      if (p0 > hi ? p <= hi : p >= lo) break;
      low = high;
      high *= 2;
    }
    for (int step = 0; step < kBisectSteps && work_ <= max_work_; ++step) {
      const double mid = (low + high) / 2;
      const double value = Lagrangian(sign * mid, lo, hi, in, out, &p);
      best = std::max(best, value);
      if (p0 > hi ? p > hi : p < lo) {
        low = mid;
      } else {
        high = mid;
      }
    }
    return best;
  }

  void set_max_work(int64_t max_work) { max_work_ = max_work; }

  // Note [Balanced min-cut order]: the ideal of least cut among the
  // minimisers of Note [Window cuts]' Lagrangian whose compute lies in
  // [lo, hi]; when none does, the minimiser of the smallest multiplier that
  // brings the compute to or across the window (else MinCutIdeal's). Per
  // node, 1 when in it; empty when no ideal can have its compute there.
  std::vector<uint8_t> BalancedIdeal(double lo, double hi) {
    std::vector<int32_t> in, out;
    if (!Forced(lo, hi, &in, &out)) return {};
    std::vector<uint8_t> side, at;
    double p0 = 0;
    bool feasible = true;
    const double v0 = Lagrangian(0, lo, hi, in, out, &p0, &side, &feasible);
    if (!feasible) return {};
    if (p0 >= lo - tolerance_s_ && p0 <= hi + tolerance_s_) return side;
    const double sign = p0 > hi ? 1 : -1;
    const double off = p0 > hi ? p0 - hi : lo - p0;
    std::vector<uint8_t> across, inside;
    double inside_bytes = std::numeric_limits<double>::infinity();
    auto crosses = [&](double nu) {
      double p = 0;
      const double v = Lagrangian(sign * nu, lo, hi, in, out, &p, &at);
      const bool outside =
          sign > 0 ? p > hi + tolerance_s_ : p < lo - tolerance_s_;
      if (outside) return false;
      if (p >= lo - tolerance_s_ && p <= hi + tolerance_s_) {
        const double bytes = v - nu * (sign > 0 ? p - hi : lo - p);
        if (bytes < inside_bytes) {
          inside_bytes = bytes;
          inside = at;
        }
      }
      across = at;
      return true;
    };
    double low = 0, high = std::max(v0, 1.0) / off;
    bool found = false;
    for (int step = 0; step < kWidenSteps && work_ <= max_work_; ++step) {
      if ((found = crosses(high))) break;
      low = high;
      high *= 2;
    }
    for (int step = 0; found && step < kBisectSteps && work_ <= max_work_;
         ++step) {
      const double mid = (low + high) / 2;
      (crosses(mid) ? high : low) = mid;
    }
    if (!inside.empty()) return inside;
    if (!across.empty()) return across;
    return side;
  }

  // The nodes an ideal with compute in [lo, hi] must hold (`in`) and must
  // not (`out`), from the ancestor and descendant times; false when some
  // node must do both. Folded constants (PassiveConstants) are in neither.
  bool ForcedNodes(double lo, double hi, std::vector<int32_t>* in,
                   std::vector<int32_t>* out) const {
    return Forced(lo, hi, in, out);
  }
  // Whether node `v` is a passive constant (left out of every cut).
  bool passive(int32_t v) const { return passive_[v] != 0; }

  // Note [Window cuts]'s Lagrangian for multiplier `nu` over the closures
  // that hold every node of `in` and none of `out`: *value_bytes := min over
  // them of C(I) + nu (P(I) - hi) (nu >= 0) or C(I) + |nu| (lo - P(I))
  // (nu < 0), a lower bound on the bytes of each of them whose compute lies
  // in [lo, hi]; *p_s := P of the smallest minimising closure, *side := its
  // nodes (per node, 1 when in it). False when no closure satisfies `in`
  // and `out`.
  bool LagrangianCut(double nu, double lo, double hi,
                     const std::vector<int32_t>& in,
                     const std::vector<int32_t>& out, double* value_bytes,
                     double* p_s, std::vector<uint8_t>* side) {
    bool feasible = true;
    *value_bytes = Lagrangian(nu, lo, hi, in, out, p_s, side, &feasible);
    return feasible;
  }

 private:
  static constexpr int kWidenSteps = 4, kBisectSteps = 5;

  // The nodes an ideal with compute in [lo, hi] must hold and must not;
  // false when some node must do both.
  bool Forced(double lo, double hi, std::vector<int32_t>* in,
              std::vector<int32_t>* out) const {
    for (int32_t v : problem_.topo_order) {
      if (passive_[v]) continue;
      const bool must_in = total_s_ - desc_s_[v] < lo - tolerance_s_;
      const bool must_out = anc_s_[v] > hi + tolerance_s_;
      if (must_in && must_out) return false;
      if (must_in) in->push_back(v);
      if (must_out) out->push_back(v);
    }
    return true;
  }

  // The bytes over the boundary of the forced-in nodes (`smallest`; an
  // ideal, as a producer's descendants include its reader's), else of all
  // but the forced-out ones (an ideal too).
  int64_t EdgeBytes(bool smallest, const std::vector<int32_t>& in,
                    const std::vector<int32_t>& out) const {
    std::vector<uint8_t> member(problem_.num_nodes(), smallest ? 0 : 1);
    for (int32_t v : smallest ? in : out) member[v] = smallest ? 1 : 0;
    int64_t bytes = 0;
    for (int32_t v : problem_.topo_order) {
      if (passive_[v] || !member[v]) continue;
      for (size_t slot = 0; slot < problem_.output_bytes[v].size(); ++slot) {
        bool crosses = false;
        for (int32_t c : problem_.output_consumers[v][slot])
          crosses |= !passive_[c] && !member[c];
        if (crosses)
          bytes += std::max<int64_t>(0, problem_.output_bytes[v][slot]);
      }
    }
    return bytes;
  }

  // The closure network with the forced nodes tied to the source and sink,
  // `infinite` standing for an arc no cut may take.
  MaxFlow Network(const std::vector<int32_t>& in,
                  const std::vector<int32_t>& out, int64_t infinite) const {
    MaxFlow flow(vertices_);
    for (const Arc& a : arcs_)
      flow.AddArc(a.u, a.v, a.capacity < 0 ? infinite : a.capacity);
    for (int32_t v : in) flow.AddArc(0, 2 + v, infinite);
    for (int32_t v : out) flow.AddArc(2 + v, 1, infinite);
    return flow;
  }

  // Note [Window cuts] for multiplier `nu` (bytes per second of compute):
  // min over ideals I of C(I) + nu (P(I) - hi) when nu >= 0, of C(I) + |nu|
  // (lo - P(I)) when nu < 0; *p_s := P of the smallest minimising ideal.
  // `side` (optional): the minimising ideal's nodes; `feasible`
  // (optional): false when no closure holds `in` and avoids `out`.
  double Lagrangian(double nu, double lo, double hi,
                    const std::vector<int32_t>& in,
                    const std::vector<int32_t>& out, double* p_s,
                    std::vector<uint8_t>* side = nullptr,
                    bool* feasible = nullptr) {
    // |nu| capped so that the weights, their sum and the flow's infinite
    // capacity stay below 2^61 (int64): any multiplier gives a valid bound,
    // a capped one a weaker one. Uncapped, a cut of more than ~5.7e8 bytes
    // with p0 a few tolerances off the window overflowed.
    const double max_scale =
        std::max(0.0, (0x1p61 - static_cast<double>(infinite_)) /
                          std::max(total_s_, 1e-300));
    nu = std::clamp(nu, -max_scale, max_scale);
    const double scale = std::abs(nu);
    std::vector<int64_t> weight(problem_.num_nodes(), 0);
    int64_t sum = 0;
    for (int32_t v : problem_.topo_order) {
      if (passive_[v]) continue;
      // Rounded down: a smaller penalty, so a smaller (still valid) bound.
      weight[v] = static_cast<int64_t>(std::floor(scale * model_.NodeTime(v)));
      sum += weight[v];
    }
    const int64_t infinite = infinite_ + sum;
    MaxFlow flow = Network(in, out, infinite);
    for (int32_t v : problem_.topo_order) {
      if (passive_[v] || weight[v] == 0) continue;
      if (nu > 0) flow.AddArc(2 + v, 1, weight[v]);
      if (nu < 0) flow.AddArc(0, 2 + v, weight[v]);
    }
    const int64_t cut = flow.Solve(0, 1, infinite, &work_);
    *p_s = 0;
    if (side != nullptr) side->assign(problem_.num_nodes(), 0);
    for (int32_t v : problem_.topo_order) {
      if (passive_[v] || !flow.SourceSide(2 + v)) continue;
      *p_s += model_.NodeTime(v);
      if (side != nullptr) (*side)[v] = 1;
    }
    if (feasible != nullptr) *feasible = cut < infinite;
    if (cut >= infinite) return 0;
    const double constant = nu >= 0 ? -nu * hi : scale * (lo - total_s_);
    // Rounded down: near the cap the cut is ~2^61, where a double's step is
    // 512 (bytes), and the cast, the product and the sum each round to
    // nearest; 4 epsilons of the larger term cover the three, so the value
    // stays at most the exact one (a review's finding).
    const double magnitude =
        std::max(std::abs(static_cast<double>(cut)), std::abs(constant));
    return static_cast<double>(cut) + constant -
           4 * std::numeric_limits<double>::epsilon() * magnitude;
  }

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
        if (!passive_[u]) arcs_.push_back({2 + v, 2 + u, -1});
      for (size_t slot = 0; slot < problem_.output_bytes[v].size(); ++slot) {
        const int64_t b = problem_.output_bytes[v][slot];
        if (b <= 0) continue;
        const int32_t x = vertices_++;
        arcs_.push_back({2 + v, x, b});
        for (int32_t c : problem_.output_consumers[v][slot])
          if (!passive_[c]) arcs_.push_back({x, 2 + c, -1});
      }
    }
  }

  struct Arc {
    int32_t u, v;
    int64_t capacity;  // -1: infinite
  };
  const ShardingProblem& problem_;
  const DeviceModel& model_;
  std::vector<uint8_t> passive_;
  std::vector<double> anc_s_, desc_s_;
  std::vector<Arc> arcs_;
  double total_s_ = 0, tolerance_s_ = 0;
  int32_t active_ = 0, vertices_ = 0;
  int64_t infinite_ = 1, work_ = 0;
  int64_t max_work_ = std::numeric_limits<int64_t>::max();
  std::pair<size_t, size_t> last_sizes_{0, 0};  // of the last max-flow
  int64_t last_cut_ = 0;
};

// A topological order of every node by the first of `windows` equal compute
// windows whose smallest least-cut ideal (ClosureCuts::MinCutIdeal) holds
// it, then by topological position (an ideal holds its members' producers,
// so the order is topological); folded constants go with their earliest
// reader. Slicing it puts boundaries near small cuts the fixed orders miss
// (tv_ssdlite320's 90 per-class branches each run up to their TopK before
// the rest). Cost: `windows` max-flows.
//
// Note [Balanced min-cut order]
// With `balanced`, each window's ideal is ClosureCuts::BalancedIdeal's, the
// least cut whose compute lies in the window as the Lagrangian finds it,
// instead of the least cut of the forced sets, whose compute may lie far
// outside (tv_fasterrcnn_resnet50_fpn: the window at 4,900-5,000 us of
// 10,618 has least cut 54.4 MB at 4,033 us; the Lagrangian finds 54.45 MB
// at 5,021 us). Cost: up to 10 max-flows per window.
std::vector<int32_t> MinCutOrder(const ShardingProblem& problem,
                                 const DeviceModel& model, int windows,
                                 bool balanced = false);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_CLOSURE_CUTS_H_
