// Reader hoisting (issue 28 point 2): a monotone split whose linear order
// puts the readers of a tensor far after its producer copies that tensor
// through every IPU in between (PopART's adjacent-stage copies). The move
// re-orders the linear order so such readers, and the small branches hanging
// off them, come right after the producer, then slices the new order with
// the same DP (Note [Slicing DP], optimal_strategy.h).
//
// Note [Reader hoisting]
// Let the split be the slicing of a topological order L (its nodes sorted
// by IPU). A tensor T of producer p whose last reader is on IPU e >= ipu(p)
// + 2 passes through IPUs ipu(p) + 1 .. e - 1: each receives and sends its
// bytes. Its late readers R (on IPU ipu(p) + 2 or later) can be moved in L
// to a position q before them when every producer of each lies at or before
// q; so can each later node whose producers are all at or before q or
// already moved (the branch B hanging off R, grown in order of L, at most
// max_branch_nodes nodes). Moving the first j nodes of B (a prefix of L's
// order, so closed under producers within B) to right after q, in L's
// order, keeps L topological; what then crosses a cut after q on the way to
// the rest of B's readers is
//   carry(j) = bytes of the tensors of T and the first j nodes of B still
//              read at a position after q by a node not among them,
// and the prefix with the least carry (the fewest nodes on a tie) is the
// one moved, when carry(j) < carry(0) = T's bytes. q is p's position, or
// the last position of p's IPU. Each such order (the 2 of each of the
// tensors_per_round tensors of most bytes x IPUs passed, and one with every
// passing tensor's readers moved after its producer) is sliced by the DP,
// memory judged unless ignore_memory; folded constants form one unit with
// their earliest reader (PlaceConstants' choice). A slicing is kept when
// DeviceModel::EvaluatePerformance's bottleneck (copies and remote loads
// included) is lower than the current one, every IPU runs a node, the
// constraints are kept (BrokenConstraint) and, unless ignore_memory, every
// IPU fits (DeviceModel::EvaluateMemory); the best kept of a round replaces
// the split and its order, and rounds repeat until none is kept. So the
// result is never slower than the start, and a split it returns that is not
// the start fits. PopART's adjacent-stage copies only: with
// copies_through_host the start is returned as it is.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_READER_HOIST_H_
#define AUTOSHARD_SOLVER_STRATEGIES_READER_HOIST_H_

#include <chrono>
#include <cstdint>
#include <vector>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"

namespace autoshard {

struct ReaderHoistOptions {
  int max_rounds = 32;         // hoists kept at most
  int tensors_per_round = 8;   // passing tensors tried one by one per round
  int32_t max_branch_nodes = 256;  // nodes of a branch B at most
  // Every slicing counts as fitting (tests); else the DP and the final
  // check judge each IPU's tile memory.
  bool ignore_memory = false;
  int64_t max_fit_evaluations = 50000;  // per sliced order (SliceOptimally)
  std::chrono::steady_clock::time_point deadline =
      std::chrono::steady_clock::time_point::max();
};

struct ReaderHoistResult {
  std::vector<int32_t> ipu;  // per node: a monotone split, every IPU used
  double bottleneck_s = 0;   // its bottleneck (EvaluatePerformance)
  int hoists = 0;            // orders kept
  int orders_sliced = 0;     // orders the DP sliced
};

// Note [Reader hoisting] from `ipu` (per node, a monotone split onto
// `num_ipus` IPUs, every IPU running a node). Never fails; the result's
// bottleneck is at most the start's, and when it differs from the start it
// keeps the constraints and (unless options.ignore_memory) fits. Cost per
// round: (2 x tensors_per_round + 1) slicing DPs over the nodes, each
// O(units^2 / k x rounds of its cap) plus its fit evaluations.
ReaderHoistResult ImproveByReaderHoisting(const ShardingProblem& problem,
                                          const DeviceModel& model,
                                          int num_ipus,
                                          std::vector<int32_t> ipu,
                                          const ReaderHoistOptions& options);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_READER_HOIST_H_
