// Reader hoisting (issue 28 point 2): a monotone split whose linear order
// puts the readers of a tensor far after its producer copies that tensor
// through every IPU in between (PopART's adjacent-stage copies). The move
// re-orders the linear order so such readers, and the small branches hanging
// off them, come right after the producer, then slices the new order with
// the same DP (Note [Slicing DP], optimal_strategy.h).
//
// Note [Reader hoisting]
// Let the split be the slicing of a topological order L (its nodes, folded
// constants left out, sorted by IPU). A tensor T of producer p whose last
// reader is on IPU e >= ipu(p) + 2 passes through IPUs ipu(p) + 1 .. e - 1:
// each receives and sends its bytes. Pick a position q >= pos(p) in L: right
// after p, the last node of p's IPU, or T's reader at fraction i / s of its
// readers after p (i = 1 .. s - 1, s = reader_splits, when it has at least
// 8): a later q keeps T longer but carries less of what the moved nodes
// make, which matters when IPUs are many and a copy's bytes fill a stage
// (tv_ssdlite320's 90 per-class branches, each reading one column of the
// 1.18 MB score matrix). The branch B: T's readers after q, then, in order
// of L, each node reading a node of B; each with its producers after q not
// yet in B (at most 16: a Reshape's shape computed late), else left out;
// at most max_branch_nodes nodes. Each prefix of B (B is listed so that
// every prefix holds its members' producers after q) can move to right after
// q, in B's order, keeping L topological. Which prefix: the one, among all
// T's readers and each longer one that ends some tensor's reads after q
// (at most 32), that least transports: with P(v) the compute before v in
// the order,
//   transport(L) = Σ over tensors bytes x (P(last reader) - P(producer's
//                  end)),
// the bytes a slicing copies over the IPUs' boundaries, summed, when the
// cuts fall evenly over the compute; kept only when below L's. Each round
// tries, from the current split's L, the order with every passing tensor
// hoisted (one per q but the IPU's end, tensors by bytes x IPUs passed),
// then the tensors_per_round tensors of most bytes x IPUs passed one at a
// time at every q. Each order is sliced by the DP (Note [Slicing DP],
// optimal_strategy.h), its rounds capped at the current bottleneck, memory
// judged unless ignore_memory, folded constants in their earliest reader's
// unit (PlaceConstants' choice). A slicing is kept when
// DeviceModel::EvaluatePerformance's bottleneck (copies and remote loads
// included) is lower than the current one, the constraints are kept
// (BrokenConstraint) and, unless ignore_memory, every IPU fits
// (DeviceModel::EvaluateMemory); every IPU runs a node (each slice holds a
// unit). The best kept of a round replaces the split and its order; rounds
// repeat until none is kept. So the result is never slower than the start,
// and a split it returns that is not the start fits. PopART's adjacent-stage
// copies only: with copies_through_host (or below 3 IPUs, where nothing
// passes through an IPU) the start is returned as it is.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_READER_HOIST_H_
#define AUTOSHARD_SOLVER_STRATEGIES_READER_HOIST_H_

#include <chrono>
#include <cstdint>
#include <vector>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"

namespace autoshard {

struct ReaderHoistOptions {
  int max_rounds = 32;             // hoists kept at most
  int tensors_per_round = 8;       // passing tensors tried one by one per round
  int32_t max_branch_nodes = 256;  // nodes of a branch B at most
  // s of the Note: insertion points after T's reader at fractions 1 / s ..
  // (s - 1) / s of its readers (>= 1; 1: none). On tv_ssdlite320 at 128
  // IPUs 4 gave 57.8 us, 6 and 8 56.9 us (64 IPUs: 67.2, 67.1, 67.4).
  int reader_splits = 6;
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
// round: about (tensors_per_round + 1) x (reader_splits + 1) slicing DPs
// over the nodes, each one round of O(units x (units / k) x k) plus its fit
// evaluations, and as many O(branch prefixes x (nodes + tensors))
// transports.
ReaderHoistResult ImproveByReaderHoisting(const ShardingProblem& problem,
                                          const DeviceModel& model,
                                          int num_ipus,
                                          std::vector<int32_t> ipu,
                                          const ReaderHoistOptions& options);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_READER_HOIST_H_
