#include "solver/strategies/blocks/block_split.h"

#include <chrono>
#include <utility>

#include "base/deadline.h"
#include "solver/strategies/blocks/block_dp.h"

namespace autoshard {

std::optional<BlockSplit> BlockDpSplit(const StrategyContext& c, double seconds,
                                       double upper_s) {
  if (c.num_ipus < 2 || seconds <= 0) return std::nullopt;
  BlockDpOptions options;
  options.segmented = true;  // Note [Segment chain]
  options.segment_deepenings = kSegmentDeepenings;
  options.deepening_seconds = kSegmentDeepeningSeconds;
  options.deadline = SecondsAfter(std::chrono::steady_clock::now(), seconds);
  BlockDpResult r = BlockDp(*c.problem, c.Model(), c.num_ipus,
                            c.Model().LowerBound(c.num_ipus), upper_s, options);
  if (r.ipu.empty()) return std::nullopt;
  BlockSplit split{Assignment{r.ipu, r.ipu}, r.exact ? "blocks" : "segments",
                   r.single_node_cuts};
  if (!ValidateAssignment(*c.problem, split.assignment).ok())
    return std::nullopt;
  return split;
}

}  // namespace autoshard
