// The planning budgets' defaults, written once: Options (sharder/options.h),
// the strategies' own option structs and the CLI's help read them.
// Installed beside options.h (which includes it), so it includes nothing.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_DEFAULTS_H_
#define AUTOSHARD_SOLVER_STRATEGIES_DEFAULTS_H_

#include <cstdint>

namespace autoshard {

// --max-candidates: splits the search evaluates at most.
inline constexpr int64_t kDefaultMaxCandidates = 100000;
// --max-search-seconds: seconds the search may spend, and the optimal
// strategy's DPs again.
inline constexpr double kDefaultMaxSearchSeconds = 60;

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_DEFAULTS_H_
