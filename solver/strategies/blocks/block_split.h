// auto's "blocks" candidate: the block DP's split (block_dp.h, Note [Block
// DP]) on a graph of repeated segments, memory not judged by the DP (auto
// judges it with Evaluated, as every candidate).
#ifndef AUTOSHARD_SOLVER_STRATEGIES_BLOCKS_BLOCK_SPLIT_H_
#define AUTOSHARD_SOLVER_STRATEGIES_BLOCKS_BLOCK_SPLIT_H_

#include <optional>

#include "solver/strategies/sharding_points.h"
#include "solver/strategies/strategy.h"

namespace autoshard {

// The split onto c.num_ipus IPUs (every IPU holding a node), or nullopt:
// fewer than 2 IPUs, no repetition (BlockDpOptions::min_repeats), host
// devices or constraints, `seconds` <= 0, or no valid split.
std::optional<Assignment> BlockDpSplit(const StrategyContext& c,
                                       double seconds);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_BLOCKS_BLOCK_SPLIT_H_
