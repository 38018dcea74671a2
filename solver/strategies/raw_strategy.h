// The `raw` strategy: PopRT's bytes-balanced first split (DESIGN.md §4.1),
// with the reference's defects fixed.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_RAW_STRATEGY_H_
#define AUTOSHARD_SOLVER_STRATEGIES_RAW_STRATEGY_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "costmodel/problem.h"
#include "solver/strategies/sharding_points.h"
#include "solver/strategies/subgraphs.h"

namespace autoshard {

// Cuts the subgraph sequence into `num_ipus` contiguous groups and returns the
// group (IPU) of each subgraph. Walking the sequence, a group ends at the
// subgraph with which its running weight bytes reach total / num_ipus (the
// running sum restarts at 0 after each cut, as in PopRT). Fixes: when the
// model has no weights, FLOPs are balanced instead (and node counts when there
// are no FLOPs either); a cut is forced when just enough subgraphs remain for
// the IPUs still empty, so every IPU gets at least one subgraph (PopRT crashed
// when it found too few cut points). Requires subgraphs.size() >= num_ipus.
std::vector<int32_t> RawSplitSubgraphs(const SubgraphSet& subgraphs,
                                       int num_ipus);

// The subgraphs of DESIGN.md §4.1, falling back to keeping small subgraphs,
// then to one subgraph per node, while there are fewer subgraphs than IPUs.
SubgraphSet SubgraphsFor(const ShardingProblem& problem, int num_ipus);

// The whole raw strategy: subgraphs as DESIGN.md §4.1 (falling back to
// keeping small subgraphs, then to one subgraph per node, when there are fewer
// subgraphs than IPUs), the split above, and IPU = pipeline stage = group.
// Errors: InvalidArgument when num_ipus < 2 or exceeds the node count.
absl::StatusOr<Assignment> RawStrategy(const ShardingProblem& problem,
                                       int num_ipus);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_RAW_STRATEGY_H_
