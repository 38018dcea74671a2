// The `optimal` strategy (DESIGN.md §4.3): the split with the smallest
// bottleneck among all splits that are contiguous slices of a topological
// order, subject to every IPU fitting the tile-memory model — found exactly by
// dynamic programming, after PipeDream's DP and Archer et al. (ICML 2024,
// optimal slicing of a topological order).
//
// Note [Slicing DP]
// The order is a sequence of units u_0..u_{m-1} (subgraphs, nodes, or blocks
// of consecutive nodes) such that every edge goes from a unit to itself or a
// later one. IPU d runs the slice [c_d, c_{d+1}) with 0 = c_0 < ... < c_k = m.
// Because PopART copies cut tensors only between adjacent stages (see
// ComputeCutBytes), the stage time of a slice [a, b) is
//   time(a, b) = P[b] - P[a] + (C[a] + C[b]) / link bandwidth
// where P is the prefix sum of node times and C[x] the bytes of the tensors
// produced before unit x and read at or after it; whether the slice fits
// depends only on its nodes. So with f[j][b] = the smallest bottleneck of
// the first b units on j IPUs,
//   f[j][b] = min over a < b with fits(a, b) of max(f[j-1][a], time(a, b)),
// and f[k][m] is the optimum. The DP runs in rounds with a cap U on stage
// times (slices and states above U are skipped; a slice whose compute time
// alone exceeds U ends the scan towards smaller a, as does one whose weights
// and code alone exceed the IPU's memory — both only grow with the slice): a
// round that finds a split within U has found the optimum, else U grows
// until it covers every slice. fits(a, b) is evaluated lazily, in order of
// the value a candidate would give, and remembered. A first pass without the
// memory constraint settles the common case: when its optimum fits, it is
// the optimum. When memory rules out most slices the evaluations can number
// units^2; a budget bounds them, and a DP that hits it (or the deadline)
// says it is not complete: its answer is then not proven.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_OPTIMAL_STRATEGY_H_
#define AUTOSHARD_SOLVER_STRATEGIES_OPTIMAL_STRATEGY_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "costmodel/device_model.h"
#include "costmodel/problem.h"
#include "solver/strategies/defaults.h"
#include "solver/strategies/sharding_points.h"

namespace autoshard {

// A topological order cut into units (see Note [Slicing DP]).
struct SliceOrder {
  std::string name;  // e.g. "depth-first nodes", "subgraphs"
  std::vector<std::vector<int32_t>> units;
};

// The best slicing of one order.
struct SliceResult {
  bool found = false;  // a slicing was found (fitting, unless ignore_memory)
  bool fits = false;   // every slice fits the tile-memory model
  // False when the deadline or the budget of tile-memory evaluations stopped
  // the DP before it proved its answer (then found = false may only mean
  // "none found", and a found slicing may not be the fastest).
  bool complete = true;
  double bottleneck_s = 0;      // the largest stage time (Note [Slicing DP])
  std::vector<int32_t> cuts;    // k + 1 unit positions, 0 .. m
  int64_t fit_evaluations = 0;  // slices costed by the tile-memory model
};

// The DP of Note [Slicing DP] on `order` for `num_ipus` IPUs (each gets at
// least one unit; requires 1 <= num_ipus <= units). With `ignore_memory`,
// every slice counts as fitting (result.fits still tells the truth).
// Returns found = false when no slicing fits, complete = false when
// `deadline` passed or `max_fit_evaluations` ran out first (slices not
// evaluated count as not fitting).
SliceResult SliceOptimally(const ShardingProblem& problem,
                           const DeviceModel& model, const SliceOrder& order,
                           int num_ipus, bool ignore_memory,
                           std::chrono::steady_clock::time_point deadline,
                           int64_t max_fit_evaluations = 50000);

// Orders the optimal strategy tries. Topological orders of the nodes:
// "topological" (the graph's, Kahn's in file order) and "depth-first" (each
// node as soon as its producers are done, following producers from the
// outputs in input order, so parallel branches stay together). Orders longer
// than `max_units` are cut into blocks of consecutive nodes ("... in blocks
// of N").
SliceOrder TopologicalNodeOrder(const ShardingProblem& problem, int max_units);
SliceOrder DepthFirstNodeOrder(const ShardingProblem& problem, int max_units);
// PopRT's subgraphs (DESIGN.md §4.1) in their order, for `num_ipus`.
SliceOrder SubgraphOrder(const ShardingProblem& problem, int num_ipus);

struct OptimalOptions {
  // For all orders together (> 0).
  double max_seconds = kDefaultMaxSearchSeconds;
  int max_units = 6000;  // per order; longer orders are cut into blocks
  int64_t max_fit_evaluations = 50000;  // per order
  // Known beforehand that no slicing fits (a node no IPU holds,
  // costmodel/node_bound.h, or weights more than the IPUs' memory:
  // OptimalOrRaw sets it): only the fastest slicing ignoring memory is
  // looked for.
  bool nothing_fits = false;
};

// What the optimal strategy found.
struct OptimalResult {
  Assignment assignment;  // IPU = pipeline stage = slice
  bool fits = false;
  // Every order's DP finished within its deadline and evaluation budget.
  bool complete = true;
  double bottleneck_s = 0;
  std::string order;  // the winning order's name
  int32_t units = 0;  // its unit count
  int64_t fit_evaluations = 0;
  struct Tried {
    std::string order;
    int32_t units = 0;
    bool fits = false;
    double bottleneck_s = 0;
  };
  std::vector<Tried> tried;  // every order, in the order tried
};

// Runs SliceOptimally on PopRT's subgraphs and on the topological and
// depth-first node orders, and keeps the fitting slicing with the smallest
// bottleneck (ties: the first). When no slicing of any order fits, returns
// the fastest slicing ignoring memory, with fits = false. Slices are costed
// with their nodes in the graph's topological order, as the plan is.
// Errors: InvalidArgument when num_ipus < 1 or exceeds the node count;
// DeadlineExceeded when options.max_seconds passed before any order's DP
// found a slicing.
absl::StatusOr<OptimalResult> OptimalStrategy(const ShardingProblem& problem,
                                              const DeviceModel& model,
                                              int num_ipus,
                                              const OptimalOptions& options);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_OPTIMAL_STRATEGY_H_
