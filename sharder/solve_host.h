// Internal to sharder/: SolveProblem's planning of a problem with host
// devices (issue 31; Note [Host devices in solve] in solve_host.cc).
#ifndef AUTOSHARD_SHARDER_SOLVE_HOST_H_
#define AUTOSHARD_SHARDER_SOLVE_HOST_H_

#include <chrono>

#include "absl/status/statusor.h"
#include "sharder/autoshard.h"
#include "sharder/options.h"
#include "sharder/prepare.h"

namespace autoshard::internal {

// The plan of p's problem (problem.HasHost()) onto options.num_ipus IPUs
// (kAutoIpus: the count PlanPreparedCount picks for the IPUs alone) and up
// to problem.num_host_devices host devices: the better of the planner's
// IPU-only plan (in half of options.max_search_s) and the ideal DP with
// host devices (IdealDpHostSplit, exact or coarsened, in the rest), the
// certified bound the latter's relaxation (when it does not finish within
// options.bound_s, the larger of Note [Host work bound] and Note [Host
// chain bound]). A plan that uses the host lists it among `ipus` in chain
// order (IpuCost.host; Plan.num_host_devices) and names host and IPU
// stages as Note [Host stages in a plan] says (Plan.placement keeps each
// node's chain position in both ipu and pipeline_stage).
// Errors: PlanPreparedCount's; InvalidArgument for kAutoIpus with a host_only
// node; NotFound when no split was found.
absl::StatusOr<Plan> SolveWithHost(Prepared& p, const Options& options,
                                   std::chrono::steady_clock::time_point start);

}  // namespace autoshard::internal

#endif  // AUTOSHARD_SHARDER_SOLVE_HOST_H_
