// Replica grouping and replicated tensor sharding over a POD, as PopXL
// defines them (seed 000, PopXL's multi-instance test of
// `ir.replica_grouping(stride, group_size)`, `replica_sharded_variable(...,
// shard_over)` and `replicated_all_gather(..., group)`; DESIGN.md §7).
//
// Note [Replica grouping]
// R replicas (the replication factor) run the same pipeline on different
// data. A grouping (stride, group size) splits them into R / size groups of
// `size` replicas that share one copy of a variable:
//   group of replica r = (r / (stride * size)) * stride + r % stride
// so stride 1 makes groups of consecutive replicas ({0,1},{2,3} for size 2)
// and stride s interleaves them ({0,2},{1,3} for R = 4, size 2, stride 2).
// It is valid when size divides R and, for stride > 1, stride * size
// divides R (PopXL's rules). A variable sharded over n replicas of its
// group (replicated tensor sharding, `shard_over` n; the whole group when
// not given) keeps 1/n of it on each, and all-gathers it over the grouping
// (same stride, size n): the "gather groups". Without a grouping, every
// replica is in group 0 and sharding spans all R replicas (stride 1, size
// R). poprun's instances (processes) hold R / instances consecutive
// replicas each: instance of replica r = r / (R / instances).
#ifndef AUTOSHARD_POD_REPLICA_GROUPING_H_
#define AUTOSHARD_POD_REPLICA_GROUPING_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace autoshard::pod {

// (stride, group size) of Note [Replica grouping]; both >= 1.
struct ReplicaGrouping {
  int stride = 1;
  int group_size = 1;
};

// Parses "STRIDE,SIZE" (--replica-grouping). Errors: InvalidArgument when
// it is not two integers >= 1.
absl::StatusOr<ReplicaGrouping> ParseReplicaGrouping(const std::string& spec);

// InvalidArgument naming the rule broken: group size not dividing
// `replicas`, or stride * size not dividing it (stride > 1). `what` names
// the option in the message ("--replica-grouping 2,3").
absl::Status ValidateGrouping(const ReplicaGrouping& grouping, int replicas,
                              const std::string& what);

// Group of replica r (Note [Replica grouping]); requires a valid grouping.
int GroupOf(const ReplicaGrouping& grouping, int replica);
// GroupOf for r = 0 .. replicas - 1 (PopXL's `ReplicaGrouping.assignment`).
std::vector<int> GroupAssignment(const ReplicaGrouping& grouping, int replicas);
// The replicas of each group, groups in order, replicas ascending.
std::vector<std::vector<int>> GroupMembers(const ReplicaGrouping& grouping,
                                           int replicas);

// A POD's replication: replicas, instances, the variables' grouping and
// their sharding, as --total-ipus, poprun and --replica-grouping /
// --shard-over give them.
struct Replication {
  int replicas = 1;
  int instances = 1;  // poprun processes; R % instances == 0
  std::optional<ReplicaGrouping> grouping;  // none: one group of all
  bool sharded = false;                     // replicated tensor sharding
  std::optional<int> shard_over;            // none: the whole group
};

// The grouping the shards of a sharded variable all-gather over: (stride of
// the grouping (1 without one), shard_over), or the grouping itself without
// shard_over, or (1, R) without either. Errors (InvalidArgument, naming the
// option and the rule): R % instances != 0, an invalid grouping,
// shard_over < 1 or not dividing the group size, a gather grouping that is
// itself invalid over R. With sharded = false only the first two are
// checked and the result is the grouping (or (1, R)).
absl::StatusOr<ReplicaGrouping> GatherGrouping(const Replication& r);

// One replica's row of the replica -> group table.
struct ReplicaRow {
  int replica = 0;
  int instance = 0;      // r / (R / instances)
  int group = 0;         // GroupOf the grouping (0 without one)
  int gather_group = 0;  // GroupOf the gather grouping (sharded only)
  int shard = 0;         // position among its gather group's replicas (sharded)
};

// Every replica's row. Errors as GatherGrouping's.
absl::StatusOr<std::vector<ReplicaRow>> ReplicaTable(const Replication& r);

// The table as text: one line per replica (replica, instance, group, and
// when sharded the gather group and shard), then the groups' and gather
// groups' members.
std::string ReplicaTableText(const Replication& r,
                             const std::vector<ReplicaRow>& rows);

}  // namespace autoshard::pod

#endif  // AUTOSHARD_POD_REPLICA_GROUPING_H_
