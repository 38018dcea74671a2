// The built-in strategies, each defined beside its algorithm; only the
// registry (solver/strategies/registry.cc) and tests name them.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_BUILTIN_H_
#define AUTOSHARD_SOLVER_STRATEGIES_BUILTIN_H_

#include "absl/status/statusor.h"
#include "solver/strategies/sharding_points.h"
#include "solver/strategies/strategy.h"

namespace autoshard {

// The search and auto's polish use one subgraph per node only up to this
// many nodes (a finer search costs a walk of the graph per move).
inline constexpr int kMaxNodeGranularity = 20000;

const Strategy& RawStrategyInstance();     // solver/strategies/raw_strategy.cc
const Strategy& SearchStrategyInstance();  // .../search_strategy_levels.cc
const Strategy&
OptimalStrategyInstance();  // solver/strategies/optimal_strategy.cc
const Strategy& AutoStrategyInstance();  // .../auto_strategy.cc

// The steps auto composes (solver/strategies/auto_strategy.h).
// The raw split (every node on IPU 0 for one IPU). Errors as RawStrategy's.
absl::StatusOr<Assignment> RawSplit(const StrategyContext& context);
// The search from the raw split `raw` (one IPU: `raw` as it is, no summary).
absl::StatusOr<StrategyResult> SearchFrom(const StrategyContext& context,
                                          const Assignment& raw);
// The optimal slicing, constants sunk to their readers when no worse; `raw`
// with a warning when the DPs found nothing in time.
absl::StatusOr<StrategyResult> OptimalOrRaw(const StrategyContext& context,
                                            const Assignment& raw);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_BUILTIN_H_
