// What each replica holds of a remote replica-sharded weight (issue 30
// point 5): the reference test's configurations (seed 000: instances,
// replicas, grouping, shard_over) with its 16-int32 (64-byte) weight per
// group, the shard each replica keeps and the bytes its all-gather brings.
#include <optional>
#include <string>
#include <vector>

#include "costmodel/weight_location.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pod/replica_grouping.h"

namespace autoshard::pod {
namespace {

using ::testing::ElementsAreArray;

constexpr int64_t kWeightBytes = 64;  // 16 x int32, the reference's w
constexpr int kElements = 16;

struct ShardCase {
  std::string name;
  Replication replication;
  int shard_over;                  // n, the gather group's size
  std::vector<int> first_element;  // per replica: its shard's first element
  int64_t shard_bytes;             // per replica
  int64_t gathered_bytes;          // brought by the all-gather, per replica
};

std::vector<ShardCase> Cases() {
  auto rep = [](int instances, int replicas,
                std::optional<ReplicaGrouping> grouping,
                std::optional<int> over) {
    Replication r;
    r.instances = instances;
    r.replicas = replicas;
    r.grouping = grouping;
    r.sharded = true;
    r.shard_over = over;
    return r;
  };
  return {
      // test_default_sharding: 2 replicas, no grouping: gather (1, 2), shard
      // 8 elements (32 B) each, 32 B gathered.
      {"default_sharding",
       rep(1, 2, std::nullopt, std::nullopt),
       2,
       {0, 8},
       32,
       32},
      // test_sharding_within_single_instance_groups: 8 replicas, size 4,
      // shard_over 2: gather (1, 2) = {0,1},{2,3},...: shards alternate.
      {"within_single_instance_groups",
       rep(2, 8, ReplicaGrouping{1, 4}, 2),
       2,
       {0, 8, 0, 8, 0, 8, 0, 8},
       32,
       32},
      // test_sharding_whole_cross_instance_groups: size 4, shard_over 4:
      // gather (1, 4) = {0..3},{4..7}: 4 elements (16 B) each, 3 x 16 B.
      {"whole_cross_instance_groups",
       rep(4, 8, ReplicaGrouping{1, 4}, 4),
       4,
       {0, 4, 8, 12, 0, 4, 8, 12},
       16,
       48},
      // test_sharding_whole_orthogonal0_cross_instance_groups: stride 4,
      // size 2, shard_over 2: gather (4, 2) = {0,4},{1,5},{2,6},{3,7}.
      {"whole_orthogonal0",
       rep(4, 8, ReplicaGrouping{4, 2}, 2),
       2,
       {0, 0, 0, 0, 8, 8, 8, 8},
       32,
       32},
      // test_sharding_within_orthogonal_cross_instance_groups: stride 2,
      // size 4, shard_over 2: gather (2, 2) = {0,2},{1,3},{4,6},{5,7}.
      {"within_orthogonal",
       rep(4, 8, ReplicaGrouping{2, 4}, 2),
       2,
       {0, 0, 8, 8, 0, 0, 8, 8},
       32,
       32},
      // test_sharding_within_groups_with_stride_that_skips_whole_instances:
      // 16 replicas, stride 4, size 4, shard_over 2: gather (4, 2) =
      // {0,4},{1,5},{2,6},{3,7},{8,12},...
      {"stride_skips_instances",
       rep(16, 16, ReplicaGrouping{4, 4}, 2),
       2,
       {0, 0, 0, 0, 8, 8, 8, 8, 0, 0, 0, 0, 8, 8, 8, 8},
       32,
       32},
  };
}

TEST(RemoteShardsTest, EachReplicaHoldsItsShardOfTheReferenceWeight) {
  for (const ShardCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<ReplicaGrouping> gather = GatherGrouping(c.replication);
    ASSERT_TRUE(gather.ok()) << gather.status();
    EXPECT_EQ(gather->group_size, c.shard_over);
    absl::StatusOr<std::vector<ReplicaRow>> rows = ReplicaTable(c.replication);
    ASSERT_TRUE(rows.ok());
    std::vector<int> first;
    for (const ReplicaRow& row : *rows)
      first.push_back(row.shard * (kElements / c.shard_over));
    EXPECT_THAT(first, ElementsAreArray(c.first_element));
    EXPECT_EQ(ShardBytes(kWeightBytes, c.shard_over), c.shard_bytes);
    EXPECT_EQ(AllGatherBytes(kWeightBytes, c.shard_over), c.gathered_bytes);
    // Shard + gathered = the full tensor each replica uses.
    EXPECT_EQ(c.shard_bytes + c.gathered_bytes, kWeightBytes);
  }
}

TEST(RemoteShardsTest, ShardOverNotDividingTheGroupIsRefused) {
  Replication r;
  r.replicas = 8;
  r.grouping = ReplicaGrouping{1, 4};
  r.sharded = true;
  r.shard_over = 3;  // 3 does not divide the group of 4
  const absl::Status s = GatherGrouping(r).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("divide the group size 4"), std::string::npos)
      << s;
}

}  // namespace
}  // namespace autoshard::pod
