// Plans with remote weights (issue 30; Note [Remote weights] in
// costmodel/weight_location.h): --weights-location remote plans with every
// floating-point weight in Streaming Memory, auto plans both ways and keeps
// the better, and either way the plan says where the weights live
// (proto::WeightLocations) and what each IPU loads.
//
// Note [Choosing where weights live]
// auto plans the model on-chip first; a plan that fits is kept exactly as
// it is (nothing needs to go off-chip), as it is on a profile without
// Streaming Memory. Otherwise it puts few bytes off-chip to make every stage
// fit (PlanFewestOffChip; greedy per IPU, not always the fewest: a review
// found 5 weights of 8:5:4:6:6 units where it moves 14 units and {6,6}
// would do): the planner splits the model with
// every floating-point weight remote, Note [Fewest bytes off-chip]
// (costmodel/remote_choice.h) picks which of them that split needs
// off-chip, and the model is planned again with only those remote (up to
// kFewestOffChipRounds rounds while the throughput improves). That plan is
// kept when it fits, its Streaming Memory included; else the on-chip one
// (which does not fit) is. The certificate of the plan auto returns holds
// over every set of weights off-chip, not only the one chosen: it is the
// bounds of the all-on-chip problem without memory (a remote weight only
// adds its load to a stage's time, and frees memory), taken when lower
// than the chosen set's. --weights-location remote keeps every
// floating-point weight off-chip. With --total-ipus, PlanPod weighs both
// per candidate and keeps the highest POD throughput (sharder/plan_pod.h).
#ifndef AUTOSHARD_SHARDER_WEIGHT_LOCATIONS_H_
#define AUTOSHARD_SHARDER_WEIGHT_LOCATIONS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"
#include "sharder/autoshard.h"

namespace autoshard::internal {

// Fills plan->proto.weight_locations and each IpuCost's remote_weight_bytes
// and remote_load_s from the plan's analysis and placement (nothing when
// it has no analysis). `asked` is --weights-location.
void DescribeWeightLocations(const Options& options, Plan* plan);

// InvalidArgument naming the rule when the plan's remote weights exceed
// the profile's Streaming Memory per IPU-Machine (the plan must be
// described first), `replicas` replicas of it filling the POD's machines
// in order (ReplicasPerMachine of them may share one machine).
absl::Status CheckStreamingMemoryOf(const Plan& plan, int replicas = 1);

// How many replicas of `ipus_per_replica` IPUs, of `replicas`, may hold
// their remote weights in one IPU-Machine of the profile's
// ipus_per_machine: ceil(per machine / k) when k is smaller (e.g. 4
// replicas of 1 IPU on an IPU-M2000), 2 when k is not a multiple of it (a
// machine may hold the end of one replica and the start of the next: an
// upper bound), else 1; never more than `replicas`.
int ReplicasPerMachine(const proto::DeviceProfile& device, int ipus_per_replica,
                       int replicas);

// One location's plan (options.weights_location "on-chip" or "remote"),
// described, its Streaming Memory not checked (PlanPod notes a candidate
// over capacity instead). Errors: PlanModel's.
absl::StatusOr<Plan> PlanAtLocation(const onnx::ModelProto& model,
                                    const Options& options);

// Rounds of PlanFewestOffChip: each plans the model once more.
inline constexpr int kFewestOffChipRounds = 3;

// The plan with few bytes off-chip that fits (Note [Choosing where
// weights live]), described, its Streaming Memory not checked; the
// all-remote plan when it does not fit or no round improves on it. Errors:
// PlanModel's.
absl::StatusOr<Plan> PlanFewestOffChip(const onnx::ModelProto& model,
                                       const Options& options);

// PlanModel for weights_location "remote" or "auto" (Note [Choosing where
// weights live]). Errors: PlanModel's; for "remote", a profile without
// Streaming Memory or remote bytes over its capacity.
absl::StatusOr<Plan> PlanWeightLocations(const onnx::ModelProto& model,
                                         const Options& options);

}  // namespace autoshard::internal

#endif  // AUTOSHARD_SHARDER_WEIGHT_LOCATIONS_H_
