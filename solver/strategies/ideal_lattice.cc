#include "solver/strategies/ideal_lattice.h"

#include <algorithm>
#include <random>

#include "absl/container/flat_hash_map.h"

namespace autoshard {

std::vector<uint8_t> PassiveConstants(const ShardingProblem& problem) {
  std::vector<uint8_t> passive(problem.num_nodes(), 0);
  for (int32_t n : problem.topo_order) {
    if (!problem.is_constant[n]) continue;
    bool all = true;
    for (int32_t p : problem.producers[n]) all &= passive[p] != 0;
    passive[n] = all ? 1 : 0;
  }
  return passive;
}

void PlaceConstants(const ShardingProblem& problem,
                    const std::vector<uint8_t>& passive,
                    std::vector<int32_t>* ipu) {
  for (auto it = problem.topo_order.rbegin(); it != problem.topo_order.rend();
       ++it) {
    const int32_t n = *it;
    if (!passive[n]) continue;
    int32_t earliest = -1;
    for (int32_t c : problem.consumers[n]) {
      if (earliest < 0 || (*ipu)[c] < earliest) earliest = (*ipu)[c];
    }
    (*ipu)[n] = std::max(earliest, 0);
  }
}

namespace {

// One Zobrist key per lattice bit, from a fixed stream: deterministic runs.
std::vector<uint64_t> ZobristKeys(int32_t m) {
  std::mt19937_64 rng(0x1dea15);
  std::vector<uint64_t> zobrist(m);
  for (uint64_t& z : zobrist) z = rng();
  return zobrist;
}

// The indices of `values` in ascending value (ties: the lower index first).
std::vector<int32_t> AscendingOrder(const std::vector<double>& values) {
  std::vector<int32_t> order(values.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return values[a] < values[b]; });
  return order;
}

// Whether lattice bit `b` is set in `bits`.
bool HasBit(const std::vector<uint64_t>& bits, int32_t b) {
  return bits[b / 64] >> (b % 64) & 1;
}

// The lattice's nodes (the non-passive ones, in topological order: lattice
// bit -> problem node); `index_of` gets the inverse, -1 off the lattice.
std::vector<int32_t> LatticeNodes(const ShardingProblem& problem,
                                  std::vector<int32_t>* index_of) {
  const std::vector<uint8_t> passive = PassiveConstants(problem);
  index_of->assign(problem.num_nodes(), -1);
  std::vector<int32_t> node_of;
  for (int32_t node : problem.topo_order) {
    if (passive[node]) continue;
    (*index_of)[node] = static_cast<int32_t>(node_of.size());
    node_of.push_back(node);
  }
  return node_of;
}

// The frontier of the empty ideal: the bits with no lattice producer. The
// frontier of a larger one is derived as it is made (FrontierAfterAdding).
std::vector<int32_t> EmptyIdealFrontier(const ShardingProblem& problem,
                                        const std::vector<int32_t>& node_of,
                                        const std::vector<int32_t>& index_of) {
  std::vector<int32_t> frontier;
  for (int32_t b = 0; b < static_cast<int32_t>(node_of.size()); ++b) {
    int32_t producers_in_lattice = 0;
    for (int32_t p : problem.producers[node_of[b]])
      producers_in_lattice += index_of[p] >= 0;
    if (producers_in_lattice == 0) frontier.push_back(b);
  }
  return frontier;
}

// C of the ideal `bits` (its parent's, `parent_bytes`, plus `node`): the
// node's outputs read in the lattice join the boundary; its inputs whose
// every lattice reader is now inside leave it.
double BoundaryAfterAdding(const ShardingProblem& problem,
                           const std::vector<int32_t>& index_of,
                           const std::vector<uint64_t>& bits, int32_t node,
                           double parent_bytes) {
  double c = parent_bytes;
  for (size_t slot = 0; slot < problem.output_bytes[node].size(); ++slot) {
    for (int32_t r : problem.output_consumers[node][slot]) {
      if (index_of[r] < 0) continue;
      c += static_cast<double>(problem.output_bytes[node][slot]);
      break;
    }
  }
  for (auto [producer, slot] : problem.input_tensors[node]) {
    if (index_of[producer] < 0) continue;
    bool inside = true;
    for (int32_t r : problem.output_consumers[producer][slot])
      inside &= index_of[r] < 0 || HasBit(bits, index_of[r]);
    if (inside) c -= static_cast<double>(problem.output_bytes[producer][slot]);
  }
  return c;
}

// The frontier of the ideal `bits`, made from its parent's (`frontier`) by
// adding bit `v` (problem node `node`): v leaves it, and each consumer of
// the node whose lattice producers are all inside joins it.
std::vector<int32_t> FrontierAfterAdding(const ShardingProblem& problem,
                                         const std::vector<int32_t>& index_of,
                                         const std::vector<uint64_t>& bits,
                                         const std::vector<int32_t>& frontier,
                                         int32_t v, int32_t node) {
  std::vector<int32_t> f;
  for (int32_t u : frontier)
    if (u != v) f.push_back(u);
  for (int32_t consumer : problem.consumers[node]) {
    const int32_t cb = index_of[consumer];
    if (cb < 0 || HasBit(bits, cb)) continue;
    bool ready = true;
    for (int32_t p : problem.producers[consumer])
      ready &= index_of[p] < 0 || HasBit(bits, index_of[p]);
    if (ready && std::find(f.begin(), f.end(), cb) == f.end()) f.push_back(cb);
  }
  return f;
}

}  // namespace

IdealLattice::IdealLattice(const ShardingProblem& problem,
                           const DeviceModel& model, int64_t max_ideals) {
  // lattice bit -> problem node
  const std::vector<int32_t> node_of = LatticeNodes(problem, &index_of_);
  const int32_t m = static_cast<int32_t>(node_of.size());
  words_ = std::max<int32_t>(1, (m + 63) / 64);
  const std::vector<uint64_t> zobrist = ZobristKeys(m);
  std::vector<uint64_t> hash_of;
  absl::flat_hash_map<uint64_t, int32_t> by_hash;
  // Adds an ideal: `parent` plus bit `v` (parent -1: the empty ideal).
  auto add = [&](const uint64_t* bits, uint64_t hash, double t, double c,
                 int32_t parent, int32_t v) {
    bits_.insert(bits_.end(), bits, bits + words_);
    compute_s_.push_back(t);
    boundary_bytes_.push_back(c);
    hash_of.push_back(hash);
    int32_t first = 0, last = -1;
    if (parent >= 0) {
      first = first_missing_[parent];
      last = std::max(last_present_[parent], v);
      while (first < m && (bits[first / 64] >> (first % 64) & 1)) ++first;
    }
    first_missing_.push_back(first);
    last_present_.push_back(last);
    return static_cast<int32_t>(compute_s_.size()) - 1;
  };
  // Finds the ideal with these bits, or -1; `*key` gets where it would go.
  auto find = [&](const uint64_t* bits, uint64_t hash, uint64_t* key) {
    for (uint64_t k = hash;; ++k) {
      auto it = by_hash.find(k);
      if (it == by_hash.end()) {
        *key = k;
        return -1;
      }
      if (std::equal(bits, bits + words_, Bits(it->second))) return it->second;
    }
  };
  std::vector<uint64_t> empty(words_, 0);
  by_hash[0] = add(empty.data(), 0, 0, 0, -1, -1);
  // per ideal of the layer
  std::vector<std::vector<int32_t>> frontier = {
      EmptyIdealFrontier(problem, node_of, index_of_)};
  std::vector<int32_t> layer = {0};
  std::vector<uint64_t> bits(words_);
  for (int32_t size = 0; size < m; ++size) {
    std::vector<int32_t> next;
    std::vector<std::vector<int32_t>> next_frontier;
    for (size_t li = 0; li < layer.size(); ++li) {
      const int32_t ideal = layer[li];
      for (int32_t v : frontier[li]) {
        std::copy(Bits(ideal), Bits(ideal) + words_, bits.begin());
        bits[v / 64] |= uint64_t{1} << (v % 64);
        const uint64_t hash = hash_of[ideal] ^ zobrist[v];
        uint64_t key = 0;
        if (find(bits.data(), hash, &key) >= 0) continue;
        if (static_cast<int64_t>(compute_s_.size()) >= max_ideals) {
          complete_ = false;
          return;
        }
        const int32_t node = node_of[v];
        const double c = BoundaryAfterAdding(problem, index_of_, bits, node,
                                             boundary_bytes_[ideal]);
        const int32_t made =
            add(bits.data(), hash, compute_s_[ideal] + model.NodeTime(node), c,
                ideal, v);
        by_hash[key] = made;
        next.push_back(made);
        next_frontier.push_back(FrontierAfterAdding(problem, index_of_, bits,
                                                    frontier[li], v, node));
      }
    }
    layer = std::move(next);
    frontier = std::move(next_frontier);
  }
  by_compute_ = AscendingOrder(compute_s_);
}

bool IdealLattice::Subset(int32_t a, int32_t b) const {
  if (last_present_[a] < first_missing_[b]) return true;
  if (last_present_[a] > last_present_[b]) return false;
  const uint64_t* x = Bits(a);
  const uint64_t* y = Bits(b);
  for (int32_t w = first_missing_[b] / 64; w <= last_present_[a] / 64; ++w) {
    if (x[w] & ~y[w]) return false;
  }
  return true;
}

bool IdealLattice::Contains(int32_t i, int32_t n) const {
  const int32_t b = index_of_[n];
  return b >= 0 && (Bits(i)[b / 64] >> (b % 64) & 1);
}

}  // namespace autoshard
