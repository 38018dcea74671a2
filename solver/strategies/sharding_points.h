// Sharding points and PopRT's manual-sharding semantics (DESIGN.md §1).
//
// A sharding point (node, IPU, pipeline stage) claims its node and every
// not-yet-claimed ancestor. Points are applied in order of stage, then of
// position in the topological order; nodes no point claims go to
// (max IPU + 1, max stage + 1). A plan is monotone when no edge goes to an
// earlier stage.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_SHARDING_POINTS_H_
#define AUTOSHARD_SOLVER_STRATEGIES_SHARDING_POINTS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "costmodel/problem.h"
#include "graph/placement.h"

namespace autoshard {

struct ShardingPoint {
  int32_t node = 0;
  int32_t ipu = 0;
  int32_t pipeline_stage = 0;
};

// Where every node runs, as the strategies name it: the one placement type
// (graph/placement.h).
using Assignment = Placement;

// Applies `points` with PopRT's semantics. Errors (InvalidArgument): a point
// names a node twice, has an IPU or stage outside 0..n-1, or names a node an
// earlier point already claimed (it is that point's ancestor, so the plan could
// not be monotone).
absl::StatusOr<Assignment> ApplyShardingPoints(
    const ShardingProblem& problem, std::vector<ShardingPoint> points);

// The fewest sharding points that reproduce `assignment` under
// ApplyShardingPoints: in each (IPU, stage) group, the nodes none of whose
// consumers is in the group; none for the last group when the leftover rule
// puts its nodes there. Requires a monotone assignment. Errors when the
// points would not reproduce the assignment (possible only when two IPUs
// share a stage and their claims interleave).
absl::StatusOr<std::vector<ShardingPoint>> MinimalShardingPoints(
    const ShardingProblem& problem, const Assignment& assignment);

// Pipeline stages for a split given as the IPU of every node (0..k-1, k =
// the largest + 1), as a compile candidate carries it: in topological
// order, each node gets the smallest stage s >= its producers' stages with
// s = its IPU modulo k. A monotone split gets stage = IPU; one whose last
// stage returns to IPU 0 (Note [Last stage on IPU 0], revisit.h) gets
// stage k there. O(nodes + edges).
std::vector<int32_t> StagesOfIpus(const ShardingProblem& problem,
                                  const std::vector<int32_t>& ipu_of_node);

// Moves every folded constant node (problem.is_constant) to the earliest
// stage (and its IPU; the lowest IPU when stages are IPUs) among the nodes
// that read it, in reverse topological order
// so constant chains follow, the way a weight goes to where it is used: its
// output then crosses no IPU boundary and makes no sharding point. A plan
// that is monotone stays monotone. Constants nothing reads stay. Returns
// `assignment` unchanged when moving would leave an IPU without nodes.
Assignment SinkConstants(const ShardingProblem& problem,
                         const Assignment& assignment);

// Everything a plan must satisfy before it is written: every node has an IPU
// and stage in 0..n-1 (n = node count), IPUs and stages are numbered without
// gaps (each from 0 to the highest holds a node), and the plan is monotone.
// InvalidArgument naming the offending node, edge or numbers.
absl::Status ValidateAssignment(const ShardingProblem& problem,
                                const Assignment& assignment);

// InvalidArgument naming the first edge (producer -> consumer) that goes to an
// earlier pipeline stage, or when an IPU or stage is negative.
absl::Status ValidateMonotone(const ShardingProblem& problem,
                              const Assignment& assignment);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_SHARDING_POINTS_H_
