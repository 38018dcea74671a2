// Cut moves (issue 28 point 2): a monotone split improved one pair of
// adjacent IPUs at a time, the pair's boundary chosen by parametric minimum
// cuts — the balanced ideals of least cut the enumeration of Note [Ideal
// moves] misses when the pair holds too many ideals (a detector's FPN levels
// and heads on 2 IPUs).
//
// Note [Cut moves]
// Fixing every ideal of a monotone split but I_j leaves, for the ideals I
// between I_{j-1} and I_{j+1} (Note [Ideal moves]),
//   t_j(I) = P(I) - P(I_{j-1}) + CopySeconds(C(I_{j-1})) + CopySeconds(C(I))
//   t_{j+1}(I) = P(I_{j+1}) - P(I) + CopySeconds(C(I))
//                + CopySeconds(C(I_{j+1})).
// For lambda in [0, 1], lambda t_j + (1 - lambda) t_{j+1} is, up to
// constants, C(I) / L + (2 lambda - 1) P(I) (L: link bytes/s; CopySeconds
// is linear in the bytes but for its fixed cost), so its minimiser is a
// closure problem: ClosureCuts::LagrangianCut with multiplier
// nu = (2 lambda - 1) L, I_{j-1}'s nodes forced in and those after I_{j+1}
// forced out. A bisection over nu on which of the two stages is the larger
// (the minimiser's compute falls as nu grows) walks the lower convex hull of
// the points (P(I), C(I)) to where the two stages balance. Every minimiser
// that leaves both IPUs a node is costed as a split (EvaluatePerformance;
// folded constants with their earliest reader, PlaceConstants; when the
// split fits, the two IPUs' memory must still fit) and the best kept when it
// lowers (bottleneck, the pair's larger stage, the pair's sum): never slower
// than the start. Only the pairs that hold a bottleneck IPU are tried (no
// other move can lower the bottleneck; at 128 IPUs that is one or two pairs
// of 127); sweeps over j = 0..k-2 repeat while one improves.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_CUT_MOVES_H_
#define AUTOSHARD_SOLVER_STRATEGIES_CUT_MOVES_H_

#include <chrono>
#include <cstdint>
#include <vector>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"

namespace autoshard {

struct CutMovesOptions {
  int max_sweeps = 16;
  // Bisection steps over the multiplier per pair (a max-flow each).
  int steps = 14;
  std::chrono::steady_clock::time_point deadline =
      std::chrono::steady_clock::time_point::max();
};

struct CutMovesResult {
  std::vector<int32_t> ipu;  // per node: a monotone split, every IPU used
  double bottleneck_s = 0;   // its bottleneck (EvaluatePerformance)
  int moves = 0;             // moves kept
};

// Note [Cut moves] from `ipu` (per node, a monotone split onto `num_ipus`
// IPUs with every IPU running a node). PopART's adjacent-stage copies only:
// with copies_through_host the split is returned as it is. A split that fits
// stays fitting (the two changed IPUs are judged with EvaluateMemory).
// O(sweeps x k x steps x max-flow on the whole problem).
CutMovesResult ImproveByCutMoves(const ShardingProblem& problem,
                                 const DeviceModel& model, int num_ipus,
                                 std::vector<int32_t> ipu,
                                 const CutMovesOptions& options);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_CUT_MOVES_H_
