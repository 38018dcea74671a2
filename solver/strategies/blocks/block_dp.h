// The DP over repeated blocks (issue 28 points 1 and 2): on a graph that is
// a chain of segments (Note [Block chain], block_chain.h) — a transformer's
// identical layers between their residual cut points — each IPU takes a
// run of whole segments plus a piece of the segment before it (cut at one
// of that segment's ideals) and a piece of the segment after it, or a piece
// between two ideals of one segment. Its positions are (segment, ideal of
// that segment); identical segments share one lattice, so a graph of 80
// layers of 3,415 ideals each costs 80 x 3,415 positions where the ideal
// DP over the whole graph gives up at 20,000 ideals.
//
// Note [Block DP]
// For a time T, g(T) = the fewest stages in a chain of positions from the
// empty ideal to the whole graph with every stage time <= T, where a stage
// from (s', J') to (s, J) takes (as in Note [Ideals], ideal_lattice.h)
//   s' = s:  P(J) - P(J') + CopySeconds(C(J')) + CopySeconds(C(J))
//   s' < s:  [P(S_s') - P(J') + CopySeconds(C(J'))] + Σ P(S_t), s'<t<s
//            + [P(J) + CopySeconds(C(J))]
// g is found segment by segment: the s' < s stages by a staircase per
// segment (the fewest stages reaching it by what its stage pays there), the
// s' = s ones by Note [Within a segment] (block_dp.cc). g falls as T grows;
// bisection finds the smallest T with g(T) <= k to 1e-4 of it.
//
// What the bound covers: when every segment's lattice is complete the
// positions are every ideal of the graph, so every monotone split onto k
// IPUs (every node -> IPU map whose edges run to the same or a later IPU)
// is a chain of at most k stages: with adjacent-stage copies
// (copies_through_host false) and memory not counted, the same relaxation
// as IdealDpBound's (ideal_dp.h), passive constants free to join any IPU,
// fewer stages than k allowed. So `bound_s` is a lower bound on the
// bottleneck of every such split under the performance model (DESIGN.md
// §3.4), a plan's last stage returning to IPU 0 excepted (not monotone).
#ifndef AUTOSHARD_SOLVER_STRATEGIES_BLOCKS_BLOCK_DP_H_
#define AUTOSHARD_SOLVER_STRATEGIES_BLOCKS_BLOCK_DP_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"
#include "solver/strategies/blocks/block_chain.h"

namespace autoshard {

struct BlockDpOptions {
  // The DP runs only on a chain with this many repeats of a pattern of
  // segments in a row (BlockChain::longest_run) or more; it is exact on any
  // chain, repetition only makes it cheaper than the ideal DP.
  int32_t min_repeats = 4;
  int64_t max_ideals_per_kind = 20000;
  // Bisection stops when hi - lo <= relative_precision x hi.
  double relative_precision = 1e-4;
  std::chrono::steady_clock::time_point deadline =
      std::chrono::steady_clock::time_point::max();
  // For a plan only: when the graph has no block chain (too few repeats,
  // one segment, too many ideals), the DP runs over FindSegmentChain's
  // positions (Note [Segment chain]); then exact is false and bound_s is
  // only lower_s.
  bool segmented = false;
  SegmentChainOptions segment_chain;
  // Note [Deeper segment chains]: segment chains tried after the first at
  // most (0: none), and the seconds they may take together from the first
  // one's end, a safety net (the deadline above still holds).
  int32_t segment_deepenings = 0;
  double deepening_seconds = 0;
};

// Note [Deeper segment chains]
// A segment chain (Note [Segment chain]) fixes how parallel branches
// interleave across each of its cuts: a cut through RAFT's feature and
// context encoders, side by side, makes every position hold the same share
// of one before it holds any of the other's next segment. Fewer cuts free
// that. FindSegmentChain splits a range only when it has more nodes or
// ideals than allowed, at a point that depends on the range alone, so with
// larger limits its cuts are a subset of those with smaller ones and its
// positions a superset: the DP's best chain is never slower. So after the
// first chain, segmented runs the DP again over chains with 4x the ideals
// and 2x the nodes per segment, up to segment_deepenings times, each
// bisecting from the best plan's DP value (or upper_s, when the first chain
// had none within it) and kept only when faster by more than the bisection's
// relative precision (a chain with the same optimum, bisected again from the
// last end, ends a little lower). Their budget is work, not time, so a plan
// does not depend on the machine's load: together the deeper chains may hold
// as many positions as one chain may (SegmentChainOptions::max_positions);
// the first that would pass that (stop_at_positions_left: a range whose
// lattice alone would, ends it, even where a split of the range might have
// fit), or the clock, ends the deepening. tv_raft_small at 64 IPUs: 51.67 us
// over the first chain (48 segments, 10,954 positions), 51.67 over the
// second (46, 15,212), 50.88 us over the third (35, 114,551), the fourth
// given up at the positions left: 1.4 s after the first chain's 0.05 s.

struct BlockDpResult {
  // The graph is a chain with enough repetition and every lattice complete:
  // the DP ran, and bound_s is valid (Note [Block DP]).
  bool ran = false;
  // The bisection ended within the deadline (else bound_s is the last
  // proven value, still valid).
  bool complete = false;
  // The positions were every ideal of the graph (Note [Block chain]): the
  // DP's value is a bound. False over a segment chain.
  bool exact = true;
  bool single_node_cuts = false;  // BlockChain::single_node_cuts
  double bound_s = 0;             // seconds; at least the lower_s given
  // The plan: a monotone split onto exactly num_ipus IPUs (per node, passive
  // constants with their earliest reader), empty when there is none; its
  // bottleneck by the DP's stage times is plan_dp_s (memory not judged).
  std::vector<int32_t> ipu;
  double plan_dp_s = 0;
  // The stages of the DP's chain: num_ipus or fewer (then the plan splits
  // the stages with the most nodes, and plan_dp_s is not its bottleneck).
  int32_t dp_stages = 0;
  int32_t segments = 0, kinds = 0, longest_run = 0;
  int64_t positions = 0;  // Σ ideals over segments
  // Note [Deeper segment chains]: the level whose plan this is (0: the
  // first chain's, or a block chain's).
  int32_t segment_level = 0;
  // Σ positions of the deeper chains enumerated whole (kept or not): at
  // most SegmentChainOptions::max_positions.
  int64_t deeper_positions = 0;
  std::string note;  // why it did not run, for the report
};

// Requires num_ipus >= 2; `lower_s` a valid lower bound (0 is), `upper_s`
// the bottleneck of some monotone split or infinity (over a segment chain:
// no plan unless one within upper_s). Does not run (ran =
// false) through host memory, with host devices or with constraints.
// Cost per bisection step: O(positions x (segments a stage spans + preds)).
BlockDpResult BlockDp(const ShardingProblem& problem, const DeviceModel& model,
                      int num_ipus, double lower_s, double upper_s,
                      const BlockDpOptions& options);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_BLOCKS_BLOCK_DP_H_
