#include "solver/strategies/ideal_moves.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "solver/strategies/ideal_lattice.h"

namespace autoshard {
namespace {

// A tensor that may cross boundary j: its bytes, its producer (a pair node's
// local index, or -1 before the pair: always inside I_j), whether a reader
// lies beyond the pair, and its readers among the pair's nodes.
struct PairTensor {
  int64_t bytes = 0;
  int32_t producer = -1;
  bool read_beyond = false;
  std::vector<int32_t> readers;
};

// The sets S of Note [Ideal moves] for boundary j, and the best of them.
class PairSearch {
 public:
  PairSearch(const ShardingProblem& problem, const DeviceModel& model,
             const std::vector<uint8_t>& passive,
             const std::vector<int32_t>& ipu, int j)
      : model_(model) {
    std::vector<int32_t> local(problem.num_nodes(), -1);
    for (int32_t n : problem.topo_order) {
      if (passive[n] || (ipu[n] != j && ipu[n] != j + 1)) continue;
      local[n] = static_cast<int32_t>(nodes_.size());
      nodes_.push_back(n);
      on_first_.push_back(ipu[n] == j ? 1 : 0);
      time_s_.push_back(model.NodeTime(n));
      inner_producers_.emplace_back();
      inner_consumers_.emplace_back();
      for (int32_t u : problem.producers[n]) {
        if (local[u] < 0) continue;
        inner_producers_.back().push_back(local[u]);
        inner_consumers_[local[u]].push_back(local[n]);
      }
    }
    for (int32_t p = 0; p < problem.num_nodes(); ++p) {
      if (passive[p] || ipu[p] > j + 1) continue;
      for (size_t slot = 0; slot < problem.output_bytes[p].size(); ++slot) {
        PairTensor t;
        t.bytes = problem.output_bytes[p][slot];
        t.producer = local[p];
        for (int32_t c : problem.output_consumers[p][slot]) {
          if (ipu[c] > j + 1) t.read_beyond = true;
          if (local[c] >= 0 && c != p) t.readers.push_back(local[c]);
        }
        if (t.bytes > 0 && (t.read_beyond || !t.readers.empty()))
          tensors_.push_back(std::move(t));
      }
    }
    // Note [Crossing bytes as S grows].
    produced_.resize(nodes_.size());
    reads_.resize(nodes_.size());
    for (int32_t t = 0; t < static_cast<int32_t>(tensors_.size()); ++t) {
      if (tensors_[t].producer >= 0)
        produced_[tensors_[t].producer].push_back(t);
      for (int32_t r : tensors_[t].readers) reads_[r].push_back(t);
    }
  }

  int32_t size() const { return static_cast<int32_t>(nodes_.size()); }
  const std::vector<int32_t>& nodes() const { return nodes_; }

  // The best S (per local node: in S) by (max(t_j, t_{j+1}), their sum),
  // given the copy seconds over boundaries j - 1 and j + 1; false when the
  // sets number more than `max_sets` or none leaves both IPUs a node.
  bool Best(double copy_before_s, double copy_after_s, int64_t max_sets,
            std::vector<uint8_t>* best) {
    in_.assign(nodes_.size(), 0);
    total_s_ = 0;
    for (double t : time_s_) total_s_ += t;
    before_s_ = copy_before_s;
    after_s_ = copy_after_s;
    max_sets_ = max_sets;
    sets_ = 0;
    best_ = {std::numeric_limits<double>::infinity(), 0};
    best_set_.clear();
    // S empty: the tensors made before the pair are inside I_j, each
    // crossing while a reader is outside (all are) or one reads it beyond.
    pending_.assign(tensors_.size(), 0);
    bytes_ = 0;
    for (size_t t = 0; t < tensors_.size(); ++t) {
      pending_[t] = static_cast<int32_t>(tensors_[t].readers.size());
      if (tensors_[t].producer < 0) bytes_ += tensors_[t].bytes;
    }
    Visit(0, 0, 0);
    if (sets_ > max_sets_) TryClosures();
    if (best_set_.empty()) return false;
    *best = best_set_;
    return true;
  }

 private:
  // Decides local node i onwards; `count` nodes and `in_s` seconds in S.
  void Visit(int32_t i, int32_t count, double in_s) {
    if (sets_ > max_sets_) return;
    if (i == size()) {
      ++sets_;
      if (count > 0 && count < size()) Score(in_s, bytes_);
      return;
    }
    in_[i] = 0;
    Visit(i + 1, count, in_s);
    for (int32_t u : inner_producers_[i])
      if (!in_[u]) return;
    in_[i] = 1;
    Join(i, +1);
    Visit(i + 1, count + 1, in_s + time_s_[i]);
    Join(i, -1);
    in_[i] = 0;
  }

  // Note [Crossing bytes as S grows]
  // Visit decides the pair's nodes in topological order, so when node i
  // joins S its readers are all undecided (outside S): each tensor it makes
  // then crosses boundary j when it has a reader in the pair or one beyond.
  // A tensor stops crossing when its last reader in the pair joins S, if it
  // is inside I_j and read nowhere beyond. Keeping bytes_ so, each node's
  // join (sign +1) and its undo (-1) cost its tensors and reads, where
  // recounting every tensor at each of the up to max_sets leaves cost
  // tensors x readers: the same bytes, exactly (integers), as CrossingBytes.
  void Join(int32_t i, int sign) {
    for (int32_t t : produced_[i])
      bytes_ += sign * tensors_[t].bytes;  // all its readers are outside
    for (int32_t t : reads_[i]) {
      // Its last reader in the pair outside S joins (or leaves again).
      if (sign < 0) ++pending_[t];
      if (pending_[t] == 1 && Inside(t) && !tensors_[t].read_beyond)
        bytes_ -= sign * tensors_[t].bytes;
      if (sign > 0) --pending_[t];
    }
  }

  // Whether tensor t is made in I_j (before the pair, or by a node in S:
  // Visit sets in_ before a join and clears it after its undo).
  bool Inside(int32_t t) const {
    return tensors_[t].producer < 0 || in_[tensors_[t].producer];
  }

  // When the sets are too many to try: the current set S0 (IPU j's nodes)
  // less a node of IPU j and its descendants there, or with a node of IPU
  // j + 1 and its ancestors there — each a set S. The enumeration's best so
  // far stays a candidate. O(nodes x (nodes + tensors)).
  void TryClosures() {
    std::vector<int32_t> stack;
    for (int32_t v = 0; v < size(); ++v) {
      in_ = on_first_;
      const uint8_t side = on_first_[v];
      const auto& next = side ? inner_consumers_ : inner_producers_;
      stack.assign(1, v);
      in_[v] = side ? 0 : 1;
      while (!stack.empty()) {
        const int32_t u = stack.back();
        stack.pop_back();
        for (int32_t w : next[u]) {
          if (on_first_[w] != side || in_[w] != side) continue;
          in_[w] = side ? 0 : 1;
          stack.push_back(w);
        }
      }
      int32_t count = 0;
      double in_s = 0;
      for (int32_t i = 0; i < size(); ++i) {
        count += in_[i];
        if (in_[i]) in_s += time_s_[i];
      }
      if (count > 0 && count < size()) Score(in_s, CrossingBytes());
    }
  }

  // The bytes over boundary j with S = in_ (its tensors made in I_j and read
  // after it).
  int64_t CrossingBytes() const {
    int64_t bytes = 0;
    for (const PairTensor& t : tensors_) {
      if (t.producer >= 0 && !in_[t.producer]) continue;
      bool crosses = t.read_beyond;
      for (size_t r = 0; !crosses && r < t.readers.size(); ++r)
        crosses = !in_[t.readers[r]];
      if (crosses) bytes += t.bytes;
    }
    return bytes;
  }

  void Score(double in_s, int64_t bytes) {
    const double copy_s = model_.CopySeconds(static_cast<double>(bytes));
    const double a = in_s + before_s_ + copy_s;
    const double b = total_s_ - in_s + copy_s + after_s_;
    const std::pair<double, double> score(std::max(a, b), a + b);
    if (score < best_) {
      best_ = score;
      best_set_ = in_;
    }
  }

  const DeviceModel& model_;
  std::vector<int32_t> nodes_;
  std::vector<double> time_s_;
  std::vector<std::vector<int32_t>> inner_producers_, inner_consumers_;
  std::vector<PairTensor> tensors_;
  // Note [Crossing bytes as S grows]: per local node the tensors it makes
  // and reads (indices into tensors_); per tensor its readers in the pair
  // outside S; the bytes crossing.
  std::vector<std::vector<int32_t>> produced_, reads_;
  std::vector<int32_t> pending_;
  int64_t bytes_ = 0;
  std::vector<uint8_t> on_first_, in_, best_set_;
  double total_s_ = 0, before_s_ = 0, after_s_ = 0;
  int64_t max_sets_ = 0, sets_ = 0;
  std::pair<double, double> best_;
};

// Whether stage times `now` beat `was` at IPUs j and j + 1 (Note [Ideal
// moves]'s order) without a larger bottleneck.
bool Beats(const Performance& now, const Performance& was, int j) {
  const double eps = 1e-12 * was.bottleneck_s;
  if (now.bottleneck_s > was.bottleneck_s + eps) return false;
  const auto& x = now.stage_time_s;
  const auto& y = was.stage_time_s;
  const double new_max = std::max(x[j], x[j + 1]);
  const double old_max = std::max(y[j], y[j + 1]);
  if (new_max < old_max - eps) return true;
  return new_max <= old_max + eps && x[j] + x[j + 1] < y[j] + y[j + 1] - eps;
}

// Note [Unchanged pairs]
// What pair j's search and its judgement see: the nodes of IPUs j and j + 1
// and which of them is on j, which of the tensors they read or make are
// read beyond IPU j + 1, and the bytes over boundaries j - 1 and j + 1
// (cut.in_bytes[j], cut.out_bytes[j + 1]); a passive constant goes with its
// earliest reader, so one the pair reads is before it (its bytes in
// in_bytes[j]) or in it. A move at pair i changes IPUs i and i + 1 only, so
// the pair's nodes and flags change only through moves at pairs j - 1, j
// and j + 1 (a reader beyond moves into the pair only across boundary
// j + 1). Beats also reads the global bottleneck: a move it rejected for
// raising it raised the pair's own larger stage time, which Beats rejects
// anyway, but its tolerance is 1e-12 of the bottleneck, which a move at any
// pair may lower (a review's counter-example:
// SkippingUnchangedPairsWaitsForALowerBottleneck), so the bottleneck is an
// input too. So a pair that found no move, with the same IPU versions
// (bumped for IPUs j and j + 1 by each move at j), the same two byte counts
// and the same bottleneck, finds none again: skipped. Without a deadline
// the moves made are those made without skipping; with one, skipping only
// lets more of them in before it.
struct PairInputs {
  uint64_t first_version = 0, second_version = 0;
  int64_t in_bytes = -1, out_bytes = -1;
  double bottleneck_s = -1;
  bool operator==(const PairInputs& o) const {
    return first_version == o.first_version &&
           second_version == o.second_version && in_bytes == o.in_bytes &&
           out_bytes == o.out_bytes && bottleneck_s == o.bottleneck_s;
  }
};

}  // namespace

IdealMovesResult ImproveByIdealMoves(const ShardingProblem& problem,
                                     const DeviceModel& model, int num_ipus,
                                     std::vector<int32_t> ipu,
                                     const IdealMovesOptions& options) {
  IdealMovesResult result;
  Performance perf = model.EvaluatePerformance(ipu, num_ipus, 1);
  const std::vector<uint8_t> passive = PassiveConstants(problem);
  bool improved = !problem.copies_through_host && num_ipus > 1;
  // Note [Unchanged pairs].
  std::vector<uint64_t> version(std::max(num_ipus, 1), 0);
  std::vector<PairInputs> no_move(std::max(num_ipus, 1));
  for (int sweep = 0; improved && sweep < options.max_sweeps; ++sweep) {
    improved = false;
    for (int j = 0; j + 1 < num_ipus; ++j) {
      if (std::chrono::steady_clock::now() > options.deadline) break;
      const CutBytes cut = ComputeCutBytes(problem, ipu, num_ipus);
      const PairInputs inputs{version[j], version[j + 1], cut.in_bytes[j],
                              cut.out_bytes[j + 1], perf.bottleneck_s};
      if (options.skip_unchanged && no_move[j] == inputs) continue;
      no_move[j] = inputs;  // until a move is kept
      PairSearch pair(problem, model, passive, ipu, j);
      std::vector<uint8_t> in;
      if (pair.size() > options.max_pair_nodes ||
          !pair.Best(
              model.CopySeconds(static_cast<double>(cut.in_bytes[j])),
              model.CopySeconds(static_cast<double>(cut.out_bytes[j + 1])),
              options.max_ideals_per_pair, &in)) {
        continue;
      }
      std::vector<int32_t> next = ipu;
      for (int32_t i = 0; i < pair.size(); ++i)
        next[pair.nodes()[i]] = in[i] ? j : j + 1;
      PlaceConstants(problem, passive, &next);
      Performance p = model.EvaluatePerformance(next, num_ipus, 1);
      if (!Beats(p, perf, j)) continue;
      ipu = std::move(next);
      perf = std::move(p);
      ++result.moves;
      improved = true;
      ++version[j];
      ++version[j + 1];
      no_move[j] = PairInputs{};
    }
  }
  result.ipu = std::move(ipu);
  result.bottleneck_s = perf.bottleneck_s;
  return result;
}

}  // namespace autoshard
