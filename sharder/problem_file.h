// Problem files (proto/problem.proto): the partitioner without ONNX, for
// compilers with their own IR and costs (`autoshard solve problem.json`),
// and the problem a plan was made from (`shard --write-problem FILE`), so
// any plan can be replayed.
#ifndef AUTOSHARD_SHARDER_PROBLEM_FILE_H_
#define AUTOSHARD_SHARDER_PROBLEM_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "costmodel/precision.h"
#include "costmodel/problem.h"
#include "proto/device.pb.h"
#include "proto/plan.pb.h"
#include "proto/problem.pb.h"
#include "sharder/autoshard.h"
#include "sharder/options.h"

namespace autoshard {

// A problem file's content as the strategies see it.
struct LoadedProblem {
  ShardingProblem problem;
  proto::DeviceProfile device;
  Precision precision = Precision::kFp32;
  int num_ipus = 1;
  int64_t batch = 1;
};

// Checks and converts `problem`. Errors (InvalidArgument naming `source`
// and the node or tensor): no nodes, a node or weight index out of range, a
// tensor read by its own producer, a cycle, num_ipus < 1 or above the node
// count, an unknown precision, an invalid device_profile, negative bytes,
// FLOPs or seconds, an allowed IPU outside 0..63, a colocate group naming
// a node that is not one or a node in two groups, negative
// num_host_devices or host_compute_s, host_only without host_compute_s or
// host devices, host devices with host times but not COPY_MODEL_HOST
// (issue 31); NotFound for an unknown
// device name. Constraints an IPU count cannot keep are refused when
// planning (solver/strategies/constraints.h's CheckConstraints).
absl::StatusOr<LoadedProblem> FromProblemProto(const proto::Problem& problem,
                                               const std::string& source);

// The problem file of a prepared model: nodes in id order with their FLOPs,
// op class, weights and temporaries; one tensor per output slot that has
// bytes or readers; the device profile inline; adjacent-stage copies.
proto::Problem ToProblemProto(const ShardingProblem& problem,
                              const proto::DeviceProfile& device,
                              Precision precision, int num_ipus, int64_t batch);

// Reads a problem file (protobuf's JSON mapping). Errors: NotFound,
// InvalidArgument for JSON that is not a Problem, and FromProblemProto's.
absl::StatusOr<LoadedProblem> ReadProblemFile(const std::string& path);

// Writes `problem` as JSON to `path` (a temporary name, then renamed).
absl::Status WriteProblemFile(const proto::Problem& problem,
                              const std::string& path);

// Plain-bytes memory (Problem.capacity_bytes): `device` judges memory as
// one pool of `capacity_bytes` (> 0) per IPU counting `counts`
// (proto::MemoryModel; one tile of that many bytes, one-byte grains).
void SetPlainMemory(int64_t capacity_bytes, proto::MemoryCounts counts,
                    proto::DeviceProfile* device);

// Plans a loaded problem as `shard` plans a model (issue 31): the same
// planner (sharder/plan_model.h's PlanPreparedCount: the strategy registry,
// auto included, its budgets, --num-ipus auto up to max_ipus, the certified
// bound, one "better" rule) on the problem's analysis, so `shard
// --write-problem` then `solve` gives shard's plan. options.num_ipus is the
// count (1..nodes) or kAutoIpus, not the file's (the caller chooses);
// precision, device and batch are the file's; the options about a model
// (shapes, device, names) are not read. The plan has nodes, IPUs, cut
// tensors ("<producer>:<slot>"), performance and the strategies' summaries;
// no sharding points' model, planned inputs or PopRT flags. With host
// devices (problem.HasHost()): internal::SolveWithHost (solve_host.h). Errors:
// InvalidArgument for options Options::Validate refuses, a compile command
// (a problem has no model to compile), or a count above the node count;
// the strategies' (no split found within the time limit).
absl::StatusOr<Plan> SolveProblem(const LoadedProblem& loaded,
                                  const Options& options);

}  // namespace autoshard

#endif  // AUTOSHARD_SHARDER_PROBLEM_FILE_H_
