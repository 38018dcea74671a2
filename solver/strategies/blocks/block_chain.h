// A graph cut into a chain of segments at single-node cut points, and the
// repeated identical segments among them (the layers of a transformer): what
// the block DP (block_dp.h) searches, for issue 28's "DP over repeated
// blocks".
//
// Note [Block chain]
// Take the lattice nodes (every node but the passive constants, Note
// [Ideals] in solver/strategies/ideal_lattice.h) in topological order
// v_0..v_{m-1}. Position p (< m - 1) is a cut point when every earlier
// node is an ancestor of v_p and every later node a descendant of it. (A
// single-node cut, where every edge from {v_0..v_p} to {v_{p+1}..} leaves
// v_p, no node before v_p is a sink and none after it a source, is one; so
// is the end of a round of an unrolled loop whose state is two tensors and
// whose every round reads the same inputs made before the loop.) So an ideal
// I of the whole graph holding a node of the segment after cut p holds v_p
// and every node before it: the ideals of the graph are exactly the pairs
// (segment s, nonempty ideal J of s's own DAG) = (all segments before s) ∪
// J. Their compute and their boundary C (tensors made inside and read
// outside) depend only on s's own nodes and the tensors made before s and
// read in or after it (their bytes, which of s's nodes read them, whether
// a later segment does): two segments alike in these, their local DAG and
// node times (one "kind") have the same local lattice.
// FindBlockChain cuts at single-node cuts (every edge crossing p leaves
// v_p, no node before v_p is a sink, none after it a source) when they make
// a chain; else at every cut point, unless there are 2,048 or more (then
// the DP's stages would span thousands of tiny segments).
// Cost: O(nodes + edges) for the cut points, then per kind its ideals.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_BLOCKS_BLOCK_CHAIN_H_
#define AUTOSHARD_SOLVER_STRATEGIES_BLOCKS_BLOCK_CHAIN_H_

#include <chrono>
#include <cstdint>
#include <vector>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"

namespace autoshard {

// The ideals of one kind of segment, smallest first (by node count): ideal
// 0 is the empty one (the cut before the segment), the last one the whole
// segment (the cut after it).
struct SegmentLattice {
  int32_t num_nodes = 0;          // the segment's lattice nodes
  int32_t words = 1;              // uint64 words per ideal's bits
  std::vector<uint64_t> bits;     // words per ideal: local node i is bit i
  std::vector<double> compute_s;  // Σ node times of the ideal (seconds)
  // CopySeconds(C(J)): C counts the cut node's tensors read by the
  // segment's nodes outside J, and J's tensors read outside J.
  std::vector<double> copy_s;
  // The ideals J \ {x} (x a member no member reads) of ideal J: CSR over
  // ideals, pred_start.size() = ideals + 1. Every proper sub-ideal of J is
  // inside one of them (Note [Within a segment], block_dp.cc).
  std::vector<int32_t> pred_start, preds;
  // Ideal indices by ascending compute_s(full) - compute_s(J) + copy_s(J)
  // (what a stage leaving the segment at J pays in it).
  std::vector<int32_t> by_suffix;
  bool complete = true;  // false: more than the limit; not to be used
  int32_t size() const { return static_cast<int32_t>(compute_s.size()); }
  int32_t full() const { return size() - 1; }
};

struct BlockChain {
  // Each segment's lattice nodes in topological order; the last node of
  // every segment but the last is its cut node.
  std::vector<std::vector<int32_t>> segments;
  std::vector<int32_t> kind;  // per segment: index into `lattices`
  std::vector<SegmentLattice> lattices;
  // The most repeats in a row of one pattern of 1 to 64 segments' kinds
  // (the repetition: a layer may hold cut points of its own).
  int32_t longest_run = 0;
  // Every lattice is enumerated and complete.
  bool complete = true;
  // The positions are every ideal of the graph (Note [Block chain]); false
  // for FindSegmentChain's (Note [Segment chain]): a DP over them plans but
  // proves nothing.
  bool exact = true;
  // Cut at single-node cuts only (the rule of Note [Block chain] before it
  // was widened; auto lists such a chain's split where it always did).
  bool single_node_cuts = false;
  int64_t ideals = 0;  // Σ over segments of their lattice's ideals
};

// The chain of `problem`'s segments (Note [Block chain]), each kind's
// lattice enumerated up to `max_ideals_per_kind` ideals; none (complete
// false) when longest_run < `min_repeats`. One segment when the graph has no
// cut point.
BlockChain FindBlockChain(const ShardingProblem& problem,
                          const DeviceModel& model, int64_t max_ideals_per_kind,
                          int32_t min_repeats);

// Note [Segment chain]
// Any cut of a topological order into consecutive segments gives positions
// (segment s, ideal J of s's own DAG) = (all segments before s) ∪ J, each
// an ideal of the graph: a prefix of a topological order is one, and J's
// producers outside s lie in that prefix. Their boundary C counts every
// tensor made in the position and read outside it, those made in earlier
// segments included (a cut tensor rides through every IPU between its
// producer's and its reader's, Note [Slicing DP]). So the block DP over
// them finds the fastest monotone split whose stage ends are such
// positions: a plan that may order each segment's parallel branches in any
// way, where a slicing DP (optimal_strategy.h) keeps one order — but not a
// bound, since unless the cuts are Note [Block chain]'s the positions are
// not every ideal. A graph with no single-node cut point (a loop unrolled
// with state in two tensors and inputs every round reads, RAFT's 12 update
// rounds) gets no block chain, but gets this one.
// The cuts: the whole order, split after the position where the fewest
// tensors cross (the one nearest the middle on a tie), recursively, until
// each segment's lattice has at most max_ideals_per_segment ideals (a
// segment of one node always does).
// Cost: O(nodes + tensors) for the crossing counts, O(range) per split
// (searched in the range's middle half: O(nodes log nodes) in all), and per
// enumerated range at most max_ideals_per_segment x (its nodes' producers +
// the tensors it makes or reads).
struct SegmentChainOptions {
  int32_t max_nodes_per_segment = 256;  // larger ranges are split unseen
  int64_t max_ideals_per_segment = 2000;
  // More positions in all, more lattice nodes, or the deadline passed
  // before every segment was enumerated: complete = false.
  int64_t max_positions = 200000;
  // Give the chain up as soon as a range's lattice has more ideals than
  // the positions left (its enumeration stops there: cheaper), even where
  // splitting the range, had it more than max_ideals_per_segment, might
  // have fit. Note [Deeper segment chains] sets it; off, such a range is
  // enumerated up to max_ideals_per_segment as ever.
  bool stop_at_positions_left = false;
  int32_t max_nodes = 50000;
  std::chrono::steady_clock::time_point deadline =
      std::chrono::steady_clock::time_point::max();
};
// One kind per segment, longest_run 1, exact false.
BlockChain FindSegmentChain(const ShardingProblem& problem,
                            const DeviceModel& model,
                            const SegmentChainOptions& options);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_BLOCKS_BLOCK_CHAIN_H_
