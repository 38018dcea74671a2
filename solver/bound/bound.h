// The interface every lower bound on the bottleneck implements (issue 26
// point 3), as a strategy implements strategies/strategy.h: a name and one
// Run. The certified bound (solver/bound/certify.h) runs a list of them,
// cheapest first (CertifyBounds), keeping the best proven value.
#ifndef AUTOSHARD_SOLVER_BOUND_BOUND_H_
#define AUTOSHARD_SOLVER_BOUND_BOUND_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/deadline.h"
#include "costmodel/device_model.h"
#include "costmodel/problem.h"

namespace autoshard {

// What a bound is asked: a valid lower bound on the bottleneck of every
// monotone split of `problem` onto `num_ipus` IPUs, given one such split
// (the plan's).
struct BoundProblem {
  const ShardingProblem* problem = nullptr;  // outlives the Run
  const DeviceModel* model = nullptr;        // of `problem`; outlives it
  int num_ipus = 2;
  const std::vector<int32_t>* plan_ipu = nullptr;  // per node, monotone
  double plan_bottleneck_s = 0;  // the plan's bottleneck: an upper bound
  // The plan fits: a bound may count memory (it then bounds the fitting
  // splits).
  bool plan_fits = false;
  double lower_s = 0;  // the best bound proven before this one (seconds)
  // An earlier bound set BoundValue::solved_at_most_k_relaxation.
  bool at_most_k_relaxation_solved = false;
};

// The time a bound may take: the cascade's start and its whole budget, of
// which each bound takes its share.
struct BoundBudget {
  std::chrono::steady_clock::time_point start;
  double max_seconds = 0;
  // Seconds since `start`.
  double Spent() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  }
  // `start` + share x max_seconds: a bound's deadline as a share of the one
  // budget (0 < share <= 1), so the cascade ends within max_seconds however
  // long the bounds before took.
  std::chrono::steady_clock::time_point Until(double share) const {
    return SecondsAfter(start, share * max_seconds);
  }
};

// The cascade's deadlines as shares of its one budget (BoundBudget::Until):
// the block DP stops by 40% of it, the ideal DP (and the filler bound) after
// half of it from its own start and by 80% at the latest, CBC takes the rest;
// the deterministic bounds before them have work limits, no clock. Chosen, not
// measured: each clocked bound has at least 40% of the budget when the ones
// before it finish early.
inline constexpr double kBlockDpShare = 0.4;
// The min-cut bound's branched window cuts (Note [Chain-directed window
// cuts], cut_bound.h) stop by this share: the bounds after it keep most of
// the budget.
inline constexpr double kBranchedCutShare = 0.2;
inline constexpr double kIdealDpShare = 0.8;

// Why a bound stopped.
enum class BoundStop {
  kDone,        // it ran to its end; later bounds may still prove more
  kExact,       // its value is the relaxation's optimum: nothing later runs
  kOutOfBudget  // the time or work ran out first
};

struct BoundValue {
  // A valid lower bound (seconds), or 0 when it proved nothing.
  double bound_s = 0;
  // The plan's bound_method when this value is the best ("min-cut",
  // "ideal DP", "CBC MIP, optimal"...).
  std::string method;
  BoundStop stop = BoundStop::kDone;
  // When it proved nothing better: why, for the report ("ideal DP: 123
  // ideals, out of time"); may be empty.
  std::string note;
  // It solved, to within its bisection's precision, the relaxation over
  // every chain of at most num_ipus stages of the graph's ideals (adjacent
  // copies, memory not counted, passive constants free, IPUs may be empty):
  // the block DP over all ideals, completed (Note [Block DP]).
  bool solved_at_most_k_relaxation = false;
};

class Bound {
 public:
  virtual ~Bound() = default;
  // Its name in the cascade ("min-cut", "ideal DP", "CBC MIP").
  virtual absl::string_view name() const = 0;
  // Proves what it can within `budget`. Never fails.
  virtual BoundValue Run(const BoundProblem& problem,
                         const BoundBudget& budget) const = 0;
};

// The certified bound's cascade, in order: the heavy-node bound
// (heavy_bound.h; first, as it costs a few max-flows where the min-cut
// bound's DP grows with k: Swin-T at 256 IPUs, whose plan is its heavy
// node's, 1.8 s -> 0.3 s), the min-cut bound (cut_bound.h), the min-cut bound
// without late branches (Note [Late branches], cut_bound.h), the block DP's
// (block_bound.h: graphs of repeated segments), the ideal DP's
// relaxation (strategies/ideal_dp.h; on a problem with fillers when the graph
// has too many ideals, filler_bound.h), then COIN-OR CBC (lp_bound.h).
const std::vector<const Bound*>& CertifyBounds();

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_BOUND_BOUND_H_
