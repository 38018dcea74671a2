// Placement constraints (issue 31): nodes allowed only on some IPUs
// (ShardingProblem::allowed_ipus; a pin is one allowed IPU) and colocation
// groups (ShardingProblem::colocate_group: a group's nodes on one IPU).
//
// Note [Constraints in every strategy]
// Every strategy ends in Evaluated (strategy.h), which repairs a split that
// breaks a constraint (RepairToConstraints) and marks one it cannot repair
// (StrategyResult::broken_constraint), so BetterResult ranks it below any
// split that keeps them and the planner refuses it. The exact DP over ideals
// (ideal_dp.h) honours them itself, so its optimum and its bound are those
// of the constrained problem; the other bounds ignore them, a relaxation,
// so they stay lower bounds.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_CONSTRAINTS_H_
#define AUTOSHARD_SOLVER_STRATEGIES_CONSTRAINTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "costmodel/device_model.h"
#include "costmodel/problem.h"
#include "solver/strategies/coarsen.h"

namespace autoshard {

// The first constraint the split `ipu_of_node` (node -> IPU) breaks, in
// words naming the node, group and IPUs ("node 'emb' is on IPU 1, allowed
// only on 0"), or "" when it keeps every one. O(nodes).
std::string BrokenConstraint(const ShardingProblem& problem,
                             const std::vector<int32_t>& ipu_of_node);

// Refuses a constraint set no split onto `num_ipus` IPUs can keep, naming the
// rule: a node allowed on no IPU below num_ipus (a pin to IPU >= num_ipus),
// a group whose nodes share no allowed IPU (contradictory pins), a group
// whose nodes alone do not fit one IPU's memory under `model` (nullptr: not
// judged), a group whose nodes are read by one another through a node
// allowed on no IPU they share. InvalidArgument ("constraints: ...").
absl::Status CheckConstraints(const ShardingProblem& problem, int num_ipus,
                              const DeviceModel* model);

// A monotone split close to `ipu_of_node` that keeps every constraint and
// uses each of the `num_ipus` IPUs, or nullopt when the repairs tried find
// none: nodes raised (in topological order, to the lowest allowed IPU at or
// above their own and their producers') or lowered (in reverse, to the
// highest allowed at or below their own and their consumers'), a group
// going where its furthest node goes, until nothing moves; the faster of the
// two that use every IPU. `ipu_of_node` may be any split onto num_ipus IPUs.
std::optional<std::vector<int32_t>> RepairToConstraints(
    const ShardingProblem& problem, const DeviceModel& model, int num_ipus,
    const std::vector<int32_t>& ipu_of_node);

// Note [Filling empty IPUs]
// Moves single nodes onto the IPUs of 0..num_ipus-1 that hold none, where
// that keeps the split monotone (a node's producers on the IPU or before,
// its readers on it or after) and its constraints, and empties no other IPU;
// for each such IPU, in order, the node taken is the one that costs least
// alone there: compute + CopySeconds(bytes it reads) + CopySeconds(bytes it
// writes) under `model`; when that leaves an IPU empty (the cheapest node
// may be the only one a later IPU could take), or with `model` nullptr, the
// first in node order each time. A split with an
// IPU holding only folded constants is a plan (ValidateAssignment) that
// moves putting constants with their readers (PlaceConstants) turn into
// none, so Evaluated (strategy.h) fills its empty IPUs (Swin-T at 256 IPUs:
// the min-cut order's slicing leaves 111 IPUs with only a constant; the
// moves' split was dropped for the IPUs they emptied). False (the split
// partly changed) when some IPU stays empty. O(empty IPUs x (nodes +
// edges)).
bool FillEmptyIpus(const ShardingProblem& problem, const DeviceModel* model,
                   int num_ipus, std::vector<int32_t>* ipu_of_node);

// The problem with each colocation group merged into one node, with the
// nodes between its members (and groups whose merged nodes overlap merged
// again), allowed where all its nodes are: its monotone splits are exactly
// the original's monotone splits that keep the groups, with the same stage
// times (Note [Coarsening], coarsen.h), from a far smaller lattice (Note
// [Constraints in the ideal DP], ideal_dp.cc). nullopt without groups, or
// when fewer than `num_ipus` merged nodes are left. O(rounds x groups x
// (nodes + edges)).
std::optional<Coarsened> ContractGroups(const ShardingProblem& problem,
                                        const DeviceModel& model, int num_ipus);

// Applies pins ("NODE=IPU", by node name) to `problem` as one-IPU allowed
// sets (intersected with any it has). InvalidArgument naming the pin: not
// NODE=IPU, an IPU that is not a number in 0..63, an unknown node.
absl::Status ApplyPins(const std::vector<std::string>& pins,
                       ShardingProblem* problem);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_CONSTRAINTS_H_
