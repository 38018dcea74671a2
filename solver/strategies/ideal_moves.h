// Local moves between ideals (issue 19): a monotone split improved one pair
// of adjacent IPUs at a time, each pair's boundary chosen exactly among all
// the ideals between its neighbours' — moves of whole sets of nodes, in any
// order the DAG allows, where SearchStrategy moves one node at a time.
//
// Note [Ideal moves]
// A monotone split onto k IPUs is a chain of ideals I_0 ⊆ ... ⊆ I_{k-1}
// (Note [Ideals], solver/strategies/ideal_lattice.h). Fixing every ideal
// but I_j leaves only the stage times of IPUs j and j+1 free (with PopART's
// adjacent-stage copies the bytes over boundary j are C(I_j), a function of
// I_j alone):
//   t_j = P(I_j) - P(I_{j-1}) + CopySeconds(C(I_{j-1})) + CopySeconds(C(I_j))
//   t_{j+1} = P(I_{j+1}) - P(I_j) + CopySeconds(C(I_j))
//             + CopySeconds(C(I_{j+1})).
// Every I_j between I_{j-1} and I_{j+1} is I_{j-1} ∪ S for a set S of the
// two IPUs' nodes closed under producers among them; those are enumerated
// and the S with the least (max(t_j, t_{j+1}), t_j + t_{j+1}) is kept when it
// beats the current one. When they number more than max_ideals_per_pair
// (wide graphs: detection heads), the first max_ideals_per_pair + 1 are
// tried, then the current S less a node of IPU j and its descendants there,
// or with a node of IPU j + 1 and its ancestors there. Sweeps over
// j = 0..k-2 repeat while one improves. No move raises a stage above the
// pair's old largest, so the bottleneck never grows; a move is kept only
// after DeviceModel::EvaluatePerformance confirms it (folded constants go
// with their earliest reader, PlaceConstants).
#ifndef AUTOSHARD_SOLVER_STRATEGIES_IDEAL_MOVES_H_
#define AUTOSHARD_SOLVER_STRATEGIES_IDEAL_MOVES_H_

#include <chrono>
#include <cstdint>
#include <vector>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"

namespace autoshard {

struct IdealMovesOptions {
  // A pair with more sets S tries these and the closures (see the Note).
  int64_t max_ideals_per_pair = 20000;
  // A pair of IPUs holding more nodes is left as it is (the enumeration
  // recurses once per node; the closures cost nodes x (nodes + tensors)).
  int32_t max_pair_nodes = 4096;
  int max_sweeps = 64;
  // Skip a pair that found no move and whose inputs have not changed since
  // (Note [Unchanged pairs] in ideal_moves.cc); tests turn it off to
  // compare.
  bool skip_unchanged = true;
  std::chrono::steady_clock::time_point deadline =
      std::chrono::steady_clock::time_point::max();
};

struct IdealMovesResult {
  std::vector<int32_t> ipu;  // per node: a monotone split, every IPU used
  double bottleneck_s = 0;   // its bottleneck (EvaluatePerformance)
  int moves = 0;             // moves kept
};

// Note [Ideal moves] from `ipu` (per node, a monotone split onto `num_ipus`
// IPUs with every IPU running a node). PopART's adjacent-stage copies only:
// with copies_through_host the split is returned as it is. Memory is not
// judged (the caller evaluates the result). O(sweeps x k x (sets + nodes) x
// tensors).
IdealMovesResult ImproveByIdealMoves(const ShardingProblem& problem,
                                     const DeviceModel& model, int num_ipus,
                                     std::vector<int32_t> ipu,
                                     const IdealMovesOptions& options);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_IDEAL_MOVES_H_
