// The options of a POD plan (DESIGN.md §7; issue 15): how many IPUs the
// POD has, the micro-batches to try, and the replicas' grouping. PlanPod
// (sharder/plan_pod.h) reads them; the CLI's POD flags fill them.
#ifndef AUTOSHARD_POD_POD_OPTIONS_H_
#define AUTOSHARD_POD_POD_OPTIONS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pod/replica_grouping.h"

namespace autoshard::pod {

// The most IPUs a POD plan may use (a POD1024).
inline constexpr int kMaxPodIpus = 1024;
// --batch-size auto tries 1, 2, 4, ... this.
inline constexpr int kAutoBatchMax = 64;

struct PodOptions {
  int total_ipus = 0;  // N, the POD's IPUs: 1 .. kMaxPodIpus
  // Micro-batches to try; empty: the Options' shapes.batch_size as it is.
  std::vector<int> batch_sizes;
  std::optional<ReplicaGrouping> grouping;  // --replica-grouping
  bool sharded = false;                     // --shard-over given
  std::optional<int> shard_over;            // none: the whole group

  // InvalidArgument naming the option: N out of range, a batch < 1.
  absl::Status Validate() const;
};

// "auto" -> 1, 2, 4, ... kAutoBatchMax; "1,4,16" -> those (ascending,
// each once). Errors: InvalidArgument for anything else or a value < 1.
absl::StatusOr<std::vector<int>> ParseBatchSizes(const std::string& spec);

}  // namespace autoshard::pod

#endif  // AUTOSHARD_POD_POD_OPTIONS_H_
