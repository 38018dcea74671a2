#include "solver/strategies/reader_hoist.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "solver/strategies/constraints.h"
#include "solver/strategies/ideal_lattice.h"
#include "solver/strategies/slice_dp.h"

namespace autoshard {
namespace {

// A tensor that passes through at least one IPU: its producer and slot,
// and bytes x IPUs passed (the order tried in).
struct Passing {
  int32_t producer = 0;
  int32_t slot = 0;
  double score = 0;
};

// Prefixes of a branch Hoist compares at most.
constexpr int kMaxPrefixes = 32;
// Producers after q a node of a branch may bring along (a Reshape's shape
// computed late, say).
constexpr int kMaxAncestors = 16;
// Readers a tensor needs for the insertion points among its readers.
constexpr int kMinSplitReaders = 8;

// Where Hoist inserts (Note [Reader hoisting]): after the producer, after
// the last node of its IPU, or after the reader at fraction i / s of its
// readers (in order of L) for i = at - 1 = 1 .. s - 1, s the options'
// reader_splits.
constexpr int kAfterProducer = 0, kAfterIpu = 1;

class Hoister {
 public:
  Hoister(const ShardingProblem& problem, const DeviceModel& model,
          int num_ipus, const ReaderHoistOptions& options)
      : p_(problem),
        model_(model),
        k_(num_ipus),
        options_(options),
        passive_(PassiveConstants(problem)) {
    for (int32_t v = 0; v < p_.num_nodes(); ++v) active_ += passive_[v] ? 0 : 1;
  }

  int32_t active() const { return active_; }

  // The nodes but folded constants, by IPU, then topological position: a
  // topological order `ipu` slices.
  std::vector<int32_t> OrderOf(const std::vector<int32_t>& ipu) const {
    std::vector<int32_t> order;
    for (int32_t v : p_.topo_order)
      if (!passive_[v]) order.push_back(v);
    std::stable_sort(order.begin(), order.end(),
                     [&](int32_t a, int32_t b) { return ipu[a] < ipu[b]; });
    return order;
  }

  // Tensors whose last reader is two or more IPUs after their producer,
  // most bytes x IPUs passed first.
  std::vector<Passing> PassingTensors(const std::vector<int32_t>& ipu) const {
    std::vector<Passing> out;
    for (int32_t v = 0; v < p_.num_nodes(); ++v) {
      if (passive_[v]) continue;
      for (size_t slot = 0; slot < p_.output_bytes[v].size(); ++slot) {
        const int64_t bytes = p_.output_bytes[v][slot];
        int32_t last = ipu[v];
        for (int32_t c : p_.output_consumers[v][slot])
          if (!passive_[c]) last = std::max(last, ipu[c]);
        if (bytes <= 0 || last < ipu[v] + 2) continue;
        out.push_back({v, static_cast<int32_t>(slot),
                       static_cast<double>(bytes) * (last - ipu[v] - 1)});
      }
    }
    std::stable_sort(
        out.begin(), out.end(),
        [](const Passing& a, const Passing& b) { return a.score > b.score; });
    return out;
  }

  // Note [Reader hoisting]: in `*order`, moves the prefix of the branch of
  // `t`'s readers after q that transports least (Transport) to right after
  // q, q chosen by `at` (kAfterProducer, kAfterIpu: by `ipu`, which must
  // then slice `*order`; or a reader's position). False, leaving `*order`,
  // when no prefix transports less than `*order`, or q needs more readers.
  bool Hoist(std::vector<int32_t>* order, const std::vector<int32_t>& ipu,
             const Passing& t, int at) {
    std::vector<int32_t>& l = *order;
    std::vector<int32_t>& pos = pos_;
    pos.assign(p_.num_nodes(), -1);
    for (size_t i = 0; i < l.size(); ++i) pos[l[i]] = static_cast<int32_t>(i);
    int32_t q = pos[t.producer];
    if (at == kAfterIpu) {
      while (q + 1 < static_cast<int32_t>(l.size()) &&
             ipu[l[q + 1]] == ipu[t.producer]) {
        ++q;
      }
    }
    if (at > kAfterIpu) {
      std::vector<int32_t> later;
      for (int32_t c : p_.output_consumers[t.producer][t.slot])
        if (!passive_[c] && pos[c] > q) later.push_back(pos[c]);
      if (static_cast<int>(later.size()) < kMinSplitReaders) return false;
      std::sort(later.begin(), later.end());
      q = later[later.size() * (at - 1) / options_.reader_splits];
    }
    auto after = [&](int32_t c) { return !passive_[c] && pos[c] > q; };
    // The branch: t's readers after q in order of L, then, in order of L,
    // the nodes reading a node of the branch, each with its producers after
    // q that are not in it yet (a node with too many is left out).
    const int32_t n = p_.num_nodes();
    std::vector<uint8_t> queued(n, 0), in_branch(n, 0);
    std::vector<int32_t> mark(n, -1), branch, closure, stack;
    using Entry = std::pair<int32_t, int32_t>;  // (position, node)
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;
    auto enqueue_readers = [&](int32_t x) {
      for (int32_t c : p_.consumers[x]) {
        if (passive_[c] || queued[c] || in_branch[c]) continue;
        queued[c] = 1;
        queue.emplace(pos[c], c);
      }
    };
    // Appends x and its producers after q not in the branch yet (and
    // theirs), at most kMaxAncestors of them, in order of L; false when
    // there are more.
    auto take = [&](int32_t x) {
      closure.clear();
      stack.assign(1, x);
      mark[x] = x;
      while (!stack.empty()) {
        const int32_t v = stack.back();
        stack.pop_back();
        closure.push_back(v);
        if (static_cast<int>(closure.size()) > kMaxAncestors + 1) return false;
        for (int32_t u : p_.producers[v]) {
          if (passive_[u] || in_branch[u] || pos[u] <= q || mark[u] == x)
            continue;
          mark[u] = x;
          stack.push_back(u);
        }
      }
      std::sort(closure.begin(), closure.end(),
                [&](int32_t a, int32_t b) { return pos[a] < pos[b]; });
      for (int32_t v : closure) {
        in_branch[v] = 1;
        branch.push_back(v);
      }
      for (int32_t v : closure) enqueue_readers(v);
      return true;
    };
    std::vector<int32_t> readers_after;
    for (int32_t c : p_.output_consumers[t.producer][t.slot])
      if (after(c)) readers_after.push_back(c);
    std::sort(readers_after.begin(), readers_after.end(),
              [&](int32_t a, int32_t b) { return pos[a] < pos[b]; });
    for (int32_t c : readers_after) queued[c] = 1;
    for (int32_t c : readers_after)
      if (!in_branch[c]) take(c);
    const size_t readers = branch.size();
    if (branch.empty()) return false;
    while (!queue.empty() &&
           static_cast<int32_t>(branch.size()) < options_.max_branch_nodes) {
      const int32_t x = queue.top().second;
      queue.pop();
      if (!in_branch[x]) take(x);
    }
    // The prefixes tried: every reader, and each longer one whose last node
    // ends the carry of a tensor (carry(j): bytes of the tensors of t and
    // the first j nodes still read after q by a node not among them).
    absl::flat_hash_map<std::pair<int32_t, int32_t>, int32_t> left;
    auto produce = [&](int32_t v, int32_t slot) {
      int32_t count = 0;
      for (int32_t c : p_.output_consumers[v][slot]) count += after(c) ? 1 : 0;
      if (count > 0 && p_.output_bytes[v][slot] > 0) left[{v, slot}] = count;
    };
    produce(t.producer, t.slot);
    std::vector<size_t> prefixes;
    for (size_t j = 0; j < branch.size(); ++j) {
      bool ends = false;
      for (const auto& [u, slot] : p_.input_tensors[branch[j]]) {
        auto it = left.find({u, slot});
        if (it != left.end() && --it->second == 0) ends = true;
      }
      for (size_t slot = 0; slot < p_.output_bytes[branch[j]].size(); ++slot)
        produce(branch[j], static_cast<int32_t>(slot));
      if (j + 1 == readers || (j + 1 > readers && ends))
        prefixes.push_back(j + 1);
      if (static_cast<int>(prefixes.size()) >= kMaxPrefixes) break;
    }
    double best = Transport(l) * (1 - 1e-9);
    std::vector<int32_t> out, best_order;
    std::vector<uint8_t> moved(p_.num_nodes(), 0);
    for (size_t j : prefixes) {
      for (size_t i = 0; i < j; ++i) moved[branch[i]] = 1;
      out.clear();
      for (int32_t i = 0; i < static_cast<int32_t>(l.size()); ++i) {
        if (!moved[l[i]]) out.push_back(l[i]);
        if (i == q) out.insert(out.end(), branch.begin(), branch.begin() + j);
      }
      const double transport = Transport(out);
      if (transport < best) {
        best = transport;
        best_order = out;
      }
    }
    if (best_order.empty()) return false;
    l = std::move(best_order);
    return true;
  }

  // Σ over tensors of their bytes x the compute between their producer and
  // their last reader in `order` (byte-seconds): the bytes a slicing of
  // `order` copies over each IPU's boundary, summed, for cuts spread evenly
  // over its compute.
  double Transport(const std::vector<int32_t>& order) {
    start_s_.assign(p_.num_nodes(), 0);
    double at = 0;
    for (int32_t v : order) {
      start_s_[v] = at;
      at += model_.NodeTime(v);
    }
    double total = 0;
    for (int32_t v : order) {
      const double end_s = start_s_[v] + model_.NodeTime(v);
      for (size_t slot = 0; slot < p_.output_bytes[v].size(); ++slot) {
        double last_s = end_s;
        for (int32_t c : p_.output_consumers[v][slot])
          if (!passive_[c]) last_s = std::max(last_s, start_s_[c]);
        total += static_cast<double>(
                     std::max<int64_t>(0, p_.output_bytes[v][slot])) *
                 (last_s - end_s);
      }
    }
    return total;
  }

  // The DP's slicing of `order` (folded constants in their earliest
  // reader's unit) when it is faster than `than_s`, else empty.
  std::vector<int32_t> Slice(const std::vector<int32_t>& order, double than_s) {
    SliceOrder units{"hoisted", {}};
    std::vector<int32_t> unit(p_.num_nodes(), -1);
    for (int32_t v : order) {
      unit[v] = static_cast<int32_t>(units.units.size());
      units.units.push_back({v});
    }
    for (auto it = p_.topo_order.rbegin(); it != p_.topo_order.rend(); ++it) {
      const int32_t v = *it;
      if (!passive_[v]) continue;
      int32_t u = std::numeric_limits<int32_t>::max();
      for (int32_t c : p_.consumers[v]) u = std::min(u, unit[c]);
      unit[v] = u == std::numeric_limits<int32_t>::max() ? 0 : u;
      units.units[unit[v]].push_back(v);
    }
    ++orders_sliced_;
    internal::SliceDp dp(p_, model_, units, k_, options_.deadline,
                         options_.max_fit_evaluations);
    const double limit = than_s * (1 - 1e-9);
    SliceResult r = dp.Solve(/*ignore_memory=*/true, limit);
    if (!r.found || r.bottleneck_s >= limit) return {};
    if (!options_.ignore_memory && !r.fits) {
      r = dp.Solve(/*ignore_memory=*/false, limit);
      if (!r.found || r.bottleneck_s >= limit) return {};
    }
    std::vector<int32_t> split(p_.num_nodes(), 0);
    for (int d = 0; d < k_; ++d)
      for (int32_t u = r.cuts[d]; u < r.cuts[d + 1]; ++u)
        for (int32_t v : units.units[u]) split[v] = d;
    return split;
  }

  // `split`'s bottleneck when it may replace a split of `than_s` (faster,
  // constraints kept, fitting unless ignore_memory), else infinity.
  double Judge(const std::vector<int32_t>& split, double than_s) const {
    const double inf = std::numeric_limits<double>::infinity();
    const double s = model_.EvaluatePerformance(split, k_, 1).bottleneck_s;
    if (!(s < than_s * (1 - 1e-9))) return inf;
    if (!BrokenConstraint(p_, split).empty()) return inf;
    if (!options_.ignore_memory) {
      for (int d = 0; d < k_; ++d)
        if (!model_.EvaluateMemory(split, d).fits) return inf;
    }
    return s;
  }

  int orders_sliced() const { return orders_sliced_; }

 private:
  const ShardingProblem& p_;
  const DeviceModel& model_;
  const int k_;
  const ReaderHoistOptions& options_;
  const std::vector<uint8_t> passive_;
  int32_t active_ = 0;
  int orders_sliced_ = 0;
  std::vector<int32_t> pos_;     // Hoist's scratch: node -> position
  std::vector<double> start_s_;  // Transport's: node -> compute before it
};

}  // namespace

ReaderHoistResult ImproveByReaderHoisting(const ShardingProblem& problem,
                                          const DeviceModel& model,
                                          int num_ipus,
                                          std::vector<int32_t> ipu,
                                          const ReaderHoistOptions& options) {
  ReaderHoistResult result;
  result.bottleneck_s =
      model.EvaluatePerformance(ipu, num_ipus, 1).bottleneck_s;
  result.ipu = std::move(ipu);
  // Below 3 IPUs no tensor passes through one.
  if (num_ipus < 3 || problem.copies_through_host) return result;
  Hoister h(problem, model, num_ipus, options);
  if (h.active() < num_ipus) return result;
  std::vector<int32_t> order = h.OrderOf(result.ipu);
  for (int round = 0; round < options.max_rounds; ++round) {
    if (std::chrono::steady_clock::now() > options.deadline) break;
    const std::vector<Passing> passing = h.PassingTensors(result.ipu);
    if (passing.empty()) break;
    double best_s = result.bottleneck_s;
    std::vector<int32_t> best_split, best_order;
    std::vector<std::vector<int32_t>> tried;
    auto consider = [&](std::vector<int32_t> o) {
      if (std::find(tried.begin(), tried.end(), o) != tried.end()) return;
      tried.push_back(o);
      std::vector<int32_t> split = h.Slice(o, best_s);
      if (split.empty()) return;
      const double s = h.Judge(split, best_s);
      if (s < best_s) {
        best_s = s;
        best_split = std::move(split);
        best_order = std::move(o);
      }
    };
    // Every passing tensor's readers hoisted (one order per insertion point
    // but the IPU's end), then one tensor at a time.
    const int points = options.reader_splits + 1;
    for (int at = kAfterProducer; at < points; ++at) {
      if (at == kAfterIpu) continue;
      std::vector<int32_t> all = order;
      bool any = false;
      for (const Passing& t : passing) any |= h.Hoist(&all, result.ipu, t, at);
      if (any) consider(std::move(all));
    }
    const int tries = std::min<int>(options.tensors_per_round,
                                    static_cast<int>(passing.size()));
    for (int i = 0; i < tries; ++i) {
      for (int at = kAfterProducer; at < points; ++at) {
        if (std::chrono::steady_clock::now() > options.deadline) break;
        std::vector<int32_t> o = order;
        if (h.Hoist(&o, result.ipu, passing[i], at)) consider(std::move(o));
      }
    }
    if (best_split.empty()) break;
    result.ipu = std::move(best_split);
    result.bottleneck_s = best_s;
    order = std::move(best_order);
    ++result.hoists;
  }
  result.orders_sliced = h.orders_sliced();
  return result;
}

}  // namespace autoshard
