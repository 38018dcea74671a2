#include "pod/replica_grouping.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"

namespace autoshard::pod {
namespace {

std::string GroupingText(const ReplicaGrouping& g) {
  return absl::StrCat("stride ", g.stride, ", size ", g.group_size);
}

std::string MembersText(const std::vector<std::vector<int>>& members) {
  std::vector<std::string> parts;
  for (const auto& m : members)
    parts.push_back(absl::StrCat("{", absl::StrJoin(m, ","), "}"));
  return absl::StrJoin(parts, " ");
}

}  // namespace

absl::StatusOr<ReplicaGrouping> ParseReplicaGrouping(const std::string& spec) {
  std::vector<std::string> parts = absl::StrSplit(spec, ',');
  ReplicaGrouping g;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &g.stride) ||
      !absl::SimpleAtoi(parts[1], &g.group_size) || g.stride < 1 ||
      g.group_size < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--replica-grouping '", spec,
        "': expected STRIDE,SIZE, two integers of at least 1 (e.g. 1,4)"));
  }
  return g;
}

absl::Status ValidateGrouping(const ReplicaGrouping& g, int replicas,
                              const std::string& what) {
  if (g.stride < 1 || g.group_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": stride and group size must be at least 1"));
  }
  if (replicas % g.group_size != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": the group size ", g.group_size,
                     " does not divide the ", replicas, " replicas"));
  }
  // 64-bit: stride * size may overflow an int for absurd inputs.
  const int64_t span = static_cast<int64_t>(g.stride) * g.group_size;
  if (g.stride > 1 && replicas % span != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": stride x group size = ", g.stride, " x ", g.group_size, " = ",
        span, " does not divide the ", replicas, " replicas"));
  }
  return absl::OkStatus();
}

int GroupOf(const ReplicaGrouping& g, int replica) {
  const int span = g.stride * g.group_size;
  return (replica / span) * g.stride + replica % g.stride;
}

std::vector<int> GroupAssignment(const ReplicaGrouping& g, int replicas) {
  std::vector<int> out(replicas);
  for (int r = 0; r < replicas; ++r) out[r] = GroupOf(g, r);
  return out;
}

std::vector<std::vector<int>> GroupMembers(const ReplicaGrouping& g,
                                           int replicas) {
  std::vector<std::vector<int>> members(replicas / g.group_size);
  for (int r = 0; r < replicas; ++r) members[GroupOf(g, r)].push_back(r);
  return members;
}

absl::StatusOr<ReplicaGrouping> GatherGrouping(const Replication& r) {
  if (r.replicas < 1 || r.instances < 1 || r.replicas % r.instances != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the ", r.replicas, " replicas do not divide over ",
                     r.instances, " instances (processes)"));
  }
  const ReplicaGrouping all{1, r.replicas};
  if (r.grouping) {
    RETURN_IF_ERROR(
        ValidateGrouping(*r.grouping, r.replicas,
                         absl::StrCat("--replica-grouping ", r.grouping->stride,
                                      ",", r.grouping->group_size)));
  }
  const ReplicaGrouping group = r.grouping.value_or(all);
  if (!r.sharded) return group;
  if (!r.shard_over) return group;
  const int n = *r.shard_over;
  if (n < 1 || group.group_size % n != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--shard-over ", n, ": must be at least 1 and divide the group size ",
        group.group_size, " (", GroupingText(group), ")"));
  }
  const ReplicaGrouping gather{group.stride, n};
  RETURN_IF_ERROR(ValidateGrouping(
      gather, r.replicas,
      absl::StrCat("--shard-over ", n, " (all-gather grouping ",
                   GroupingText(gather), ")")));
  return gather;
}

absl::StatusOr<std::vector<ReplicaRow>> ReplicaTable(const Replication& r) {
  ASSIGN_OR_RETURN(ReplicaGrouping gather, GatherGrouping(r));
  const ReplicaGrouping group =
      r.grouping.value_or(ReplicaGrouping{1, r.replicas});
  const int per_instance = r.replicas / r.instances;
  std::vector<int> seen(r.replicas / gather.group_size, 0);
  std::vector<ReplicaRow> rows;
  for (int i = 0; i < r.replicas; ++i) {
    ReplicaRow row;
    row.replica = i;
    row.instance = i / per_instance;
    row.group = GroupOf(group, i);
    if (r.sharded) {
      row.gather_group = GroupOf(gather, i);
      row.shard = seen[row.gather_group]++;
    }
    rows.push_back(row);
  }
  return rows;
}

std::string ReplicaTableText(const Replication& r,
                             const std::vector<ReplicaRow>& rows) {
  const ReplicaGrouping group =
      r.grouping.value_or(ReplicaGrouping{1, r.replicas});
  std::string out = absl::StrFormat(
      "replica grouping: %s over %d replicas on %d instances: %d groups\n",
      r.grouping ? GroupingText(group) : "none (one group of all)", r.replicas,
      r.instances, r.replicas / group.group_size);
  absl::StrAppend(&out, r.sharded ? "replica instance group gather shard\n"
                                  : "replica instance group\n");
  for (const ReplicaRow& row : rows) {
    absl::StrAppendFormat(&out, "%7d %8d %5d", row.replica, row.instance,
                          row.group);
    if (r.sharded) {
      absl::StrAppendFormat(&out, " %6d %5d", row.gather_group, row.shard);
    }
    absl::StrAppend(&out, "\n");
  }
  absl::StrAppend(
      &out, "groups: ", MembersText(GroupMembers(group, r.replicas)), "\n");
  if (r.sharded) {
    absl::StatusOr<ReplicaGrouping> gather = GatherGrouping(r);
    if (gather.ok()) {
      absl::StrAppend(&out, "variables sharded over ", gather->group_size,
                      " replicas; all-gather groups (", GroupingText(*gather),
                      "): ", MembersText(GroupMembers(*gather, r.replicas)),
                      "\n");
    }
  }
  return out;
}

}  // namespace autoshard::pod
