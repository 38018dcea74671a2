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
#include "sharder/strategies/defaults.h"

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
// FLOPs or seconds; NotFound for an unknown device name.
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

struct SolveOptions {
  // The optimal DPs and the ideal DP together.
  double max_search_s = kDefaultMaxSearchSeconds;
  double bound_s = 10;  // the certified bound (0: the cheap one)
};

// Plans a loaded problem: the optimal strategy's slicings and the ideal DP
// (sharder/strategies/ideal_dp.h), the better by (fits, bottleneck), then
// its certified bound. The plan has nodes, IPUs (memory, stage times) and
// performance, no sharding points. Errors: the strategies' (no split found
// within the time limit).
absl::StatusOr<proto::Plan> SolveProblem(const LoadedProblem& loaded,
                                         const SolveOptions& options);

}  // namespace autoshard

#endif  // AUTOSHARD_SHARDER_PROBLEM_FILE_H_
