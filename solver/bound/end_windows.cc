#include "solver/bound/end_windows.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "solver/strategies/ideal_lattice.h"

namespace autoshard {
namespace {

// Nodes an end's sets may hold at most (more: H halves).
constexpr int32_t kMaxEndNodes = 4096;

// The sets of one end of Note [Exact end windows]: from the start, ideals
// (a node joins after its producers); from the end (`back`), complements
// of ideals (a node joins after its readers). Calls leaf(compute of the
// ideal, bytes over its boundary) once per ideal of compute at most h from
// the start (at least W - h from the end); false when they number more
// than max_sets (or the end holds more than kMaxEndNodes nodes).
class EndSets {
 public:
  EndSets(const ShardingProblem& problem, const DeviceModel& model,
          const std::vector<uint8_t>& passive, bool back)
      : problem_(problem), model_(model), passive_(passive), back_(back) {
    const int n = problem.num_nodes();
    // The heaviest path in (from the start) or out (from the end) of each
    // node, its own time included: a set of compute at most h holds only
    // nodes where it is at most h.
    path_s_.assign(n, 0);
    order_ = problem.topo_order;
    if (back) std::reverse(order_.begin(), order_.end());
    for (int32_t v : order_) {
      if (passive[v]) continue;
      double most = 0;
      for (int32_t u : back ? problem.consumers[v] : problem.producers[v])
        if (!passive[u]) most = std::max(most, path_s_[u]);
      path_s_[v] = most + model.NodeTime(v);
    }
    // Tensor ids: slot s of node v is first_slot_[v] + s.
    first_slot_.assign(n + 1, 0);
    for (int32_t v = 0; v < n; ++v)
      first_slot_[v + 1] =
          first_slot_[v] + static_cast<int32_t>(problem.output_bytes[v].size());
  }

  template <typename Leaf>
  bool Enumerate(double h, int64_t max_sets, int64_t* sets, const Leaf& leaf) {
    const int n = problem_.num_nodes();
    nodes_.clear();
    local_.assign(n, -1);
    for (int32_t v : order_) {
      if (passive_[v] || path_s_[v] > h * (1 + 1e-9)) continue;
      local_[v] = static_cast<int32_t>(nodes_.size());
      nodes_.push_back(v);
    }
    if (static_cast<int32_t>(nodes_.size()) > kMaxEndNodes) return false;
    // Per tensor: its bytes when counted (a reader that is not a passive
    // constant), and the readers outside (from the start) or inside (from
    // the end) the set.
    // Each tensor is in the reads of its readers in the set, once per
    // slot (output_consumers is distinct per slot).
    const int32_t tensors = first_slot_[n];
    bytes_.assign(tensors, 0);
    count_.assign(tensors, 0);
    reads_.assign(nodes_.size(), {});
    for (int32_t v = 0; v < n; ++v) {
      if (passive_[v]) continue;
      for (size_t s = 0; s < problem_.output_bytes[v].size(); ++s) {
        int32_t readers = 0;
        for (int32_t c : problem_.output_consumers[v][s])
          readers += passive_[c] ? 0 : 1;
        if (readers == 0 || problem_.output_bytes[v][s] <= 0) continue;
        const int32_t t = first_slot_[v] + static_cast<int32_t>(s);
        bytes_[t] = problem_.output_bytes[v][s];
        if (!back_) count_[t] = readers;
        for (int32_t c : problem_.output_consumers[v][s])
          if (!passive_[c] && local_[c] >= 0) reads_[local_[c]].push_back(t);
      }
    }
    in_.assign(nodes_.size(), 0);
    h_ = h;
    max_sets_ = max_sets;
    sets_ = 0;
    cut_ = 0;
    Visit(0, 0, leaf);
    *sets += sets_;
    return sets_ <= max_sets_;
  }

 private:
  template <typename Leaf>
  void Visit(int32_t i, double in_s, const Leaf& leaf) {
    if (sets_ > max_sets_) return;
    if (i == static_cast<int32_t>(nodes_.size())) {
      ++sets_;
      leaf(in_s, cut_);
      return;
    }
    Visit(i + 1, in_s, leaf);
    const int32_t v = nodes_[i];
    const double t = model_.NodeTime(v);
    if (in_s + t > h_ * (1 + 1e-9)) return;  // as above: sums' rounding
    for (int32_t u : back_ ? problem_.consumers[v] : problem_.producers[v])
      if (!passive_[u] && !in_[local_[u]]) return;
    in_[i] = 1;
    Join(i, +1);
    Visit(i + 1, in_s + t, leaf);
    Join(i, -1);
    in_[i] = 0;
  }

  // From the start (Note [Crossing bytes as S grows], ideal_moves.cc): v's
  // tensors cross from its joining (its readers are all outside) until
  // their last reader joins. From the end: v's readers are all inside, so
  // its tensors stop crossing; a tensor it reads crosses from its first
  // reader's joining (its producer is outside).
  void Join(int32_t i, int sign) {
    const int32_t v = nodes_[i];
    if (!back_) {
      for (size_t s = 0; s < problem_.output_bytes[v].size(); ++s)
        cut_ += sign * bytes_[first_slot_[v] + static_cast<int32_t>(s)];
      for (int32_t t : reads_[i]) {
        if (sign < 0) ++count_[t];
        if (count_[t] == 1) cut_ -= sign * bytes_[t];
        if (sign > 0) --count_[t];
      }
      return;
    }
    for (size_t s = 0; s < problem_.output_bytes[v].size(); ++s)
      cut_ -= sign * bytes_[first_slot_[v] + static_cast<int32_t>(s)];
    for (int32_t t : reads_[i]) {
      if (sign < 0) --count_[t];
      if (count_[t] == 0) cut_ += sign * bytes_[t];
      if (sign > 0) ++count_[t];
    }
  }

  const ShardingProblem& problem_;
  const DeviceModel& model_;
  const std::vector<uint8_t>& passive_;
  const bool back_;
  std::vector<int32_t> order_, first_slot_, nodes_, local_, count_;
  std::vector<std::vector<int32_t>> reads_;  // per local node: tensor ids
  std::vector<double> path_s_;
  std::vector<int64_t> bytes_;
  std::vector<uint8_t> in_;
  double h_ = 0;
  int64_t max_sets_ = 0, sets_ = 0, cut_ = 0;
};

}  // namespace

EndWindows ExactEndWindows(const ShardingProblem& problem,
                           const DeviceModel& model, int k,
                           const std::vector<double>& lo,
                           const std::vector<double>& hi, double tolerance_s,
                           int64_t max_ideals) {
  const int nb = static_cast<int>(lo.size());
  EndWindows out;
  out.least_bytes.assign(nb, -1);
  if (nb == 0 || max_ideals <= 0 || !(hi.back() > 0)) return out;
  const std::vector<uint8_t> passive = PassiveConstants(problem);
  const double total_s = hi.back();
  const double width = total_s / nb;
  for (bool back : {false, true}) {
    EndSets sets(problem, model, passive, back);
    std::vector<int64_t> least(nb, EndWindows::kNoIdeal);
    auto leaf = [&](double set_s, int64_t bytes) {
      const double p = back ? total_s - set_s : set_s;
      // The buckets whose range holds p, within the tolerance.
      int b = static_cast<int>(
          std::lower_bound(hi.begin(), hi.end(), p - tolerance_s) - hi.begin());
      for (; b < nb && lo[b] <= p + tolerance_s; ++b)
        least[b] = std::min(least[b], bytes);
    };
    double h = std::min(total_s, 4 * total_s / std::max(k, 1));
    for (; h >= width; h /= 2) {
      std::fill(least.begin(), least.end(), EndWindows::kNoIdeal);
      if (sets.Enumerate(h + tolerance_s, max_ideals, &out.ideals, leaf)) break;
    }
    if (h < width) continue;
    (back ? out.back_s : out.front_s) = h;
    for (int b = 0; b < nb; ++b) {
      const bool inside = back ? lo[b] >= total_s - h : hi[b] <= h;
      if (inside) out.least_bytes[b] = std::max(out.least_bytes[b], least[b]);
    }
  }
  return out;
}

}  // namespace autoshard
