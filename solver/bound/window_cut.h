// Branched window cuts (issue 28 point 1): a lower bound on the bytes that
// cross the boundary of every ideal whose compute lies in a window, by
// branch and bound over Note [Window cuts]'s Lagrangian, for the windows
// where that Lagrangian alone is weak (parallel branches).
//
// Note [Branched window cuts]
// Note [Window cuts] bounds min { C(I) : ideal I, P(I) in [lo, hi] } by
// max over nu of min over ideals of C(I) + nu (P(I) - hi) (nu >= 0; or
// C(I) + |nu| (lo - P(I))). That is the lower convex hull of the points
// (P(I), C(I)) at the window: when the graph has parallel branches (an
// FPN's levels, a detector's heads), the ideals with both branches done and
// with neither are cheap cuts on either side of the window, and every ideal
// in it cuts through a branch (tv_fcos_resnet50_fpn: the level-0 heads'
// 10.24 MB activations), but the hull between the two cheap ideals stays
// low. Branching fixes that: split the ideals by a node v into those that
// hold v (v and its ancestors forced in) and those that do not (v and its
// descendants forced out); the minimum over the window is the smaller of
// the two sides' minima, and each side's Lagrangian (the same max-flows
// with more forced nodes) is a lower bound on its own minimum. A side is
// empty (dropped) when the forced ancestors weigh more than hi, or the
// forced-out descendants leave less than lo. So the smallest value among
// the open sides of any branching is a lower bound on every ideal in the
// window; best first, the side with the smallest value is branched next, on
// the costliest node where the two minimising ideals that bracket the window
// (the last multiplier whose ideal lies beyond it, the first whose ideal
// does not) differ. The search stops when that side's value is reached by
// an ideal in the window (exact), no node is left to branch on, or the
// budget runs out; its value then is the bound.
#ifndef AUTOSHARD_SOLVER_BOUND_WINDOW_CUT_H_
#define AUTOSHARD_SOLVER_BOUND_WINDOW_CUT_H_

#include <chrono>
#include <cstdint>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"
#include "solver/strategies/closure_cuts.h"

namespace autoshard {

struct BranchedCutOptions {
  // Sides whose Lagrangian is searched at most (the root included).
  int max_sides = 16;
  // Stop by this time (the sides searched so far give the bound).
  std::chrono::steady_clock::time_point deadline =
      std::chrono::steady_clock::time_point::max();
  // Stop once the cuts' work (ClosureCuts::work, arc scans) exceeds this.
  int64_t max_work = int64_t{1} << 62;
};

struct BranchedCut {
  // A lower bound on C(I) (bytes) over every ideal I (of the active nodes,
  // Note [Ideals]) with P(I) in [lo, hi]; infinity when no ideal has its
  // compute there. At least ClosureCuts::MinCut(lo, hi) when that is >= 0.
  double bytes = 0;
  bool exact = false;  // some ideal in the window crosses exactly that many
  int sides = 0;       // Lagrangian searches run
};

// Note [Branched window cuts] over `cuts`' problem for the window [lo, hi]
// (seconds of compute). Never fails; with no budget it is the root's
// Note [Window cuts] value.
BranchedCut BranchedWindowCut(ClosureCuts& cuts, const ShardingProblem& problem,
                              const DeviceModel& model, double lo, double hi,
                              const BranchedCutOptions& options);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_BOUND_WINDOW_CUT_H_
