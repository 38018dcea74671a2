#include "solver/strategies/blocks/block_chain.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "solver/strategies/ideal_lattice.h"

namespace autoshard {
namespace {

// The single-node cuts of Note [Block chain] over `order` (the lattice
// nodes in topological order; `pos` node -> index in it, -1 off the
// lattice): every edge crossing p leaves v_p, no node before v_p is a sink
// and none after it a source.
std::vector<int32_t> SingleNodeCuts(const ShardingProblem& problem,
                                    const std::vector<int32_t>& order,
                                    const std::vector<int32_t>& pos) {
  const int32_t m = static_cast<int32_t>(order.size());
  // crossing[p]: edges u -> v with pos u < p < pos v (they cross the cut
  // after p from a node other than v_p), as a difference array.
  std::vector<int32_t> diff(m + 1, 0);
  int32_t last_source = 0, first_sink = m - 1;
  for (int32_t i = 0; i < m; ++i) {
    const int32_t v = order[i];
    bool has_producer = false, has_reader = false;
    for (int32_t p : problem.producers[v]) has_producer |= pos[p] >= 0;
    for (int32_t c : problem.consumers[v]) {
      if (pos[c] < 0) continue;
      has_reader = true;
      if (pos[c] > i + 1) {
        ++diff[i + 1];
        --diff[pos[c]];
      }
    }
    if (!has_producer) last_source = i;
    if (!has_reader) first_sink = std::min(first_sink, i);
  }
  std::vector<int32_t> cuts;
  int32_t crossing = 0;
  for (int32_t p = 0; p + 1 < m; ++p) {
    crossing += diff[p];
    if (crossing == 0 && p >= last_source && p <= first_sink) cuts.push_back(p);
  }
  return cuts;
}

// What makes two segments the same kind: their local DAG, node times and

// Every cut position of Note [Block chain] (a superset of SingleNodeCuts').
std::vector<int32_t> CutPositions(const ShardingProblem& problem,
                                  const std::vector<int32_t>& order,
                                  const std::vector<int32_t>& pos) {
  const int32_t m = static_cast<int32_t>(order.size());
  // Every node after p descends from v_p iff each node at q > p has a
  // lattice producer at a position in [p, q) (induction on q); every node
  // before p is an ancestor of v_p iff each node at q < p has a lattice
  // reader in (q, p]. So with max_producer[q] and min_reader[q]:
  //   min over q > p of max_producer[q] >= p, and
  //   max over q < p of min_reader[q] <= p.
  std::vector<int32_t> max_producer(m, -1), min_reader(m, m);
  for (int32_t i = 0; i < m; ++i) {
    const int32_t v = order[i];
    for (int32_t u : problem.producers[v])
      if (pos[u] >= 0) max_producer[i] = std::max(max_producer[i], pos[u]);
    for (int32_t c : problem.consumers[v])
      if (pos[c] >= 0) min_reader[i] = std::min(min_reader[i], pos[c]);
  }
  // suffix_min[q] = min over positions >= q of max_producer.
  std::vector<int32_t> suffix_min(m + 1, m);
  for (int32_t q = m - 1; q >= 0; --q)
    suffix_min[q] = std::min(suffix_min[q + 1], max_producer[q]);
  std::vector<int32_t> cuts;
  int32_t prefix_max = -1;  // max over q < p of min_reader[q]
  for (int32_t p = 0; p + 1 < m; ++p) {
    if (suffix_min[p + 1] >= p && prefix_max <= p) cuts.push_back(p);
    prefix_max = std::max(prefix_max, min_reader[p]);
  }
  return cuts;
}

bool Has(const uint64_t* bits, int32_t i) {
  return bits[i / 64] >> (i % 64) & 1;
}

// A tensor (node, output slot) of the lattice: what a segment's boundary
// may count.
struct TensorRef {
  int32_t node;
  int32_t slot;
};

// The tensors made before a segment order[b..e) and read in or after it:
// those a node of the segment reads (each counted in an ideal's boundary
// while a reader in the segment is outside the ideal or one reads after
// the segment), and the bytes of the others (read only after it: in every
// ideal's boundary).
struct SegmentInputs {
  std::vector<TensorRef> read;
  int64_t pass_through_bytes = 0;
};

// The lattice of the segment order[b..e) (Note [Block chain], Note [Segment
// chain]); `pos` maps a lattice node to its index in `order`.
SegmentLattice EnumerateSegment(const ShardingProblem& problem,
                                const DeviceModel& model,
                                const std::vector<int32_t>& order,
                                const std::vector<int32_t>& pos, int32_t b,
                                int32_t e, const SegmentInputs& incoming,
                                int64_t max_ideals) {
  SegmentLattice L;
  const int32_t n = e - b;
  L.num_nodes = n;
  L.words = std::max<int32_t>(1, (n + 63) / 64);
  const int32_t w = L.words;
  // Local producers of each local node, and the bytes a local ideal's
  // boundary may count: (bytes, local readers, read after the segment) per
  // tensor, with the producer's local index (-1: made before the segment).
  struct Tensor {
    int32_t producer;
    double bytes;
    std::vector<int32_t> readers;
    bool outside;
  };
  std::vector<Tensor> tensors;
  std::vector<std::vector<int32_t>> local_producers(n);
  auto add_tensor = [&](int32_t node, size_t slot, int32_t producer) {
    Tensor t{producer,
             static_cast<double>(problem.output_bytes[node][slot]),
             {},
             false};
    for (int32_t r : problem.output_consumers[node][slot]) {
      if (pos[r] < b) continue;  // off the lattice (-1) or before
      if (pos[r] < e) {
        t.readers.push_back(pos[r] - b);
      } else {
        t.outside = true;
      }
    }
    if (!t.readers.empty() || t.outside) tensors.push_back(std::move(t));
  };
  for (const TensorRef& t : incoming.read) add_tensor(t.node, t.slot, -1);
  for (int32_t i = 0; i < n; ++i) {
    const int32_t v = order[b + i];
    for (size_t slot = 0; slot < problem.output_bytes[v].size(); ++slot) {
      add_tensor(v, slot, i);
    }
    for (int32_t p : problem.producers[v]) {
      if (pos[p] >= b && pos[p] < e) local_producers[i].push_back(pos[p] - b);
    }
  }
  auto boundary = [&](const uint64_t* bits) {
    double c = static_cast<double>(incoming.pass_through_bytes);
    for (const Tensor& t : tensors) {
      if (t.producer >= 0 && !Has(bits, t.producer)) continue;
      bool out = t.outside;
      for (int32_t r : t.readers) out |= !Has(bits, r);
      if (out) c += t.bytes;
    }
    return c;
  };
  absl::flat_hash_map<std::string, int32_t> index;
  std::vector<std::vector<int32_t>> preds;
  auto key = [&](const uint64_t* bits) {
    return std::string(reinterpret_cast<const char*>(bits), w * 8);
  };
  auto add = [&](const std::vector<uint64_t>& bits, double t) {
    index[key(bits.data())] = L.size();
    L.bits.insert(L.bits.end(), bits.begin(), bits.end());
    L.compute_s.push_back(t);
    L.copy_s.push_back(model.CopySeconds(boundary(bits.data())));
    preds.emplace_back();
  };
  add(std::vector<uint64_t>(w, 0), 0);
  int32_t level_start = 0;
  std::vector<uint64_t> bits(w);
  while (level_start < L.size()) {
    const int32_t level_end = L.size();
    for (int32_t a = level_start; a < level_end; ++a) {
      for (int32_t i = 0; i < n; ++i) {
        const uint64_t* have = &L.bits[static_cast<size_t>(a) * w];
        if (Has(have, i)) continue;
        bool ready = true;
        for (int32_t p : local_producers[i]) ready &= Has(have, p);
        if (!ready) continue;
        bits.assign(have, have + w);
        bits[i / 64] |= uint64_t{1} << (i % 64);
        auto it = index.find(key(bits.data()));
        if (it == index.end()) {
          if (L.size() >= max_ideals) {
            L.complete = false;
            return L;
          }
          add(bits, L.compute_s[a] + model.NodeTime(order[b + i]));
          preds.back().push_back(a);
        } else {
          preds[it->second].push_back(a);
        }
      }
    }
    level_start = level_end;
  }
  L.pred_start.push_back(0);
  for (const auto& p : preds) {
    L.preds.insert(L.preds.end(), p.begin(), p.end());
    L.pred_start.push_back(static_cast<int32_t>(L.preds.size()));
  }
  const double whole = L.compute_s[L.full()];
  L.by_suffix.resize(L.size());
  for (int32_t j = 0; j < L.size(); ++j) L.by_suffix[j] = j;
  std::stable_sort(L.by_suffix.begin(), L.by_suffix.end(),
                   [&](int32_t a, int32_t b) {
                     return whole - L.compute_s[a] + L.copy_s[a] <
                            whole - L.compute_s[b] + L.copy_s[b];
                   });
  return L;
}

// Widened cut points (CutPositions) are used only when fewer.
constexpr size_t kMaxWidenedSegments = 2048;

// The most repeats of one pattern of 1..kMaxPeriod segments in a row in
// `kind` (A B A B A B: 3); 1 when nothing repeats.
constexpr int32_t kMaxPeriod = 64;
int32_t LongestRepetition(const std::vector<int32_t>& kind) {
  const int32_t size = static_cast<int32_t>(kind.size());
  int32_t best = size > 0 ? 1 : 0;
  for (int32_t period = 1; period <= kMaxPeriod; ++period) {
    int32_t run = 0;  // segments s with kind[s] == kind[s - period], in a row
    for (int32_t s = period; s < size; ++s) {
      run = kind[s] == kind[s - period] ? run + 1 : 0;
      best = std::max(best, run / period + 1);
    }
  }
  return best;
}

// The lattice nodes (every node but the passive constants) in topological
// order, and their tensors' spans along it.
struct OrderTensor {
  int32_t node, slot;
  int32_t producer_pos, last_reader_pos;  // last_reader_pos > producer_pos
};
struct LatticeOrder {
  std::vector<int32_t> order;
  std::vector<int32_t> pos;  // node -> index in order, -1 off the lattice
  // Those read by a later lattice node, by producer position.
  std::vector<OrderTensor> tensors;
  // live_bytes[b], live_count[b]: Σ bytes and number of the tensors made
  // before position b and read at or after it (b = 0..order.size()).
  std::vector<int64_t> live_bytes;
  std::vector<int32_t> live_count;

  // SegmentInputs of order[b..e). O(the segment's reads).
  SegmentInputs Inputs(const ShardingProblem& problem, int32_t b,
                       int32_t e) const {
    SegmentInputs in;
    for (int32_t i = b; i < e; ++i) {
      for (const auto& [producer, slot] : problem.input_tensors[order[i]]) {
        if (pos[producer] >= 0 && pos[producer] < b)
          in.read.push_back({producer, slot});
      }
    }
    std::sort(in.read.begin(), in.read.end(),
              [](const TensorRef& x, const TensorRef& y) {
                return x.node != y.node ? x.node < y.node : x.slot < y.slot;
              });
    in.read.erase(std::unique(in.read.begin(), in.read.end(),
                              [](const TensorRef& x, const TensorRef& y) {
                                return x.node == y.node && x.slot == y.slot;
                              }),
                  in.read.end());
    in.pass_through_bytes = live_bytes[b];
    for (const TensorRef& t : in.read)
      in.pass_through_bytes -= problem.output_bytes[t.node][t.slot];
    return in;
  }
};

LatticeOrder MakeLatticeOrder(const ShardingProblem& problem) {
  LatticeOrder lo;
  const std::vector<uint8_t> passive = PassiveConstants(problem);
  lo.pos.assign(problem.num_nodes(), -1);
  for (int32_t v : problem.topo_order) {
    if (passive[v]) continue;
    lo.pos[v] = static_cast<int32_t>(lo.order.size());
    lo.order.push_back(v);
  }
  for (int32_t i = 0; i < static_cast<int32_t>(lo.order.size()); ++i) {
    const int32_t v = lo.order[i];
    for (size_t slot = 0; slot < problem.output_bytes[v].size(); ++slot) {
      int32_t last = -1;
      for (int32_t r : problem.output_consumers[v][slot])
        last = std::max(last, lo.pos[r]);
      if (last > i)
        lo.tensors.push_back({v, static_cast<int32_t>(slot), i, last});
    }
  }
  // A tensor made at p and last read at q is live at p + 1 .. q.
  const size_t m = lo.order.size();
  lo.live_bytes.assign(m + 2, 0);
  lo.live_count.assign(m + 2, 0);
  for (const OrderTensor& t : lo.tensors) {
    const int64_t bytes = problem.output_bytes[t.node][t.slot];
    lo.live_bytes[t.producer_pos + 1] += bytes;
    lo.live_bytes[t.last_reader_pos + 1] -= bytes;
    ++lo.live_count[t.producer_pos + 1];
    --lo.live_count[t.last_reader_pos + 1];
  }
  for (size_t b = 1; b < lo.live_bytes.size(); ++b) {
    lo.live_bytes[b] += lo.live_bytes[b - 1];
    lo.live_count[b] += lo.live_count[b - 1];
  }
  lo.live_bytes.resize(m + 1);
  lo.live_count.resize(m + 1);
  return lo;
}

// What makes two segments the same kind (Note [Block chain]): for the
// segment order[b..e), its local DAG, node times and tensor bytes, and the
// tensors made before it and read in or after it (`incoming`, as a sorted
// list: which tensor it is does not matter, only its bytes and readers).
std::vector<double> Signature(const ShardingProblem& problem,
                              const DeviceModel& model, const LatticeOrder& lo,
                              const SegmentInputs& inputs, int32_t b,
                              int32_t e) {
  // (bytes, local readers..., read after e) of one tensor.
  auto tensor = [&](int32_t node, size_t slot) {
    std::vector<double> t{
        static_cast<double>(problem.output_bytes[node][slot])};
    std::vector<double> in;
    bool outside = false;
    for (int32_t r : problem.output_consumers[node][slot]) {
      const int32_t q = lo.pos[r];
      if (q < b) continue;
      if (q < e) {
        in.push_back(q - b);
      } else {
        outside = true;
      }
    }
    std::sort(in.begin(), in.end());
    in.erase(std::unique(in.begin(), in.end()), in.end());
    t.push_back(static_cast<double>(in.size()));
    t.insert(t.end(), in.begin(), in.end());
    t.push_back(outside ? 1 : 0);
    return t;
  };
  std::vector<std::vector<double>> incoming;
  for (const TensorRef& t : inputs.read)
    incoming.push_back(tensor(t.node, t.slot));
  std::sort(incoming.begin(), incoming.end());
  std::vector<double> sig{static_cast<double>(e - b),
                          static_cast<double>(inputs.pass_through_bytes),
                          static_cast<double>(incoming.size())};
  for (const std::vector<double>& t : incoming)
    sig.insert(sig.end(), t.begin(), t.end());
  for (int32_t i = b; i < e; ++i) {
    const int32_t v = lo.order[i];
    sig.push_back(model.NodeTime(v));
    sig.push_back(static_cast<double>(problem.output_bytes[v].size()));
    for (size_t slot = 0; slot < problem.output_bytes[v].size(); ++slot) {
      const std::vector<double> t = tensor(v, slot);
      sig.insert(sig.end(), t.begin(), t.end());
    }
  }
  return sig;
}

// The chain of segments between `cuts` (positions in lo.order), kinds and
// lattices as FindBlockChain says.
BlockChain ChainFromCuts(const ShardingProblem& problem,
                         const DeviceModel& model, const LatticeOrder& lo,
                         const std::vector<int32_t>& cuts,
                         int64_t max_ideals_per_kind, int32_t min_repeats) {
  BlockChain chain;
  const std::vector<int32_t>& order = lo.order;
  const std::vector<int32_t>& pos = lo.pos;
  std::vector<int32_t> begins;
  int32_t begin = 0;
  for (size_t c = 0; c <= cuts.size(); ++c) {
    const int32_t end =
        c < cuts.size() ? cuts[c] + 1 : static_cast<int32_t>(order.size());
    chain.segments.emplace_back(order.begin() + begin, order.begin() + end);
    begins.push_back(begin);
    begin = end;
  }
  // Kinds first: without enough repetition no lattice is enumerated.
  std::map<std::vector<double>, int32_t> kinds;
  std::vector<int32_t> first_of_kind;       // a segment of each kind
  std::vector<SegmentInputs> first_inputs;  // and its inputs
  for (int32_t s = 0; s < static_cast<int32_t>(chain.segments.size()); ++s) {
    const int32_t e =
        begins[s] + static_cast<int32_t>(chain.segments[s].size());
    SegmentInputs inputs = lo.Inputs(problem, begins[s], e);
    std::vector<double> sig =
        Signature(problem, model, lo, inputs, begins[s], e);
    auto [it, added] =
        kinds.emplace(std::move(sig), static_cast<int32_t>(kinds.size()));
    if (added) {
      first_of_kind.push_back(s);
      first_inputs.push_back(std::move(inputs));
    }
    chain.kind.push_back(it->second);
  }
  chain.longest_run = LongestRepetition(chain.kind);
  if (chain.longest_run < min_repeats) {
    chain.complete = false;
    return chain;
  }
  for (size_t k = 0; k < first_of_kind.size(); ++k) {
    const int32_t b = begins[first_of_kind[k]];
    const int32_t e =
        b + static_cast<int32_t>(chain.segments[first_of_kind[k]].size());
    chain.lattices.push_back(EnumerateSegment(problem, model, order, pos, b, e,
                                              first_inputs[k],
                                              max_ideals_per_kind));
    if (!chain.lattices.back().complete) {
      chain.complete = false;
      return chain;
    }
  }
  for (int32_t k : chain.kind) chain.ideals += chain.lattices[k].size();
  return chain;
}

}  // namespace

BlockChain FindBlockChain(const ShardingProblem& problem,
                          const DeviceModel& model, int64_t max_ideals_per_kind,
                          int32_t min_repeats) {
  const LatticeOrder lo = MakeLatticeOrder(problem);
  if (lo.order.empty()) {
    BlockChain chain;
    chain.complete = false;
    return chain;
  }
  // Single-node cuts first: where they make a chain, the more general cuts
  // only split its segments further (the same positions in more, smaller
  // segments: the Llama graph's 164 became 1,608, and its DP twice as
  // slow).
  BlockChain chain = ChainFromCuts(problem, model, lo,
                                   SingleNodeCuts(problem, lo.order, lo.pos),
                                   max_ideals_per_kind, min_repeats);
  if (chain.complete && chain.segments.size() >= 2) {
    chain.single_node_cuts = true;
    return chain;
  }
  // So many cuts that most segments are a node or two: the DP's stages span
  // thousands of segments each (a 20,000-node graph whose every node reads
  // the one before: +1.5 s to plan, nothing gained). FindSegmentChain cuts
  // such a graph into fewer, larger segments.
  const std::vector<int32_t> cuts = CutPositions(problem, lo.order, lo.pos);
  if (cuts.size() >= kMaxWidenedSegments) {
    chain.complete = false;
    return chain;
  }
  return ChainFromCuts(problem, model, lo, cuts, max_ideals_per_kind,
                       min_repeats);
}

BlockChain FindSegmentChain(const ShardingProblem& problem,
                            const DeviceModel& model,
                            const SegmentChainOptions& options) {
  BlockChain chain;
  chain.exact = false;
  const LatticeOrder lo = MakeLatticeOrder(problem);
  const int32_t m = static_cast<int32_t>(lo.order.size());
  if (m == 0 || m > options.max_nodes) {
    chain.complete = false;
    return chain;
  }
  // The tensors made at or before p and read after it: live at p + 1.
  auto crossing = [&](int32_t p) { return lo.live_count[p + 1]; };
  // Ranges [b, e) still to place, last first (a stack: the segments come
  // out in order, b never falls).
  std::vector<std::pair<int32_t, int32_t>> todo{{0, m}};
  while (!todo.empty()) {
    const auto [b, e] = todo.back();
    todo.pop_back();
    if (std::chrono::steady_clock::now() > options.deadline) {
      chain.complete = false;
      return chain;
    }
    if (e - b <= options.max_nodes_per_segment || e - b == 1) {
      // At least 2: a one-node segment's lattice ({}, the node) is whole.
      const int64_t limit =
          std::max<int64_t>(2, options.max_ideals_per_segment);
      // SegmentChainOptions::stop_at_positions_left: a lattice of more
      // ideals than the positions left gives the chain up.
      const int64_t room = options.stop_at_positions_left
                               ? options.max_positions - chain.ideals
                               : limit;
      SegmentLattice L = EnumerateSegment(
          problem, model, lo.order, lo.pos, b, e, lo.Inputs(problem, b, e),
          std::max<int64_t>(2, std::min(limit, room)));
      if (!L.complete && room < limit && e - b > 1) {
        chain.complete = false;
        return chain;
      }
      if (L.complete || e - b == 1) {
        chain.ideals += L.size();
        if (chain.ideals > options.max_positions) {
          chain.complete = false;
          return chain;
        }
        chain.kind.push_back(static_cast<int32_t>(chain.lattices.size()));
        chain.lattices.push_back(std::move(L));
        chain.segments.emplace_back(lo.order.begin() + b, lo.order.begin() + e);
        continue;
      }
    }
    // Split after the position in the middle half of [b, e - 2] with the
    // fewest crossing tensors, the one nearest the middle on a tie (the
    // middle half: where crossings only grow along the order, the fewest
    // at b would peel one node a split, O(range^2)).
    const int32_t first = b + (e - b - 1) / 4;
    const int32_t last = e - 2 - (e - b - 1) / 4;
    int32_t cut = first;
    const int32_t mid = b + (e - b) / 2 - 1;
    for (int32_t p = first; p <= last; ++p) {
      if (crossing(p) < crossing(cut) ||
          (crossing(p) == crossing(cut) &&
           std::abs(p - mid) < std::abs(cut - mid))) {
        cut = p;
      }
    }
    todo.push_back({cut + 1, e});
    todo.push_back({b, cut + 1});
  }
  chain.longest_run = 1;
  return chain;
}

}  // namespace autoshard
