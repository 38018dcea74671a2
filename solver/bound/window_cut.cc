#include "solver/bound/window_cut.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

namespace autoshard {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Note [Window cuts]' multiplier search per side: doublings, then halvings.
constexpr int kWidenSteps = 8, kBisectSteps = 6;

// One side of the branching (Note [Branched window cuts]): the nodes its
// branchings forced in and out, and what its Lagrangian proved.
struct Side {
  std::vector<int32_t> in, out;
  double bytes = 0;     // a lower bound on C(I) over the side's window ideals
  bool exact = false;   // an ideal in the window reaches it
  int32_t branch = -1;  // the node to branch on next; -1: none
};

class Branching {
 public:
  Branching(ClosureCuts& cuts, const ShardingProblem& problem,
            const DeviceModel& model, double lo, double hi,
            std::vector<int32_t> in, std::vector<int32_t> out)
      : cuts_(cuts),
        problem_(problem),
        model_(model),
        lo_(lo),
        hi_(hi),
        tol_(cuts.tolerance_s()),
        base_in_(std::move(in)),
        base_out_(std::move(out)) {}

  // Searches `side`'s Lagrangian; false when no ideal of the window is on
  // it.
  bool Evaluate(Side* side) {
    std::vector<int32_t> in = base_in_, out = base_out_;
    in.insert(in.end(), side->in.begin(), side->in.end());
    out.insert(out.end(), side->out.begin(), side->out.end());
    if (!ComputeRange(in, out)) return false;
    double value = 0, p = 0;
    std::vector<uint8_t> ideal;
    if (!cuts_.LagrangianCut(0, lo_, hi_, in, out, &value, &p, &ideal))
      return false;
    side->bytes = value;
    if (p >= lo_ - tol_ && p <= hi_ + tol_) {  // the smallest cut is inside
      side->exact = true;
      return true;
    }
    // As in ClosureCuts::WindowCut: penalise compute above hi (sign 1) or
    // reward it below lo (-1); `beyond` is the minimising ideal of the
    // largest multiplier still outside on that side, `across` of the
    // smallest one that is not.
    const double sign = p > hi_ ? 1 : -1;
    const double off = p > hi_ ? p - hi_ : lo_ - p;
    std::vector<uint8_t> beyond = std::move(ideal), across;
    double upper = kInf;  // the bytes of an ideal found in the window
    auto crosses = [&](double nu) {
      double v = 0, q = 0;
      std::vector<uint8_t> at;
      cuts_.LagrangianCut(sign * nu, lo_, hi_, in, out, &v, &q, &at);
      side->bytes = std::max(side->bytes, v);
      const bool outside = sign > 0 ? q > hi_ + tol_ : q < lo_ - tol_;
      if (outside) {
        beyond = std::move(at);
        return false;
      }
      if (q >= lo_ - tol_ && q <= hi_ + tol_)
        upper = std::min(upper, v - nu * (sign > 0 ? q - hi_ : lo_ - q));
      across = std::move(at);
      return true;
    };
    double low = 0, high = std::max(side->bytes, 1.0) / off;
    bool found = false;
    for (int step = 0; step < kWidenSteps && !Spent(); ++step) {
      if ((found = crosses(high))) break;
      low = high;
      high *= 2;
    }
    for (int step = 0; found && step < kBisectSteps && !Spent(); ++step) {
      const double mid = (low + high) / 2;
      (crosses(mid) ? high : low) = mid;
    }
    side->exact = upper <= side->bytes + 1e-9 * side->bytes + 1;
    if (!across.empty()) side->branch = BranchNode(beyond, across);
    return true;
  }

  void set_limits(std::chrono::steady_clock::time_point deadline,
                  int64_t max_work) {
    deadline_ = deadline;
    max_work_ = max_work;
  }
  bool Spent() const {
    return cuts_.work() > max_work_ ||
           std::chrono::steady_clock::now() >= deadline_;
  }

 private:
  // The costliest active node in one ideal and not the other (earliest in
  // topological order among equals), -1 when none: forced nodes are in both
  // or neither.
  int32_t BranchNode(const std::vector<uint8_t>& a,
                     const std::vector<uint8_t>& b) const {
    int32_t best = -1;
    for (int32_t v : problem_.topo_order) {
      if (cuts_.passive(v) || a[v] == b[v]) continue;
      if (best < 0 || model_.NodeTime(v) > model_.NodeTime(best)) best = v;
    }
    return best;
  }

  // Whether some ideal holding `in`'s ancestors and none of `out`'s
  // descendants can have its compute in [lo, hi].
  bool ComputeRange(const std::vector<int32_t>& in,
                    const std::vector<int32_t>& out) {
    const int32_t n = problem_.num_nodes();
    mark_.assign(n, 0);
    double least = 0, cut_off = 0;
    for (int pass = 0; pass < 2; ++pass) {
      const uint8_t bit = pass == 0 ? 1 : 2;
      stack_.assign((pass == 0 ? in : out).begin(),
                    (pass == 0 ? in : out).end());
      while (!stack_.empty()) {
        const int32_t x = stack_.back();
        stack_.pop_back();
        if (cuts_.passive(x) || (mark_[x] & bit)) continue;
        if (mark_[x] != 0) return false;  // both in and out
        mark_[x] = bit;
        (pass == 0 ? least : cut_off) += model_.NodeTime(x);
        for (int32_t y :
             pass == 0 ? problem_.producers[x] : problem_.consumers[x])
          stack_.push_back(y);
      }
    }
    return least <= hi_ + tol_ && cuts_.total_s() - cut_off >= lo_ - tol_;
  }

  ClosureCuts& cuts_;
  const ShardingProblem& problem_;
  const DeviceModel& model_;
  const double lo_, hi_, tol_;
  const std::vector<int32_t> base_in_, base_out_;
  std::chrono::steady_clock::time_point deadline_ =
      std::chrono::steady_clock::time_point::max();
  int64_t max_work_ = std::numeric_limits<int64_t>::max();
  std::vector<uint8_t> mark_;
  std::vector<int32_t> stack_;
};

}  // namespace

BranchedCut BranchedWindowCut(ClosureCuts& cuts, const ShardingProblem& problem,
                              const DeviceModel& model, double lo, double hi,
                              const BranchedCutOptions& options) {
  BranchedCut result;
  std::vector<int32_t> in, out;
  if (!cuts.ForcedNodes(lo, hi, &in, &out)) {
    result.bytes = kInf;
    return result;
  }
  Branching branching(cuts, problem, model, lo, hi, std::move(in),
                      std::move(out));
  branching.set_limits(options.deadline, options.max_work);
  // Best first: the open side of the smallest value.
  auto larger = [](const Side& a, const Side& b) { return a.bytes > b.bytes; };
  std::priority_queue<Side, std::vector<Side>, decltype(larger)> open(larger);
  Side root;
  ++result.sides;
  if (!branching.Evaluate(&root)) {
    result.bytes = kInf;
    return result;
  }
  open.push(std::move(root));
  while (!open.empty()) {
    Side top = open.top();
    open.pop();
    if (top.exact || top.branch < 0 || result.sides >= options.max_sides ||
        branching.Spent()) {
      result.bytes = std::max(0.0, top.bytes);
      result.exact = top.exact;
      return result;
    }
    for (int with = 0; with < 2; ++with) {
      Side child;
      child.in = top.in;
      child.out = top.out;
      (with == 1 ? child.in : child.out).push_back(top.branch);
      ++result.sides;
      if (!branching.Evaluate(&child)) continue;
      // Its ideals are among top's: top's bound holds for them too.
      child.bytes = std::max(child.bytes, top.bytes);
      open.push(std::move(child));
    }
  }
  result.bytes = kInf;  // every side was empty: no ideal in the window
  return result;
}

}  // namespace autoshard
