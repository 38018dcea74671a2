#include "solver/strategies/blocks/block_chain.h"

#include <algorithm>
#include <map>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "solver/strategies/ideal_lattice.h"

namespace autoshard {
namespace {

// The cut positions of Note [Block chain] over `order` (the lattice nodes in
// topological order; `pos` node -> index in it, -1 off the lattice).
std::vector<int32_t> CutPositions(const ShardingProblem& problem,
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
// tensor bytes, and which of their nodes read the cut node before them.
std::vector<double> Signature(const ShardingProblem& problem,
                              const DeviceModel& model,
                              const std::vector<int32_t>& segment,
                              int32_t cut_before,
                              const std::vector<int32_t>& local,
                              const std::vector<int32_t>& segment_of,
                              int32_t s) {
  std::vector<double> sig{static_cast<double>(segment.size())};
  auto readers = [&](int32_t node, size_t slot) {
    bool outside = false;
    std::vector<double> in;
    for (int32_t r : problem.output_consumers[node][slot]) {
      if (local[r] < 0) continue;  // off the lattice
      if (segment_of[r] == s) {
        in.push_back(local[r]);
      } else {
        outside = true;
      }
    }
    std::sort(in.begin(), in.end());
    in.erase(std::unique(in.begin(), in.end()), in.end());
    sig.push_back(static_cast<double>(in.size()));
    sig.insert(sig.end(), in.begin(), in.end());
    sig.push_back(outside ? 1 : 0);
  };
  if (cut_before >= 0) {
    for (size_t slot = 0; slot < problem.output_bytes[cut_before].size();
         ++slot) {
      sig.push_back(
          static_cast<double>(problem.output_bytes[cut_before][slot]));
      readers(cut_before, slot);
    }
  }
  for (int32_t v : segment) {
    sig.push_back(model.NodeTime(v));
    sig.push_back(static_cast<double>(problem.output_bytes[v].size()));
    for (size_t slot = 0; slot < problem.output_bytes[v].size(); ++slot) {
      sig.push_back(static_cast<double>(problem.output_bytes[v][slot]));
      readers(v, slot);
    }
  }
  return sig;
}

bool Has(const uint64_t* bits, int32_t i) {
  return bits[i / 64] >> (i % 64) & 1;
}

// The lattice of `segment` (Note [Block chain]); `local` maps a node to its
// index in its own segment.
SegmentLattice EnumerateSegment(const ShardingProblem& problem,
                                const DeviceModel& model,
                                const std::vector<int32_t>& segment,
                                int32_t cut_before,
                                const std::vector<int32_t>& local,
                                const std::vector<int32_t>& segment_of,
                                int32_t s, int64_t max_ideals) {
  SegmentLattice L;
  const int32_t n = static_cast<int32_t>(segment.size());
  L.num_nodes = n;
  L.words = std::max<int32_t>(1, (n + 63) / 64);
  const int32_t w = L.words;
  // Local producers of each local node, and the bytes a local ideal's
  // boundary may count: (bytes, local readers, read outside) per tensor,
  // with the producer's local index (-1: the cut node before).
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
      if (local[r] < 0) continue;
      if (segment_of[r] == s) {
        t.readers.push_back(local[r]);
      } else {
        t.outside = true;
      }
    }
    if (!t.readers.empty() || t.outside) tensors.push_back(std::move(t));
  };
  if (cut_before >= 0) {
    for (size_t slot = 0; slot < problem.output_bytes[cut_before].size();
         ++slot) {
      add_tensor(cut_before, slot, -1);
    }
  }
  for (int32_t i = 0; i < n; ++i) {
    for (size_t slot = 0; slot < problem.output_bytes[segment[i]].size();
         ++slot) {
      add_tensor(segment[i], slot, i);
    }
    for (int32_t p : problem.producers[segment[i]]) {
      if (local[p] >= 0 && segment_of[p] == s)
        local_producers[i].push_back(local[p]);
    }
  }
  auto boundary = [&](const uint64_t* bits) {
    double c = 0;
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
          add(bits, L.compute_s[a] + model.NodeTime(segment[i]));
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

// The most repeats of one pattern of 1..kMaxPeriod segments in a row in
// `kind` (A B A B A B: 3); 1 when nothing repeats.
constexpr int32_t kMaxPeriod = 8;
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

}  // namespace

BlockChain FindBlockChain(const ShardingProblem& problem,
                          const DeviceModel& model, int64_t max_ideals_per_kind,
                          int32_t min_repeats) {
  BlockChain chain;
  const std::vector<uint8_t> passive = PassiveConstants(problem);
  std::vector<int32_t> order, pos(problem.num_nodes(), -1);
  for (int32_t v : problem.topo_order) {
    if (passive[v]) continue;
    pos[v] = static_cast<int32_t>(order.size());
    order.push_back(v);
  }
  if (order.empty()) {
    chain.complete = false;
    return chain;
  }
  const std::vector<int32_t> cuts = CutPositions(problem, order, pos);
  std::vector<int32_t> segment_of(problem.num_nodes(), -1);
  std::vector<int32_t> local(problem.num_nodes(), -1);
  int32_t begin = 0;
  for (size_t c = 0; c <= cuts.size(); ++c) {
    const int32_t end =
        c < cuts.size() ? cuts[c] + 1 : static_cast<int32_t>(order.size());
    chain.segments.emplace_back(order.begin() + begin, order.begin() + end);
    for (int32_t i = begin; i < end; ++i) {
      segment_of[order[i]] = static_cast<int32_t>(c);
      local[order[i]] = i - begin;
    }
    begin = end;
  }
  // Kinds first: without enough repetition no lattice is enumerated.
  std::map<std::vector<double>, int32_t> kinds;
  std::vector<int32_t> first_of_kind;  // a segment of each kind
  for (int32_t s = 0; s < static_cast<int32_t>(chain.segments.size()); ++s) {
    const int32_t cut_before = s > 0 ? chain.segments[s - 1].back() : -1;
    std::vector<double> sig = Signature(problem, model, chain.segments[s],
                                        cut_before, local, segment_of, s);
    auto [it, added] =
        kinds.emplace(std::move(sig), static_cast<int32_t>(kinds.size()));
    if (added) first_of_kind.push_back(s);
    chain.kind.push_back(it->second);
  }
  chain.longest_run = LongestRepetition(chain.kind);
  if (chain.longest_run < min_repeats) {
    chain.complete = false;
    return chain;
  }
  for (int32_t s : first_of_kind) {
    const int32_t cut_before = s > 0 ? chain.segments[s - 1].back() : -1;
    chain.lattices.push_back(EnumerateSegment(problem, model, chain.segments[s],
                                              cut_before, local, segment_of, s,
                                              max_ideals_per_kind));
    if (!chain.lattices.back().complete) {
      chain.complete = false;
      return chain;
    }
  }
  for (int32_t k : chain.kind) chain.ideals += chain.lattices[k].size();
  return chain;
}

}  // namespace autoshard
