#include "solver/strategies/blocks/block_dp.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "base/deadline.h"
#include "base/plural.h"
#include "solver/strategies/blocks/block_chain.h"
#include "solver/strategies/ideal_lattice.h"

namespace autoshard {
namespace {

constexpr int32_t kUnreached = std::numeric_limits<int32_t>::max() / 2;

// A position: (segment, ideal of its lattice).
struct Position {
  int32_t segment = -1, ideal = -1;
};

// Note [Within a segment]
// A stage from (s, J') to (s, J) needs J' ⊊ J and
//   key(J') = P(J') - CopySeconds(C(J')) >= P(J) + CopySeconds(C(J)) - T.
// Every proper sub-ideal of J lies in one of J's predecessors J \ {x} (x a
// member no member reads: take x in J \ J' read by no member of J \ J'; a
// reader of x in J' would put x in J'). So with List(J) = the Pareto front
// of (g(J'), key(J')) over J' ⊆ J (fewer stages, larger key), List(J minus)
// is the merge of its predecessors' lists, the fewest stages through a
// within-segment stage is 1 + the first g (ascending) whose key reaches
// the threshold, and List(J) adds (g(J), key(J)). Exact; per ideal the cost
// is its predecessors' list lengths.
struct Entry {
  int32_t g;
  double key;
  int32_t ideal;
};

class Search {
 public:
  explicit Search(const BlockChain& chain) : chain_(chain) {
    const int32_t segments = static_cast<int32_t>(chain.segments.size());
    prefix_s_.assign(segments + 1, 0);
    for (int32_t s = 0; s < segments; ++s) {
      const SegmentLattice& L = Lattice(s);
      prefix_s_[s + 1] = prefix_s_[s] + L.compute_s[L.full()];
    }
    for (const SegmentLattice& L : chain.lattices) {
      std::vector<double> suf;
      for (int32_t j : L.by_suffix) suf.push_back(Suffix(L, j));
      suffix_sorted_.push_back(std::move(suf));
    }
    g_.resize(segments);
    from_.resize(segments);
    stair_g_.resize(segments);
    stair_arg_.resize(segments);
  }

  double total_s() const { return prefix_s_.back(); }

  // g(T) of Note [Block DP] (kUnreached: none), remembering each position's
  // predecessor for Chain().
  int32_t Stages(double T) {
    const int32_t segments = static_cast<int32_t>(chain_.segments.size());
    for (int32_t s = 0; s < segments; ++s) Segment(s, T);
    return g_.back()[Lattice(segments - 1).full()];
  }

  // The chain of positions ending at the whole graph of the last Stages():
  // each stage's end, in order.
  std::vector<Position> Chain() const {
    std::vector<Position> ends;
    Position at{
        static_cast<int32_t>(chain_.segments.size()) - 1,
        Lattice(static_cast<int32_t>(chain_.segments.size()) - 1).full()};
    while (true) {
      if (at.ideal == 0 && at.segment > 0) {  // the cut before: same ideal
        at = {at.segment - 1, Lattice(at.segment - 1).full()};
        continue;
      }
      if (at.segment == 0 && at.ideal == 0) break;
      ends.push_back(at);
      at = from_[at.segment][at.ideal];
    }
    std::reverse(ends.begin(), ends.end());
    return ends;
  }

 private:
  const SegmentLattice& Lattice(int32_t s) const {
    return chain_.lattices[chain_.kind[s]];
  }
  static double Suffix(const SegmentLattice& L, int32_t j) {
    return L.compute_s[L.full()] - L.compute_s[j] + L.copy_s[j];
  }

  void Segment(int32_t s, double T) {
    const SegmentLattice& L = Lattice(s);
    const int32_t n = L.size();
    std::vector<int32_t>& g = g_[s];
    std::vector<Position>& from = from_[s];
    g.assign(n, kUnreached);
    from.assign(n, Position{});
    g[0] = s == 0 ? 0 : g_[s - 1][Lattice(s - 1).full()];
    // Stages from an earlier segment (s' < s).
    for (int32_t j = 1; j < n; ++j) {
      const double pre = L.compute_s[j] + L.copy_s[j];
      for (int32_t t = s - 1; t >= 0; --t) {
        const double mid = prefix_s_[s] - prefix_s_[t + 1];
        const double room = T - mid - pre;
        if (room < 0) break;
        const std::vector<double>& suf = suffix_sorted_[chain_.kind[t]];
        const auto it = std::upper_bound(suf.begin(), suf.end(), room);
        if (it == suf.begin()) continue;
        const size_t i = static_cast<size_t>(it - suf.begin()) - 1;
        const int32_t via = stair_g_[t][i];
        if (via + 1 < g[j]) {
          g[j] = via + 1;
          from[j] = {t, stair_arg_[t][i]};
        }
      }
    }
    // Stages within the segment (Note [Within a segment]).
    std::vector<int32_t> start(n + 1, 0);
    entries_.clear();
    merged_.clear();
    for (int32_t j = 0; j < n; ++j) {
      merged_.clear();
      for (int32_t e = L.pred_start[j]; e < L.pred_start[j + 1]; ++e) {
        const int32_t p = L.preds[e];
        merged_.insert(merged_.end(), entries_.begin() + start[p],
                       entries_.begin() + start[p + 1]);
      }
      if (j > 0 && !merged_.empty()) {
        std::sort(merged_.begin(), merged_.end(),
                  [](const Entry& a, const Entry& b) {
                    return a.g != b.g ? a.g < b.g : a.key > b.key;
                  });
        const double threshold = L.compute_s[j] + L.copy_s[j] - T;
        for (const Entry& e : merged_) {
          if (e.key >= threshold) {
            if (e.g + 1 < g[j]) {
              g[j] = e.g + 1;
              from[j] = {s, e.ideal};
            }
            break;
          }
        }
      }
      if (g[j] < kUnreached)
        merged_.push_back({g[j], L.compute_s[j] - L.copy_s[j], j});
      // The Pareto front: ascending g, each key above every earlier one.
      std::sort(merged_.begin(), merged_.end(),
                [](const Entry& a, const Entry& b) {
                  return a.g != b.g ? a.g < b.g : a.key > b.key;
                });
      start[j] = static_cast<int32_t>(entries_.size());
      double best = -std::numeric_limits<double>::infinity();
      for (const Entry& e : merged_) {
        if (e.key > best) {
          entries_.push_back(e);
          best = e.key;
        }
      }
      start[j + 1] = static_cast<int32_t>(entries_.size());
    }
    // The staircase: by ascending suffix, the fewest stages so far.
    std::vector<int32_t>& sg = stair_g_[s];
    std::vector<int32_t>& sa = stair_arg_[s];
    sg.resize(n);
    sa.resize(n);
    int32_t best = kUnreached, arg = 0;
    for (int32_t i = 0; i < n; ++i) {
      const int32_t j = L.by_suffix[i];
      if (g[j] < best) {
        best = g[j];
        arg = j;
      }
      sg[i] = best;
      sa[i] = arg;
    }
  }

  const BlockChain& chain_;
  std::vector<double> prefix_s_;  // Σ compute of segments < s
  std::vector<std::vector<double>> suffix_sorted_;  // per kind, ascending
  std::vector<std::vector<int32_t>> g_;
  std::vector<std::vector<Position>> from_;
  std::vector<std::vector<int32_t>> stair_g_, stair_arg_;
  std::vector<Entry> entries_, merged_;
};

// The nodes' IPUs for the stage ends `ends` (exactly num_ipus IPUs: the
// stages with the most nodes are split in topological order while there are
// fewer); empty when there are fewer nodes than IPUs.
std::vector<int32_t> Assign(const ShardingProblem& problem,
                            const BlockChain& chain,
                            const std::vector<Position>& ends, int num_ipus) {
  std::vector<std::vector<int32_t>> stages(ends.size());
  for (int32_t s = 0; s < static_cast<int32_t>(chain.segments.size()); ++s) {
    const SegmentLattice& L = chain.lattices[chain.kind[s]];
    for (int32_t i = 0; i < static_cast<int32_t>(chain.segments[s].size());
         ++i) {
      auto contains = [&](const Position& p) {
        if (p.segment != s) return p.segment > s;
        const uint64_t* bits = &L.bits[static_cast<size_t>(p.ideal) * L.words];
        return (bits[i / 64] >> (i % 64) & 1) != 0;
      };
      // Each node's stage on its own: the first end holding it. The ends
      // are nested ideals, so `contains` is false then true along them; a
      // chosen ideal need not be a prefix of the topological order (cut c
      // -> a, c -> b, {a, b} -> x: a stage may end at {b}), so the stages
      // of consecutive nodes may go back.
      const size_t d =
          static_cast<size_t>(std::partition_point(ends.begin(), ends.end(),
                                                   [&](const Position& p) {
                                                     return !contains(p);
                                                   }) -
                              ends.begin());
      if (d == ends.size()) return {};
      stages[d].push_back(chain.segments[s][i]);
    }
  }
  stages.erase(std::remove_if(stages.begin(), stages.end(),
                              [](const auto& st) { return st.empty(); }),
               stages.end());
  while (static_cast<int>(stages.size()) < num_ipus) {
    size_t big = 0;
    for (size_t i = 1; i < stages.size(); ++i)
      if (stages[i].size() > stages[big].size()) big = i;
    if (stages[big].size() < 2) return {};
    std::vector<int32_t> second(stages[big].begin() + stages[big].size() / 2,
                                stages[big].end());
    stages[big].resize(stages[big].size() / 2);
    stages.insert(stages.begin() + big + 1, std::move(second));
  }
  if (static_cast<int>(stages.size()) > num_ipus) return {};
  std::vector<int32_t> ipu(problem.num_nodes(), 0);
  for (size_t st = 0; st < stages.size(); ++st)
    for (int32_t v : stages[st]) ipu[v] = static_cast<int32_t>(st);
  PlaceConstants(problem, PassiveConstants(problem), &ipu);
  return ipu;
}

// The DP over `chain`'s positions (Note [Block DP]) into `result` (its
// bound_s already the bound given): false when it gives no plan (a segment
// chain with no split within upper_s, or a fault; result.note says why).
bool SolveChain(const ShardingProblem& problem, const BlockChain& chain,
                int num_ipus, double lower_s, double upper_s,
                const BlockDpOptions& options,
                std::chrono::steady_clock::time_point deadline,
                BlockDpResult* out) {
  BlockDpResult& result = *out;
  result.exact = chain.exact;
  result.single_node_cuts = chain.single_node_cuts;
  result.segments = static_cast<int32_t>(chain.segments.size());
  result.kinds = static_cast<int32_t>(chain.lattices.size());
  result.longest_run = chain.longest_run;
  result.positions = chain.ideals;
  result.ran = true;
  Search search(chain);
  // Invariants: g(lo) > k or lo is the given bound; g(hi) <= k.
  double lo = result.bound_s;
  double hi = std::isfinite(upper_s) ? upper_s : search.total_s();
  const bool reached = search.Stages(hi) <= num_ipus;
  if (!chain.exact && !reached) {
    result.ran = false;
    result.note = "segment chain: no split within the given bottleneck";
    return false;
  }
  if (!reached) {
    lo = std::max(lo, hi);
    hi = std::max(hi, search.total_s());
    // One stage holding everything takes total_s (no copies), so this
    // cannot happen; should it, prove nothing rather than a wrong bound.
    if (search.Stages(hi) > num_ipus) {
      result.ran = false;
      result.bound_s = std::max(lower_s, 0.0);
      result.note = absl::StrCat("block DP: no chain of ", num_ipus,
                                 " stages at ", hi, " s (a fault)");
      return false;
    }
  }
  while (hi - lo > options.relative_precision * hi) {
    if (std::chrono::steady_clock::now() > deadline) break;
    const double mid = lo + (hi - lo) / 2;
    if (search.Stages(mid) > num_ipus) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  result.complete = hi - lo <= options.relative_precision * hi;
  // The DP's stage times are sums in another order than the performance
  // model's: each of at most chain.ideals terms of at most
  // max(hi, total_s) (a stage time counts copies too, so it may exceed the
  // compute total) may round by eps times that, so the bound is that much
  // below the proven value.
  const double margin_s = static_cast<double>(chain.ideals) *
                          std::numeric_limits<double>::epsilon() *
                          std::max(hi, search.total_s());
  if (chain.exact) result.bound_s = std::max(result.bound_s, lo - margin_s);
  search.Stages(hi);
  const std::vector<Position> ends = search.Chain();
  result.dp_stages = static_cast<int32_t>(ends.size());
  result.ipu = Assign(problem, chain, ends, num_ipus);
  result.plan_dp_s = hi;
  return true;
}

}  // namespace

BlockDpResult BlockDp(const ShardingProblem& problem, const DeviceModel& model,
                      int num_ipus, double lower_s, double upper_s,
                      const BlockDpOptions& options) {
  BlockDpResult result;
  result.bound_s = std::max(lower_s, 0.0);
  if (num_ipus < 2 || problem.copies_through_host || problem.HasHost() ||
      problem.HasConstraints()) {
    result.note = "block DP: not for this problem";
    return result;
  }
  BlockChain chain = FindBlockChain(problem, model, options.max_ideals_per_kind,
                                    options.min_repeats);
  const bool usable = chain.complete && chain.segments.size() >= 2;
  std::string why_not;
  if (!usable) {
    why_not = absl::StrCat(
        "block DP: ",
        Plural(static_cast<int64_t>(chain.segments.size()), "segment"), ", ",
        chain.longest_run, " repeated",
        chain.longest_run < options.min_repeats ? "" : ", too many ideals");
  }
  if (!usable && options.segmented) {
    SegmentChainOptions segment_chain = options.segment_chain;
    segment_chain.deadline = std::min(segment_chain.deadline, options.deadline);
    chain = FindSegmentChain(problem, model, segment_chain);
    if (!chain.complete || chain.segments.size() < 2) {
      result.note = absl::StrCat(
          why_not, "; segment chain: ",
          Plural(static_cast<int64_t>(chain.segments.size()), "segment"), ", ",
          chain.ideals, " positions or more");
      return result;
    }
  } else if (!usable) {
    result.note = why_not;
    return result;
  }
  bool planned = SolveChain(problem, chain, num_ipus, lower_s, upper_s, options,
                            options.deadline, &result);
  if (chain.exact || options.segment_deepenings <= 0) return result;
  // Note [Deeper segment chains].
  const auto deadline =
      std::min(options.deadline, SecondsAfter(std::chrono::steady_clock::now(),
                                              options.deepening_seconds));
  SegmentChainOptions deeper = options.segment_chain;
  int64_t positions_left = options.segment_chain.max_positions;
  for (int32_t level = 1; level <= options.segment_deepenings; ++level) {
    deeper.max_ideals_per_segment *= 4;
    deeper.max_nodes_per_segment *= 2;
    deeper.max_positions = positions_left;
    deeper.stop_at_positions_left = true;
    deeper.deadline = deadline;
    BlockChain finer = FindSegmentChain(problem, model, deeper);
    // One segment: the ideal DP's ground (auto runs it), as above.
    if (!finer.complete || finer.segments.size() < 2) break;
    positions_left -= finer.ideals;
    result.deeper_positions += finer.ideals;
    // Its cuts are a subset of the last chain's: as many segments, the
    // same cuts, the same positions.
    if (finer.segments.size() < chain.segments.size()) {
      BlockDpResult r;
      r.bound_s = result.bound_s;
      if (SolveChain(problem, finer, num_ipus, lower_s,
                     planned ? result.plan_dp_s : upper_s, options, deadline,
                     &r) &&
          (!planned ||
           r.plan_dp_s < result.plan_dp_s * (1 - options.relative_precision))) {
        r.deeper_positions = result.deeper_positions;
        result = std::move(r);
        result.segment_level = level;
        planned = true;
      }
      chain = std::move(finer);
    }
  }
  return result;
}

}  // namespace autoshard
