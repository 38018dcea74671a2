// A coarsened ShardingProblem for the ideal DP when the graph has too many
// ideals (solver/strategies/ideal_dp.h): nodes that may stay together are
// merged, so the DP's plans — every one a valid plan of the original graph —
// come from a far smaller lattice.
//
// Note [Coarsening]
// Nodes are visited in topological order. A node v whose producers (folded
// constants left out, see Note [Ideals]) all lie in one group g joins g, and
// so do the producers of v that read nothing and are read by v alone; the
// group's compute stays at most `cap_s`. Contracting an edge into the only
// group that feeds v makes no cycle, and every edge into a group enters the
// node that made it (the sources that join have no producers), so the order
// the groups were made in is topological.
// A group's tensors are its members' tensors read outside it, with the same
// bytes, so any split of the groups has the stage times of the same split
// of the nodes (node_time_s carries each group's Σ DeviceModel::NodeTime).
// Folded constants stay single (and constant), as the lattice leaves them
// out anyway. Nodes of different host capability (host_only, some host
// time, none) never share a group (issue 31).
#ifndef AUTOSHARD_SOLVER_STRATEGIES_COARSEN_H_
#define AUTOSHARD_SOLVER_STRATEGIES_COARSEN_H_

#include <cstdint>
#include <vector>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"

namespace autoshard {

struct Coarsened {
  ShardingProblem problem;        // one node per group
  std::vector<int32_t> group_of;  // per original node: its group
};

// Note [Coarsening] with groups of at most `cap_s` seconds of compute (a
// single node costlier than that stays alone). `sources_always_join`: the
// lone sources of a node that starts a group join it whatever the cap (a
// weight's DequantizeLinear with its Conv: else each such source doubles
// the ideals). O(nodes + edges).
Coarsened Coarsen(const ShardingProblem& problem, const DeviceModel& model,
                  double cap_s, bool sources_always_join = false);

// The problem of given groups: `group_of` per node, numbered 0..m-1 in a
// topological order of the groups (every edge between two groups goes to a
// higher number); `passive` per node: the nodes whose groups are folded
// constants (is_constant), left out of the lattice with their tensors.
// O(nodes + edges).
Coarsened CoarsenGroups(const ShardingProblem& problem,
                        const DeviceModel& model, std::vector<int32_t> group_of,
                        const std::vector<uint8_t>& passive);

// The original nodes' IPUs from the groups' (folded constants placed again
// with PlaceConstants).
std::vector<int32_t> Refine(const ShardingProblem& problem,
                            const Coarsened& coarse,
                            const std::vector<int32_t>& group_ipu);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_COARSEN_H_
