// Moves that put a heavy node with its neighbours (issue 28 point 2): from a
// monotone split, the bottleneck IPU takes a producer of one of its nodes
// from the IPU before it, or a consumer from the IPU after it (so the tensor
// between them is no longer copied), or gives one of its nodes to a
// neighbouring IPU, whichever lowers the bottleneck most.
//
// Note [Neighbour moves]
// Let d be the IPU with the largest stage time. The moves tried, each
// keeping the split monotone and every IPU running a node:
// - a node u on d - 1 that a node on d reads, to d, when every reader of u
//   is on d or later;
// - a node w on d + 1 that reads a node on d, to d, when every producer of
//   w is on d or earlier;
// - a node x on d to d - 1 (its producers all there or earlier) or to d + 1
//   (its readers all there or later).
// Each is costed with DeviceModel::EvaluatePerformance; the one with the
// least bottleneck is kept when it is lower than before, and the search
// repeats from the new split. A split is only ever replaced by one with a
// smaller bottleneck, so the result is never slower than the start. Memory
// is not judged (the caller evaluates the result). O(moves x (nodes +
// tensors)) per step.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_NEIGHBOUR_MOVES_H_
#define AUTOSHARD_SOLVER_STRATEGIES_NEIGHBOUR_MOVES_H_

#include <chrono>
#include <cstdint>
#include <vector>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"

namespace autoshard {

struct NeighbourMovesOptions {
  int max_steps = 256;           // moves kept at most
  int max_moves_per_step = 512;  // moves costed per step at most
  std::chrono::steady_clock::time_point deadline =
      std::chrono::steady_clock::time_point::max();
};

struct NeighbourMovesResult {
  std::vector<int32_t> ipu;  // per node: a monotone split, every IPU used
  double bottleneck_s = 0;   // its bottleneck (EvaluatePerformance)
  int moves = 0;             // moves kept
};

// Note [Neighbour moves] from `ipu` (per node, a monotone split onto
// `num_ipus` IPUs, every IPU running a node). Never fails; the result's
// bottleneck is at most the start's.
NeighbourMovesResult ImproveByNeighbourMoves(
    const ShardingProblem& problem, const DeviceModel& model, int num_ipus,
    std::vector<int32_t> ipu, const NeighbourMovesOptions& options);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_NEIGHBOUR_MOVES_H_
