// A graph cut into a chain of segments at single-node cut points, and the
// repeated identical segments among them (the layers of a transformer): what
// the block DP (block_dp.h) searches, for issue 28's "DP over repeated
// blocks".
//
// Note [Block chain]
// Take the lattice nodes (every node but the passive constants, Note
// [Ideals] in solver/strategies/ideal_lattice.h) in topological order
// v_0..v_{m-1}. Position p (< m - 1) is a cut point when
//   (a) every edge from {v_0..v_p} to {v_{p+1}..} leaves v_p,
//   (b) no node of v_0..v_{p-1} is a sink (each has a lattice reader), and
//   (c) no node of v_{p+1}.. is a source (each has a lattice producer).
// Then every earlier node is an ancestor of v_p (follow readers: they stay
// in the prefix until v_p) and every later node a descendant (follow
// producers back). So an ideal I of the whole graph holding a node of the
// segment after cut p holds v_p and every node before it: the ideals of the
// graph are exactly the pairs (segment s, nonempty ideal J of s's own DAG)
// = (all segments before s) ∪ J. Their compute and their boundary C
// (tensors made inside and read outside) depend only on s's own nodes and
// the tensors of the cut node before it: two segments with the same local
// DAG, node times and tensor bytes (one "kind") have the same local lattice.
// Cost: O(nodes + edges) for the cut points, then per kind its ideals.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_BLOCKS_BLOCK_CHAIN_H_
#define AUTOSHARD_SOLVER_STRATEGIES_BLOCKS_BLOCK_CHAIN_H_

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
  // The most repeats in a row of one pattern of 1 to 8 segments' kinds
  // (the repetition: a layer may hold cut points of its own).
  int32_t longest_run = 0;
  // Every lattice is enumerated and complete: the positions are every ideal
  // of the graph.
  bool complete = true;
  int64_t ideals = 0;  // Σ over segments of their lattice's ideals
};

// The chain of `problem`'s segments (Note [Block chain]), each kind's
// lattice enumerated up to `max_ideals_per_kind` ideals; none (complete
// false) when longest_run < `min_repeats`. One segment when the graph has no
// cut point.
BlockChain FindBlockChain(const ShardingProblem& problem,
                          const DeviceModel& model, int64_t max_ideals_per_kind,
                          int32_t min_repeats);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_BLOCKS_BLOCK_CHAIN_H_
