// The built-in strategies, each defined beside its algorithm; only the
// registry (sharder/strategies/registry.cc) and tests name them.
#ifndef AUTOSHARD_SHARDER_STRATEGIES_BUILTIN_H_
#define AUTOSHARD_SHARDER_STRATEGIES_BUILTIN_H_

#include "absl/status/statusor.h"
#include "sharder/strategies/sharding_points.h"
#include "sharder/strategies/strategy.h"

namespace autoshard {

// The search and auto's polish use one subgraph per node only up to this
// many nodes (a finer search costs a walk of the graph per move).
inline constexpr int kMaxNodeGranularity = 20000;

const Strategy& RawStrategyInstance();     // sharder/strategies/raw_strategy.cc
const Strategy& SearchStrategyInstance();  // .../search_levels.cc
const Strategy&
OptimalStrategyInstance();  // sharder/strategies/optimal_strategy.cc
const Strategy& AutoStrategyInstance();  // .../auto_strategy.cc

// The steps auto composes (sharder/strategies/auto_strategy.h).
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

#endif  // AUTOSHARD_SHARDER_STRATEGIES_BUILTIN_H_
