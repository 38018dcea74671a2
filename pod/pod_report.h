// The POD lines of the text report (DESIGN.md §7; issue 15), read from the
// plan's Replication that PlanPod (sharder/plan_pod.h) fills.
#ifndef AUTOSHARD_POD_POD_REPORT_H_
#define AUTOSHARD_POD_POD_REPORT_H_

#include <string>

#include "pod/replica_grouping.h"
#include "proto/plan.pb.h"

namespace autoshard::pod {

// The replicas, grouping and sharding a plan's Replication records.
Replication ReplicationOf(const proto::Replication& r);

// The POD lines of the report: IPUs per replica, replicas, POD throughput,
// what was tried, and the replica -> group table when a grouping or
// sharding was given. Empty when the plan has no replication.
std::string PodReportText(const proto::Plan& plan);

}  // namespace autoshard::pod

#endif  // AUTOSHARD_POD_POD_REPORT_H_
