// auto's "blocks" candidate: the block DP's split (block_dp.h, Note [Block
// DP]) on a graph of repeated segments, or its "segments" candidate: the
// same DP over a segment chain (Note [Segment chain], block_chain.h) on a
// graph without one; memory not judged by the DP (auto judges it with
// Evaluated, as every candidate).
#ifndef AUTOSHARD_SOLVER_STRATEGIES_BLOCKS_BLOCK_SPLIT_H_
#define AUTOSHARD_SOLVER_STRATEGIES_BLOCKS_BLOCK_SPLIT_H_

#include <optional>

#include "solver/strategies/sharding_points.h"
#include "solver/strategies/strategy.h"

namespace autoshard {

// Note [Deeper segment chains] (block_dp.h) in auto: the deeper chains
// tried at most (up to 128,000 ideals and 2,048 nodes per segment, from
// SegmentChainOptions' 2,000 and 256), and the clock that stops them should
// their positions' budget not: about twice what that budget takes on this
// machine (idle: tv_raft_small at 64 IPUs 1.4 s, ta_conformer 1.7 s).
inline constexpr int32_t kSegmentDeepenings = 3;
inline constexpr double kSegmentDeepeningSeconds = 3;

struct BlockSplit {
  Assignment assignment;
  // "blocks" (a block chain) or "segments" (a segment chain).
  const char* name = "blocks";
  // A block chain cut at single-node cuts only (BlockChain::
  // single_node_cuts): auto lists it before its moves, as it always did;
  // any other after them.
  bool single_node_cuts = false;
};

// The split onto c.num_ipus IPUs (every IPU holding a node), or nullopt:
// fewer than 2 IPUs, host devices or constraints, `seconds` <= 0, no split
// within `upper_s` over a segment chain, or no valid split. `upper_s`: the
// bottleneck of a monotone split (another candidate's), where the
// bisection starts (infinity: the whole graph's compute).
std::optional<BlockSplit> BlockDpSplit(const StrategyContext& c, double seconds,
                                       double upper_s);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_BLOCKS_BLOCK_SPLIT_H_
