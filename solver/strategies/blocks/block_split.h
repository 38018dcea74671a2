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
// devices or constraints, `seconds` <= 0, or no valid split. `upper_s`: the
// bottleneck of a monotone split (another candidate's), where the
// bisection starts (infinity: the whole graph's compute).
std::optional<Assignment> BlockDpSplit(const StrategyContext& c, double seconds,
                                       double upper_s);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_BLOCKS_BLOCK_SPLIT_H_
