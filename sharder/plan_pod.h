// Planning for a whole POD (DESIGN.md §7; issue 15): the plan's pipeline
// of k IPUs is one replica, and a POD of N IPUs runs N / k replicas (data
// parallel). PlanPod plans the replica with the public PlanModel, once per
// candidate (IPUs per replica, micro-batch), and keeps the one with the
// highest POD throughput. It runs above the pipeline (it calls PlanModel),
// so it lives in sharder/; what the POD layer needs of it (PodOptions, the
// report lines) is in pod/.
//
// Note [POD throughput]
// Replicas run independently on different samples, so the POD's
// throughput is replicas x the replica's pipelined throughput (batch /
// bottleneck, the performance model of DESIGN.md §3.4); gradients'
// all-reduce and host I/O are not modelled. With --num-ipus auto the
// candidates are the powers of two k <= min(N, --max-ipus) with N % k == 0;
// with a count, that count (N % k == 0 checked). The micro-batches are the
// given list, powers of two 1 .. kAutoBatchMax for `auto`, or the model's.
// Candidates are tried batch by batch (ascending), k ascending; a k whose
// IPUs cannot hold the model's weights (weights > k x IPU memory) is
// skipped without planning, and a batch at which no k fits ends the batches
// (activations only grow with the batch), as does a model whose batch does
// not follow --batch-size (a fixed first dim). The best fitting candidate
// wins; ties go to fewer IPUs per replica, then the smaller batch. When
// none fits, the plan is the last one planned, with fits = false.
#ifndef AUTOSHARD_SHARDER_PLAN_POD_H_
#define AUTOSHARD_SHARDER_PLAN_POD_H_

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"
#include "pod/pod_options.h"
#include "pod/pod_report.h"
#include "sharder/autoshard.h"

namespace autoshard::pod {

// Plans `model` for the POD per Note [POD throughput]; the chosen plan has
// Plan::proto.replication set (tried lists every candidate). Errors:
// PlanModel's; InvalidArgument when N % (a given --num-ipus) != 0, when
// --max-ipus exceeds kMaxPodIpus, or when the grouping or sharding is
// invalid over the chosen replicas (pod/replica_grouping.h).
absl::StatusOr<Plan> PlanPod(const onnx::ModelProto& model,
                             const Options& options, const PodOptions& pod);

}  // namespace autoshard::pod

#endif  // AUTOSHARD_SHARDER_PLAN_POD_H_
