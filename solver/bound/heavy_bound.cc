#include "solver/bound/heavy_bound.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "solver/strategies/max_flow.h"

namespace autoshard {
namespace {

// Larger than any finite cut: Σ bytes and Σ node times x L stay far below.
constexpr int64_t kInfinite = int64_t{1} << 60;

// `seconds` x `link_bytes_per_s` bytes, rounded down (Note [Heavy-node
// bound]: smaller, still valid), capped far below kInfinite.
int64_t TimeBytes(double seconds, double link_bytes_per_s) {
  const double b = std::floor(seconds * link_bytes_per_s);
  return b <= 0 ? 0 : static_cast<int64_t>(std::min(b, 1e17));
}

// A tensor some node reads.
struct Tensor {
  int32_t producer, slot;
  int64_t bytes;
};

// The networks of Note [Heavy-node bound] for one problem.
class HeavyCuts {
 public:
  HeavyCuts(const ShardingProblem& problem, const DeviceModel& model,
            std::vector<Tensor> tensors)
      : problem_(problem),
        model_(model),
        tensors_(std::move(tensors)),
        link_(model.profile().link_bytes_per_s()) {}

  int64_t work() const { return work_; }

  // With adjacent copies, an upper value of Solve(v, 1): the pair I1 = v's
  // ancestors, I2 = I1 and v; t(v) + (C(I1) + C(I2)) / L.
  double Upper(int32_t v) {
    const int32_t n = problem_.num_nodes();
    in_.assign(n, 0);
    stack_.assign(problem_.producers[v].begin(), problem_.producers[v].end());
    while (!stack_.empty()) {
      const int32_t x = stack_.back();
      stack_.pop_back();
      if (in_[x]) continue;
      in_[x] = 1;
      for (int32_t u : problem_.producers[x])
        if (!in_[u]) stack_.push_back(u);
    }
    int64_t bytes = 0;
    for (int pass = 0; pass < 2; ++pass) {
      if (pass == 1) in_[v] = 1;
      for (const Tensor& t : tensors_) {
        if (!in_[t.producer]) continue;
        for (int32_t r : problem_.output_consumers[t.producer][t.slot]) {
          if (!in_[r]) {
            bytes += t.bytes;
            break;
          }
        }
      }
    }
    return model_.NodeTime(v) + static_cast<double>(bytes) / link_;
  }

  // min over the sets the Note allows (X through host, I1 ⊆ I2 with
  // adjacent copies) of alpha t(X) + bytes / L, in seconds; alpha in [0, 1].
  // `no_in` (`no_out`): only sets whose IPU receives (sends) no byte (Note
  // [Heavy node's fixed copy costs]).
  double Solve(int32_t v, double alpha, bool no_in = false,
               bool no_out = false) {
    const int32_t n = problem_.num_nodes();
    const int32_t num_tensors = static_cast<int32_t>(tensors_.size());
    // Vertices: 0 source, 1 sink, then per layer (one through host, two
    // with adjacent copies: I1 and I2) its nodes and a vertex per tensor.
    const int32_t layer = n + num_tensors;
    const bool host = problem_.copies_through_host;
    auto node = [&](int l, int32_t x) { return 2 + l * layer + x; };
    auto tensor = [&](int l, int32_t i) { return 2 + l * layer + n + i; };
    if (host) {
      // Hyperedges need two vertices: a second block after the layer.
      MaxFlow flow(2 + layer + num_tensors);
      flow.AddArc(0, node(0, v), kInfinite);
      for (int32_t x = 0; x < n; ++x) {
        const int64_t cost = TimeBytes(alpha * model_.NodeTime(x), link_);
        if (cost > 0) flow.AddArc(node(0, x), 1, cost);
      }
      for (int32_t i = 0; i < num_tensors; ++i) {
        const Tensor& t = tensors_[i];
        const int32_t a = tensor(0, i), b = 2 + layer + i;
        flow.AddArc(a, b, t.bytes);
        flow.AddArc(node(0, t.producer), a, kInfinite);
        flow.AddArc(b, node(0, t.producer), kInfinite);
        for (int32_t r : problem_.output_consumers[t.producer][t.slot]) {
          flow.AddArc(node(0, r), a, kInfinite);
          flow.AddArc(b, node(0, r), kInfinite);
          // Nothing received: a reader in X has its producer in X; nothing
          // sent: a producer in X has its readers in X.
          if (no_in) flow.AddArc(node(0, r), node(0, t.producer), kInfinite);
          if (no_out) flow.AddArc(node(0, t.producer), node(0, r), kInfinite);
        }
      }
      return static_cast<double>(flow.Solve(0, 1, kInfinite, &work_)) / link_;
    }
    MaxFlow flow(2 + 2 * layer);
    int64_t constant = 0;  // Σ the costs of "not in I1": taken off the cut
    flow.AddArc(0, node(1, v), kInfinite);  // v in I2
    flow.AddArc(node(0, v), 1, kInfinite);  // v not in I1
    for (int32_t x = 0; x < n; ++x) {
      flow.AddArc(node(0, x), node(1, x), kInfinite);  // I1 within I2
      const int64_t cost = TimeBytes(alpha * model_.NodeTime(x), link_);
      if (cost <= 0) continue;
      flow.AddArc(node(1, x), 1, cost);  // paid when in I2
      flow.AddArc(0, node(0, x), cost);  // paid when not in I1
      constant += cost;
    }
    for (int l = 0; l < 2; ++l) {
      for (int32_t i = 0; i < num_tensors; ++i) {
        const Tensor& t = tensors_[i];
        flow.AddArc(node(l, t.producer), tensor(l, i), t.bytes);
        for (int32_t r : problem_.output_consumers[t.producer][t.slot]) {
          flow.AddArc(tensor(l, i), node(l, r), kInfinite);
          flow.AddArc(node(l, r), node(l, t.producer), kInfinite);
          // C(I1) = 0 (nothing received) or C(I2) = 0 (nothing sent): no
          // tensor leaves that ideal.
          if ((l == 0 && no_in) || (l == 1 && no_out))
            flow.AddArc(node(l, t.producer), node(l, r), kInfinite);
        }
      }
    }
    const int64_t cut = flow.Solve(0, 1, kInfinite, &work_);
    return static_cast<double>(cut - constant) / link_;
  }

 private:
  const ShardingProblem& problem_;
  const DeviceModel& model_;
  const std::vector<Tensor> tensors_;
  const double link_;
  int64_t work_ = 0;
  std::vector<uint8_t> in_;  // Upper's sets
  std::vector<int32_t> stack_;
};

}  // namespace

HeavyBoundResult HeavyNodeBound(const ShardingProblem& problem,
                                const DeviceModel& model, int num_ipus,
                                double lower_s,
                                const HeavyBoundOptions& options) {
  HeavyBoundResult result;
  const int32_t n = problem.num_nodes();
  const double link = model.profile().link_bytes_per_s();
  if (n == 0 || !(link > 0)) return result;
  std::vector<Tensor> tensors;
  // Each node's time plus its own tensors' bytes / L: the order tried in,
  // and through host an upper value of h(v) (X = {v}).
  std::vector<double> own_s(n);
  double total_s = 0;
  for (int32_t v = 0; v < n; ++v) {
    own_s[v] = model.NodeTime(v);
    total_s += model.NodeTime(v);
  }
  for (int32_t p = 0; p < n; ++p) {
    for (int32_t s = 0;
         s < static_cast<int32_t>(problem.output_bytes[p].size()); ++s) {
      const auto& readers = problem.output_consumers[p][s];
      const int64_t bytes = problem.output_bytes[p][s];
      if (readers.empty() || bytes <= 0) continue;
      tensors.push_back({p, s, bytes});
      own_s[p] += static_cast<double>(bytes) / link;
      for (int32_t r : readers) own_s[r] += static_cast<double>(bytes) / link;
    }
  }
  std::vector<int32_t> order(n);
  for (int32_t v = 0; v < n; ++v) order[v] = v;
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return own_s[a] != own_s[b] ? own_s[a] > own_s[b] : a < b;
  });
  HeavyCuts cuts(problem, model, std::move(tensors));
  auto keep = [&](double h, int32_t v) {
    if (h > result.bound_s) {
      result.bound_s = h;
      result.node = v;
    }
  };
  auto spent = [&] {
    if (options.enough_s > 0 && result.bound_s >= options.enough_s) return true;
    if (cuts.work() <= options.max_work) return false;
    result.out_of_work = true;
    return true;
  };
  const double fixed_s = model.profile().transfer_fixed_s();
  std::vector<std::pair<double, int32_t>> plain;  // (h(v), v) per node tried
  for (int32_t v : order) {
    if (result.tried >= options.max_nodes_tried || spent()) break;
    // Through host h(v) <= own_s[v]: none left can beat the best found.
    // With adjacent copies h(v) <= Upper(v): v cannot.
    // Note [Heavy node's fixed copy costs] adds at most 2 f to h(v).
    if (problem.copies_through_host &&
        own_s[v] + 2 * fixed_s <= std::max(lower_s, result.bound_s)) {
      break;
    }
    if (!problem.copies_through_host &&
        cuts.Upper(v) + 2 * fixed_s <= std::max(lower_s, result.bound_s)) {
      continue;
    }
    const double h = cuts.Solve(v, 1.0);
    ++result.tried;
    keep(h, v);
    plain.emplace_back(h, v);
  }
  // Note [Heavy node's fixed copy costs], for the nodes whose h(v) is
  // largest.
  std::sort(plain.begin(), plain.end(),
            [](const auto& a, const auto& b) { return a > b; });
  if (fixed_s > 0) {
    for (int i = 0; i < static_cast<int>(plain.size()) &&
                    i < options.fixed_cost_nodes && !spent();
         ++i) {
      const auto [h, v] = plain[i];
      // The four kinds' minimum; stops (proving nothing new) once it cannot
      // beat what is known.
      const double known = std::max(lower_s, result.bound_s);
      double f = h + 2 * fixed_s;
      if (f <= known) continue;
      f = std::min(f, cuts.Solve(v, 1.0, true, false) + fixed_s);
      if (f <= known) continue;
      f = std::min(f, cuts.Solve(v, 1.0, false, true) + fixed_s);
      if (f <= known) continue;
      f = std::min(f, cuts.Solve(v, 1.0, true, true));
      keep(f, v);
    }
  }
  // Note [Heavy node and the rest]: for the nodes whose h(v) is largest, the
  // best lambda by a ternary search (the value is concave in lambda).
  if (num_ipus < 2 || options.lagrange_nodes <= 0) return result;
  const double rest_s = total_s / (num_ipus - 1);
  auto value = [&](int32_t v, double lambda) {
    const double mu = lambda - (1 - lambda) / (num_ipus - 1);
    return lambda * cuts.Solve(v, mu / lambda) + (1 - lambda) * rest_s;
  };
  for (int i = 0; i < static_cast<int>(plain.size()) &&
                  i < options.lagrange_nodes && !spent();
       ++i) {
    const int32_t v = plain[i].second;
    double lo = 1.0 / num_ipus, hi = 1.0;
    for (int step = 0; step < options.lagrange_steps && !spent(); ++step) {
      const double a = lo + (hi - lo) / 3, b = hi - (hi - lo) / 3;
      const double fa = value(v, a), fb = value(v, b);
      keep(fa, v);  // every lambda's value is a bound
      keep(fb, v);
      (fa < fb ? lo : hi) = fa < fb ? a : b;
    }
  }
  return result;
}

}  // namespace autoshard
