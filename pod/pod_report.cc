#include "pod/pod_report.h"

#include <algorithm>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/plural.h"

namespace autoshard::pod {

Replication ReplicationOf(const proto::Replication& r) {
  Replication out;
  out.replicas = r.replicas();
  if (r.grouping_size() > 0)
    out.grouping = ReplicaGrouping{r.grouping_stride(), r.grouping_size()};
  out.sharded = r.sharded();
  if (r.shard_over() > 0) out.shard_over = r.shard_over();
  return out;
}

std::string PodReportText(const proto::Plan& plan) {
  if (!plan.has_replication()) return "";
  const proto::Replication& r = plan.replication();
  std::string out = absl::StrFormat(
      "POD: %d IPUs = %s x %s, micro-batch %d; %s\n", r.total_ipus(),
      Plural(r.replicas(), "replica"),
      Plural(r.ipus_per_replica(), "IPU per replica", "IPUs per replica"),
      std::max(plan.batch_size(), 1),
      plan.fits() ? absl::StrFormat("POD throughput %.1f samples/s (%d x %.1f)",
                                    r.pod_throughput_per_s(), r.replicas(),
                                    r.replica_throughput_per_s())
                  : std::string("no POD throughput (the plan does not fit)"));
  // One line per micro-batch: each IPU count's POD throughput.
  absl::StrAppend(&out, "POD tried (IPUs per replica: POD samples/s):\n");
  for (int i = 0; i < r.tried_size();) {
    const int batch = r.tried(i).batch_size();
    std::vector<std::string> parts;
    for (; i < r.tried_size() && r.tried(i).batch_size() == batch; ++i) {
      const proto::PodCandidate& c = r.tried(i);
      // Issue 30: which location the weights had, when both were weighed.
      std::string counts = absl::StrCat(
          c.weights_location().empty() ? "" : c.weights_location(),
          c.weights_location().empty() ? "" : " ", c.ipus_per_replica());
      // Consecutive counts skipped for the same reason share one entry.
      while (!c.planned() && i + 1 < r.tried_size() &&
             r.tried(i + 1).batch_size() == batch &&
             r.tried(i + 1).weights_location() == c.weights_location() &&
             !r.tried(i + 1).planned() && r.tried(i + 1).note() == c.note()) {
        absl::StrAppend(&counts, ", ", r.tried(++i).ipus_per_replica());
      }
      parts.push_back(absl::StrCat(
          counts, ": ",
          !c.planned() ? absl::StrCat("skipped (", c.note(), ")")
          : c.fits()   ? absl::StrFormat("%.1f", c.pod_throughput_per_s())
                       : std::string("does not fit"),
          c.chosen() ? " (chosen)" : "",
          c.planned() && !c.note().empty() ? absl::StrCat(" (", c.note(), ")")
                                           : ""));
    }
    absl::StrAppend(&out, "  batch ", batch, ": ", absl::StrJoin(parts, ", "),
                    "\n");
  }
  if (r.grouping_size() > 0 || r.sharded()) {
    const Replication rep = ReplicationOf(r);
    absl::StatusOr<std::vector<ReplicaRow>> rows = ReplicaTable(rep);
    if (rows.ok()) absl::StrAppend(&out, ReplicaTableText(rep, *rows));
  }
  return out;
}

}  // namespace autoshard::pod
