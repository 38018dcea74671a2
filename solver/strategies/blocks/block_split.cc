#include "solver/strategies/blocks/block_split.h"

#include <chrono>
#include <utility>

#include "solver/strategies/blocks/block_dp.h"

namespace autoshard {

std::optional<Assignment> BlockDpSplit(const StrategyContext& c, double seconds,
                                       double upper_s) {
  if (c.num_ipus < 2 || seconds <= 0) return std::nullopt;
  BlockDpOptions options;
  options.deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(seconds));
  BlockDpResult r = BlockDp(*c.problem, c.Model(), c.num_ipus,
                            c.Model().LowerBound(c.num_ipus), upper_s, options);
  if (r.ipu.empty()) return std::nullopt;
  Assignment a{r.ipu, r.ipu};
  if (!ValidateAssignment(*c.problem, a).ok()) return std::nullopt;
  return a;
}

}  // namespace autoshard
