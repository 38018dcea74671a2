// A lower bound on the bottleneck of a problem with host devices (issue 31;
// Tarnawski et al.'s CPU) that keeps what the host work bound loses: the
// nodes come in ideals, so a stage's compute takes only the values the
// ideals' differences allow.
//
// Note [Host chain bound]
// A plan with host devices is a chain of stages, ∅ = I_0 ⊂ I_1 ⊂ ... ⊂ I_m
// = every node, each I_d an ideal, k of the stages on IPUs and up to h on
// hosts. With P(I) the Σ IPU node time of I (DeviceModel::NodeTime, folded
// constants left out as in the lattice) and T the bottleneck:
// - an IPU stage takes at least its compute: P(I_{d+1}) - P(I_d) <= T;
// - a host stage X = I_{d+1} \ I_d runs nodes with Σ host time <= T, so
//   P(X) <= X_h(T), the most IPU time a fractional knapsack of the nodes
//   that have a host time fits in T host seconds (X is one such choice).
// Forgetting which ideal each P(I_d) belongs to, the values P(I_d) rise
// from 0 to P(all) through the set V of the ideals' compute values, in k
// steps of at most T and h of at most X_h(T), in any order. From p, one
// step of at most s reaches at best max{v in V : v <= p + s}, which grows
// with p, so for a given T the furthest value after c host and j IPU steps
// is R[c][j] = max(reach_T(R[c][j-1]), reach_Xh(R[c-1][j])), and T is ruled
// out when R[h][k] < P(all) (a relaxation: copies, memory, constraints,
// full IPUs and subset order left out). Feasibility grows with T, so a
// bisection over [lower_s, upper_s] finds the largest T ruled out: a lower
// bound on every plan's bottleneck. Cost: the lattice (O(ideals x nodes /
// 64)), then O(k h log ideals) per step, 60 steps.
// V may come from a smaller lattice with the same values or more: one of
// the problem with each colocate group merged (a plan's ideals hold a
// group whole, with the nodes between its members), and with each sink
// of no IPU time and one producer merged with it (an ideal holding the
// producer and not the sink has the value of the one holding both).
//
// Note [Host work bound]
// Every split's bottleneck is at least each node's cheaper device time
// (min of its IPU NodeTime and its host time), and at least max(Σ IPU
// time / k, Σ host time / h) of its own nodes; the least such max over
// fractional splits (a node's share x on the host) is a lower bound. For a
// threshold T the host budget h x T goes to the nodes saving the most IPU
// seconds per host second (fractional knapsack), and T holds when the IPU
// work left is at most k x T; bisection to 1e-9 relative. O(n log n +
// 100 n). Copies are left out (they only add).
#ifndef AUTOSHARD_SOLVER_BOUND_HOST_BOUND_H_
#define AUTOSHARD_SOLVER_BOUND_HOST_BOUND_H_

#include <cstdint>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"

namespace autoshard {

// Note [Host chain bound] for `num_ipus` IPUs and problem.num_host_devices
// hosts (problem.host_time_s per node, < 0: none), within [lower_s,
// upper_s] (seconds): lower_s, a bound already proven, when the lattice
// has more than `max_ideals` ideals or nothing above it is ruled out;
// upper_s the bottleneck of some plan. Never fails.
// `values_problem` (and its model): such a smaller problem whose ideals'
// compute values are V (nullptr: `problem`); *ran (may be nullptr) says
// whether its lattice was enumerated.
double HostChainBound(const ShardingProblem& problem, const DeviceModel& model,
                      int num_ipus, double lower_s, double upper_s,
                      int64_t max_ideals,
                      const ShardingProblem* values_problem = nullptr,
                      const DeviceModel* values_model = nullptr,
                      bool* ran = nullptr);

// Note [Host work bound] for `num_ipus` IPUs and problem.num_host_devices
// hosts (host_only nodes on the hosts): a lower bound (seconds) on the
// bottleneck of every node -> device map, chains or not. Never fails.
double HostWorkBound(const ShardingProblem& problem, const DeviceModel& model,
                     int num_ipus);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_BOUND_HOST_BOUND_H_
