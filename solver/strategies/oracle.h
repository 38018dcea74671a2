// A compiler as judge of candidate splits, as the strategies see it: a
// callback (sharder/compile_judge.h makes it from sharder/oracle/), so no
// strategy knows how the compiler runs.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_ORACLE_H_
#define AUTOSHARD_SOLVER_STRATEGIES_ORACLE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace autoshard {

// A compiler's answer for one candidate (see compile_oracle.h).
struct OracleVerdict {
  bool fits = false;
  int64_t tile = -1;  // the global tile that overflowed, -1 unknown
  int64_t bytes = 0;  // bytes on it
  std::string
      message;  // a failure the compiler did not say as "Out of memory on tile"
};
// Judges candidate splits (IPU of every node), in order, with the available
// memory proportion to compile with.
using SearchOracle = std::function<absl::StatusOr<std::vector<OracleVerdict>>(
    const std::vector<std::vector<int32_t>>& candidates,
    double available_memory_proportion)>;

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_ORACLE_H_
