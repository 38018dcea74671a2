#include "cmd/pod_flags.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "pod/replica_grouping.h"

namespace autoshard::cmd {

void AddPodFlags(CLI::App* sub, PodFlags* f, int* max_ipus) {
  sub->add_option("--total-ipus", f->total_ipus,
                  "the POD's IPUs N (1 to 1024): plan one replica and run N / "
                  "IPUs-per-replica replicas; with --num-ipus auto (and "
                  "--batch-size auto or B1,B2,...) the IPUs per replica and "
                  "micro-batch of the highest POD throughput");
  sub->add_option("--max-ipus", *max_ipus,
                  "--num-ipus auto tries 1, 2, 4, ... up to this (default "
                  "256, at most 1024)");
  sub->add_option("--replica-grouping", f->replica_grouping,
                  "with --total-ipus: PopXL's grouping of the variables over "
                  "the replicas, STRIDE,SIZE; group of replica r = (r / "
                  "(STRIDE x SIZE)) x STRIDE + r % STRIDE");
  sub->add_option("--shard-over", f->shard_over,
                  "with --total-ipus: shard the variables over N replicas of "
                  "each group (or 'group': all of it); they all-gather over "
                  "(STRIDE, N)");
}

absl::StatusOr<std::optional<pod::PodOptions>> PodOptionsOf(
    const PodFlags& f, const std::string& batch_spec) {
  int single = 0;
  const bool batch_list =
      !batch_spec.empty() && !absl::SimpleAtoi(batch_spec, &single);
  if (f.total_ipus == 0) {
    if (!f.replica_grouping.empty() || !f.shard_over.empty() || batch_list) {
      return absl::InvalidArgumentError(
          "--replica-grouping, --shard-over and --batch-size auto or a list "
          "need --total-ipus");
    }
    return std::nullopt;
  }
  pod::PodOptions pod;
  pod.total_ipus = f.total_ipus;
  if (batch_list) {
    ASSIGN_OR_RETURN(pod.batch_sizes, pod::ParseBatchSizes(batch_spec));
  }
  if (!f.replica_grouping.empty()) {
    ASSIGN_OR_RETURN(pod.grouping,
                     pod::ParseReplicaGrouping(f.replica_grouping));
  }
  if (!f.shard_over.empty()) {
    pod.sharded = true;
    int n = 0;
    if (f.shard_over != "group") {
      if (!absl::SimpleAtoi(f.shard_over, &n) || n < 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("--shard-over '", f.shard_over,
                         "': expected a count of at least 1, or group"));
      }
      pod.shard_over = n;
    }
  }
  RETURN_IF_ERROR(pod.Validate());
  return pod;
}

}  // namespace autoshard::cmd
