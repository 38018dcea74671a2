// The `ideal` search: a DP over the ideals of the graph (Note [Ideals] in
// solver/strategies/ideal_lattice.h; Tarnawski et al., NeurIPS 2020), exact
// over every monotone assignment — not only contiguous slicings of a fixed
// order — when the ideals are few. Two uses:
// - IdealDpSplit, a plan: the fastest monotone split with every IPU used
//   and, unless told otherwise, every IPU fitting the tile-memory model;
// - IdealDpBound, a certified lower bound: the same DP without the memory
//   constraint and folded constants left out (and, when there are any, empty
//   IPUs allowed, as an IPU may hold only constants: at most one per
//   constant, Note [Empty IPUs] in ideal_dp.cc) — a relaxation of the
//   plans' problem (monotone, every IPU holding a node: ValidateAssignment),
//   so its optimum is a lower bound on every plan's bottleneck (DESIGN.md
//   §3.4).
//
// Note [Ideal DP]
// With f[j][I] = the smallest bottleneck of placing ideal I on IPUs 0..j-1,
//   f[j][I] = min over I' ⊆ I of max(f[j-1][I'], time(I', I)),
// (I' ≠ I unless the bound allows empty IPUs), and f[k][all] is the optimum.
// Only pairs with time(I', I) <= cap are kept (cap: a bottleneck already known
// to be reachable, or every stage time), found by scanning the ideals in order
// of compute time from P(I) - cap to P(I): a stage's time is at least its
// compute. Memory is judged lazily, in order of the value a pair would give,
// and remembered, as in Note [Slicing DP].
#ifndef AUTOSHARD_SOLVER_STRATEGIES_IDEAL_DP_H_
#define AUTOSHARD_SOLVER_STRATEGIES_IDEAL_DP_H_

#include <chrono>
#include <cstdint>
#include <limits>
#include <vector>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"

namespace autoshard {

struct IdealDpOptions {
  // The lattice is not used beyond this many ideals (nothing is returned).
  int64_t max_ideals = 5000;
  // Pairs (I', I) kept at most; subset tests made at most.
  int64_t max_pairs = 4000000;
  int64_t max_subset_tests = 200000000;
  int64_t max_fit_evaluations = 20000;  // IdealDpSplit only
  // Bounds only: any IPU may be empty, a weaker relaxation for a problem
  // changed in a way that only shortens stages but may empty an IPU (Note
  // [Free sinks], sharder/solve_host.cc).
  bool allow_empty_ipus = false;
  std::chrono::steady_clock::time_point deadline =
      std::chrono::steady_clock::time_point::max();
};

struct IdealDpResult {
  // The ideals numbered at most max_ideals and the pairs fitted the limits:
  // the DP ran.
  bool ran = false;
  // It finished within the deadline and the fit budget: `bottleneck_s` is
  // the optimum (of pairs within the cap), or there is none (found = false).
  bool complete = false;
  bool found = false;
  bool fits = false;  // every IPU fits (as the DP judged it)
  double bottleneck_s = 0;
  std::vector<int32_t> ipu;  // per node, when found
  // IdealDpHostSplit: the positions of `ipu` that are host devices (the
  // others are the IPUs, in order), ascending; empty: none used.
  std::vector<int32_t> host_positions;
  int64_t ideals = 0;
  int64_t pairs = 0;
  int64_t fit_evaluations = 0;
  // A plan's DP passed over a value because its IPU did not fit. When it
  // did not (and it completed), memory changed nothing: the optimum is the
  // same DP's without memory over pairs within the cap.
  bool memory_binding = false;
};

// The plan: the fastest monotone split onto `num_ipus` IPUs, every IPU
// running a node of the lattice, stage times at most `cap_s` (infinity: no
// cap), each IPU fitting unless `ignore_memory`. Folded constants go with
// their earliest reader (PlaceConstants); the DP judges an IPU's memory with
// the constants its nodes read. Requires num_ipus >= 1.
IdealDpResult IdealDpSplit(const ShardingProblem& problem,
                           const DeviceModel& model, int num_ipus, double cap_s,
                           bool ignore_memory, const IdealDpOptions& options);

// The bound: the optimum of the relaxation above, at most `upper_s`, which
// must be the bottleneck of some monotone split (the plan's). result.found
// and complete: result.bottleneck_s is a valid lower bound on every monotone
// split's bottleneck under the performance model (DESIGN.md §3.4).
IdealDpResult IdealDpBound(const ShardingProblem& problem,
                           const DeviceModel& model, int num_ipus,
                           double upper_s, const IdealDpOptions& options);

// With host devices (problem.HasHost(); Note [Host devices in the ideal DP]
// in ideal_dp.cc): the fastest chain of num_ipus IPU stages, every IPU
// running a node and fitting, and up to problem.num_host_devices host stages
// (empty ones dropped), in any order: each node's `ipu` is its stage's
// position in the chain (0..num_ipus + host_positions.size() - 1). A host
// stage takes Σ host_time_s of its nodes and pays no copies; an IPU stage
// what IdealDpSplit's does (copies through host: problem.copies_through_host
// should be set) and holds no host_only node. Without host devices: the
// same as IdealDpSplit. Requires num_ipus >= 1.
IdealDpResult IdealDpHostSplit(const ShardingProblem& problem,
                               const DeviceModel& model, int num_ipus,
                               double cap_s, const IdealDpOptions& options);

// Its relaxation as IdealDpBound's (no memory, empty IPUs when constants
// allow): with found and complete, a lower bound on every such chain's
// bottleneck (those with no host stage included), at most `upper_s`.
IdealDpResult IdealDpHostBound(const ShardingProblem& problem,
                               const DeviceModel& model, int num_ipus,
                               double upper_s, const IdealDpOptions& options);

// The filler bound's DP (Note [Filler bound], solver/bound/filler_bound.h):
// `problem` is the reduced one (its fillers folded constants), `filler_s` the
// fillers' Σ compute. A threshold T is ruled out when no chain of
// `num_ipus` ideals (empty IPUs allowed) has every stage time <= T and
// Σ stage times <= num_ipus x T - filler_s; result.bottleneck_s is the
// largest T in [lower_s, upper_s] found ruled out by bisection (to 1e-4 x
// upper_s; lower_s itself when nothing is), valid when found. Cost:
// O(pairs x num_ipus) per bisection step, about 14 steps.
IdealDpResult IdealDpFillerBound(const ShardingProblem& problem,
                                 const DeviceModel& model, int num_ipus,
                                 double filler_s, double lower_s,
                                 double upper_s, const IdealDpOptions& options);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_IDEAL_DP_H_
