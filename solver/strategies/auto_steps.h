// auto's steps from a candidate split (auto_strategy.h): the slicing of
// the min-cut order, the moves (between ideals, to a neighbour's IPU, of a
// pair's boundary to a least cut) and reader hoisting, each returning a new
// candidate only when it is faster, judged with memory by Evaluated.
// Internal to auto; split out of auto_strategy.cc to keep it short.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_AUTO_STEPS_H_
#define AUTOSHARD_SOLVER_STRATEGIES_AUTO_STEPS_H_

#include <optional>
#include <string>

#include "solver/strategies/strategy.h"

namespace autoshard {
namespace auto_internal {

// One split auto compares, with its name and seconds.
struct Candidate {
  std::string strategy;
  StrategyResult result;
  double seconds = 0;
};

// The slicing DP (Note [Slicing DP]) on MinCutOrder's order
// (solver/strategies/closure_cuts.h, kMinCutOrderWindows windows), memory
// judged, within `seconds_left`: a candidate "min-cut order" when its slicing
// is faster than `best` (judged with memory by Evaluated), else nullopt.
std::optional<Candidate> SlicedMinCutOrder(const StrategyContext& c,
                                           const Candidate& best,
                                           double seconds_left,
                                           bool balanced = false);

// Moves between ideals from the best candidate's split (Note [Ideal moves],
// solver/strategies/ideal_moves.h), then of a node to its neighbour's IPU
// (Note [Neighbour moves]) within the same kIdealMovesSeconds, then of a
// pair's boundary to a least cut (Note [Cut moves]) within its own: a
// candidate "<its name>+moves" when they lower its bottleneck (judged with
// memory by Evaluated), else nullopt.
std::optional<Candidate> Moved(const StrategyContext& c, const Candidate& from,
                               double seconds_left);

// Reader hoisting from the best candidate's split (Note [Reader hoisting],
// solver/strategies/reader_hoist.h), within kReaderHoistSeconds: a
// candidate "<its name>+hoist" when it lowers its bottleneck (judged with
// memory by Evaluated), else nullopt.
std::optional<Candidate> Hoisted(const StrategyContext& c,
                                 const Candidate& from, double seconds_left);

}  // namespace auto_internal
}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_AUTO_STEPS_H_
