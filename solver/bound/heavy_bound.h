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
// bound proven before are tried, costliest first (with adjacent copies: those
// whose value for I1 = v's ancestors, I2 = I1 and v, exceeds it).
// Memory is not counted: it would only add to d's time. The copies' fixed
// cost: Note [Heavy node's fixed copy costs].
//
// Note [Nested ideals]
// With PopART's adjacent copies and a monotone split, d's nodes are
// I2 \ I1 for the ideals I1 (IPUs before d) and I2 (up to d), and d sends and
// receives exactly the bytes crossing their boundaries, C(I1) and C(I2)
// (tensors that pass through d included). So there
//   h(v) = min over ideals I1 ⊆ I2 with v in I2 \ I1 of
//          t(I2 \ I1) + (C(I1) + C(I2)) / L,
// at least the value above: a closure problem on two copies of the graph
// (the source side of each an ideal, as in solver/strategies/
// closure_cuts.h; x in I1 -> x in I2 of infinity; x in I2 pays t(x) to the
// sink, x not in I1 t(x) from the source, less Σ t once).
//
// Note [Heavy node and the rest]
// The other k - 1 IPUs hold the rest of the compute, so the bottleneck is
// also at least (W - t(X)) / (k - 1) (W: Σ node times). For lambda in
// [1/k, 1], lambda x d's time + (1 - lambda) x that is a lower bound too:
//   lambda min_X [a t(X) + B(X) / L] + (1 - lambda) W / (k - 1),
// a = (lambda - (1 - lambda) / (k - 1)) / lambda in [0, 1]: the same cut
// with node times scaled by a. Its value is a minimum of functions linear
// in lambda (concave), so a ternary search finds the best lambda for the
// `lagrange_nodes` nodes of largest h(v); every value tried is a bound.
//
// Note [Heavy node's fixed copy costs]
// DeviceModel::CopySeconds(b) is b / L plus transfer_fixed_s (f) when b > 0:
// d pays f for receiving anything and f for sending anything. The sets X
// (I1 ⊆ I2) fall into four kinds, each with its own minimum: d receives and
// sends (>= h(v) + 2f), receives nothing (in_d = 0: no tensor crosses into
// X, through host; C(I1) = 0 with adjacent copies; >= h_in0(v) + f), sends
// nothing (>= h_out0(v) + f), neither (>= h_both0(v)). Each constrained
// minimum is the same cut with infinite arcs producer -> reader (nothing
// leaves the set) or reader -> producer (nothing enters it). So d's time is
// at least min(h + 2f, h_in0 + f, h_out0 + f, h_both0), tried for the
// `fixed_cost_nodes` nodes of largest h(v) (up to three more max-flows
// each). tv_raft_small at 128 IPUs: its bottleneck IPU holds one node that
// receives and sends 1.31 MB; the bound without f was 2f = 4.5 us short.
#ifndef AUTOSHARD_SOLVER_BOUND_HEAVY_BOUND_H_
#define AUTOSHARD_SOLVER_BOUND_HEAVY_BOUND_H_

#include <cstdint>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"

namespace autoshard {

struct HeavyBoundOptions {
  // Max-flows at most (the costliest candidates first).
  int max_nodes_tried = 32;
  // Arc scans of the max-flows at most (a deterministic budget: no clock).
  int64_t max_work = 200000000;
  // Note [Heavy node and the rest]: nodes searched, and steps each (two
  // max-flows a step).
  int lagrange_nodes = 2;
  // Stop once the bound reaches this many seconds (0: never): the caller's
  // plan is then close enough to it.
  double enough_s = 0;
  int lagrange_steps = 6;
  // Note [Heavy node's fixed copy costs]: nodes refined.
  int fixed_cost_nodes = 4;
};

struct HeavyBoundResult {
  double bound_s = 0;  // max over the nodes tried of h(v) (seconds); 0: none
  int32_t node = -1;   // the node whose h(v) it is
  int tried = 0;       // max-flows run
  bool out_of_work = false;
};

// The bound of Note [Heavy-node bound] (Note [Nested ideals] with adjacent
// copies, and Note [Heavy node and the rest] for `num_ipus` IPUs) on every
// monotone split onto `num_ipus` IPUs; through host only nodes whose h(v)
// may exceed `lower_s` (a bound already proven) are tried. Never fails.
HeavyBoundResult HeavyNodeBound(const ShardingProblem& problem,
                                const DeviceModel& model, int num_ipus,
                                double lower_s,
                                const HeavyBoundOptions& options);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_BOUND_HEAVY_BOUND_H_
