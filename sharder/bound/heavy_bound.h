// The heavy-node bound (issue 28 point 1): what the IPU holding a costly
// node must pay, its compute and the copies of the tensors it reads from and
// writes to other IPUs, unless neighbours join it (and then their compute
// and their own tensors count instead).
//
// Note [Heavy-node bound]
// In a split (monotone or not), let X be the nodes on the IPU d that holds
// node v. d's stage time is
//   t(X) + CopySeconds(in_d) + CopySeconds(out_d) >= t(X) + (in_d + out_d) / L
// (L: link bytes/s; CopySeconds(b) >= b / L). Every tensor with its
// producer in X and a reader outside X is sent by d (in out_d, once), and
// every tensor with its producer outside X and a reader in X is received by
// d (in in_d, once), both with PopART's adjacent copies and through host
// memory (ComputeCutBytes); a tensor is one or the other, never both. So,
// with B(X) the bytes of the tensors whose producer and readers are not all
// in X or all outside it,
//   bottleneck >= h(v) = min over sets X that hold v of t(X) + B(X) / L.
// h(v) is a minimum s-t cut: the source side is X (source -> v of infinity),
// every node x has x -> sink of t(x) L bytes (paid when x is in X), and every
// tensor a hyperedge over its producer and readers (Lawler 1973): two
// vertices a -> b of its bytes, every member -> a and b -> every member of
// infinity, so the cut pays the bytes exactly when some members are in X
// and some are not. Node times are rounded down to whole bytes (smaller:
// still valid). The bound is max over v of h(v); h(v) <= t(v) + the bytes of
// v's own tensors / L (X = {v}), so only the nodes where that exceeds the
// bound proven before are tried, costliest first.
// Memory is not counted, nor the copies' fixed cost, nor tensors that only
// pass through d: all would only add to d's time.
#ifndef AUTOSHARD_SHARDER_BOUND_HEAVY_BOUND_H_
#define AUTOSHARD_SHARDER_BOUND_HEAVY_BOUND_H_

#include <cstdint>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"

namespace autoshard {

struct HeavyBoundOptions {
  // Max-flows at most (the costliest candidates first).
  int max_nodes_tried = 64;
  // Arc scans of the max-flows at most (a deterministic budget: no clock).
  int64_t max_work = 200000000;
};

struct HeavyBoundResult {
  double bound_s = 0;  // max over the nodes tried of h(v) (seconds); 0: none
  int32_t node = -1;   // the node whose h(v) it is
  int tried = 0;       // max-flows run
  bool out_of_work = false;
};

// The bound of Note [Heavy-node bound], trying only nodes whose h(v) may
// exceed `lower_s` (a bound already proven). Never fails.
HeavyBoundResult HeavyNodeBound(const ShardingProblem& problem,
                                const DeviceModel& model, double lower_s,
                                const HeavyBoundOptions& options);

}  // namespace autoshard

#endif  // AUTOSHARD_SHARDER_BOUND_HEAVY_BOUND_H_
