#include "pod/replica_grouping.h"

#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace autoshard::pod {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// One configuration of PopXL's multi-instance test (seed 000): instances,
// replicas, grouping (stride, size), sharding; the expected group of every
// replica and, when sharded, the all-gather groups, worked by hand from
// group(r) = (r / (stride * size)) * stride + r % stride.
struct Config {
  std::string name;
  int instances;
  int replicas;
  std::optional<ReplicaGrouping> grouping;
  bool sharded;
  std::optional<int> shard_over;
  std::vector<int> assignment;
  std::vector<std::vector<int>> gather_groups;  // sharded only
};

// An unsharded configuration: no gather groups.
Config Grouped(std::string name, int instances, int replicas,
               std::optional<ReplicaGrouping> grouping,
               std::vector<int> assignment) {
  return {
      std::move(name),       instances, replicas, grouping, false, std::nullopt,
      std::move(assignment), {}};
}

// A sharded configuration (shard_over: none for the whole group).
Config Sharded(std::string name, int instances, int replicas,
               std::optional<ReplicaGrouping> grouping,
               std::optional<int> shard_over, std::vector<int> assignment,
               std::vector<std::vector<int>> gather_groups) {
  return {std::move(name),
          instances,
          replicas,
          grouping,
          true,
          shard_over,
          std::move(assignment),
          std::move(gather_groups)};
}

// The configurations without sharding.
std::vector<Config> GroupingConfigs() {
  return {
      // No grouping: one group of all.
      Grouped("no_grouping_2_2", 2, 2, std::nullopt, {0, 0}),
      // size 1: every replica its own group.
      Grouped("one_group_per_replica_2_4", 2, 4, ReplicaGrouping{1, 1},
              {0, 1, 2, 3}),
      Grouped("one_group_of_one_per_instance_2_2", 2, 2, ReplicaGrouping{1, 1},
              {0, 1}),
      // size 2, stride 1: r / 2.
      Grouped("one_group_of_two_per_instance_2_4", 2, 4, ReplicaGrouping{1, 2},
              {0, 0, 1, 1}),
      // stride 2, size 2, R 4: (r / 4) * 2 + r % 2 = r % 2.
      Grouped("orthogonal_1_4", 1, 4, ReplicaGrouping{2, 2}, {0, 1, 0, 1}),
      // stride 2, size 4, R 8: (r / 8) * 2 + r % 2 = r % 2.
      Grouped("orthogonal_within_instances_2_8", 2, 8, ReplicaGrouping{2, 4},
              {0, 1, 0, 1, 0, 1, 0, 1}),
      // stride 4, size 2, R 8: (r / 8) * 4 + r % 4 = r % 4.
      Grouped("orthogonal_across_instances_2_8", 2, 8, ReplicaGrouping{4, 2},
              {0, 1, 2, 3, 0, 1, 2, 3}),
      // stride 2, size 2, R 16: (r / 4) * 2 + r % 2.
      Grouped("strided_per_instance_stride2_2_16", 2, 16, ReplicaGrouping{2, 2},
              {0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7}),
      // stride 4, size 2, R 16: (r / 8) * 4 + r % 4.
      Grouped("strided_per_instance_stride4_2_16", 2, 16, ReplicaGrouping{4, 2},
              {0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7}),
      Grouped("one_group_spanning_all_2_4", 2, 4, ReplicaGrouping{1, 4},
              {0, 0, 0, 0}),
      Grouped("groups_spanning_subset_4_8", 4, 8, ReplicaGrouping{1, 4},
              {0, 0, 0, 0, 1, 1, 1, 1}),
      // Group (4, 2) = r % 4: {0,4} spans instances 0 and 2 (2 per instance).
      Grouped("stride_skips_instances_unsharded_4_8", 4, 8,
              ReplicaGrouping{4, 2}, {0, 1, 2, 3, 0, 1, 2, 3}),
  };
}

// The sharded configurations: each with its all-gather groups.
std::vector<Config> ShardingConfigs() {
  return {
      // Sharded without a grouping: over all R replicas, (1, R).
      Sharded("default_sharding_1_2", 1, 2, std::nullopt, std::nullopt, {0, 0},
              {{0, 1}}),
      // Sharded over the whole group (1, 2): the gather groups are the groups.
      Sharded("sharding_across_instances_2_2", 2, 2, ReplicaGrouping{1, 2},
              std::nullopt, {0, 0}, {{0, 1}}),
      Sharded("sharding_whole_single_instance_groups_2_8", 2, 8,
              ReplicaGrouping{1, 2}, std::nullopt, {0, 0, 1, 1, 2, 2, 3, 3},
              {{0, 1}, {2, 3}, {4, 5}, {6, 7}}),
      // Group (1, 4), shard over 2: gather (1, 2) = r / 2.
      Sharded("sharding_within_single_instance_groups_2_8", 2, 8,
              ReplicaGrouping{1, 4}, 2, {0, 0, 0, 0, 1, 1, 1, 1},
              {{0, 1}, {2, 3}, {4, 5}, {6, 7}}),
      Sharded("sharding_whole_cross_instance_groups_4_8", 4, 8,
              ReplicaGrouping{1, 4}, 4, {0, 0, 0, 0, 1, 1, 1, 1},
              {{0, 1, 2, 3}, {4, 5, 6, 7}}),
      Sharded("sharding_within_cross_instance_groups_4_8", 4, 8,
              ReplicaGrouping{1, 4}, 2, {0, 0, 0, 0, 1, 1, 1, 1},
              {{0, 1}, {2, 3}, {4, 5}, {6, 7}}),
      // Group (4, 2) = r % 4; shard over 2: gather (4, 2), the same.
      Sharded("sharding_whole_orthogonal0_4_8", 4, 8, ReplicaGrouping{4, 2}, 2,
              {0, 1, 2, 3, 0, 1, 2, 3}, {{0, 4}, {1, 5}, {2, 6}, {3, 7}}),
      // Group (2, 4) = r % 2, sharded over the group: gather (2, 4).
      Sharded("sharding_whole_orthogonal1_1_8", 1, 8, ReplicaGrouping{2, 4},
              std::nullopt, {0, 1, 0, 1, 0, 1, 0, 1},
              {{0, 2, 4, 6}, {1, 3, 5, 7}}),
      Sharded("sharding_whole_orthogonal1_2_8", 2, 8, ReplicaGrouping{2, 4},
              std::nullopt, {0, 1, 0, 1, 0, 1, 0, 1},
              {{0, 2, 4, 6}, {1, 3, 5, 7}}),
      Sharded("sharding_whole_orthogonal1_4_8", 4, 8, ReplicaGrouping{2, 4},
              std::nullopt, {0, 1, 0, 1, 0, 1, 0, 1},
              {{0, 2, 4, 6}, {1, 3, 5, 7}}),
      Sharded("sharding_whole_orthogonal1_8_8", 8, 8, ReplicaGrouping{2, 4},
              std::nullopt, {0, 1, 0, 1, 0, 1, 0, 1},
              {{0, 2, 4, 6}, {1, 3, 5, 7}}),
      // Group (2, 4) = r % 2, shard over 2: gather (2, 2) = (r / 4) * 2 + r %
      // 2 = 0 1 0 1 2 3 2 3: a strided collective from an unstrided split.
      Sharded("sharding_within_orthogonal_4_8", 4, 8, ReplicaGrouping{2, 4}, 2,
              {0, 1, 0, 1, 0, 1, 0, 1}, {{0, 2}, {1, 3}, {4, 6}, {5, 7}}),
      Sharded("stride_skips_instances_sharded_4_8", 4, 8, ReplicaGrouping{4, 2},
              std::nullopt, {0, 1, 2, 3, 0, 1, 2, 3},
              {{0, 4}, {1, 5}, {2, 6}, {3, 7}}),
      // Group (4, 4), R 16: (r / 16) * 4 + r % 4 = r % 4. Shard over 2:
      // gather (4, 2) = (r / 8) * 4 + r % 4: {0,4} {1,5} {2,6} {3,7} then
      // {8,12} ... {11,15}.
      Sharded("sharding_within_stride_skips_instances_16_16", 16, 16,
              ReplicaGrouping{4, 4}, 2,
              {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3},
              {{0, 4},
               {1, 5},
               {2, 6},
               {3, 7},
               {8, 12},
               {9, 13},
               {10, 14},
               {11, 15}}),
  };
}

const std::vector<Config>& Configs() {
  static const auto* configs = [] {
    auto* all = new std::vector<Config>(GroupingConfigs());
    for (Config& c : ShardingConfigs()) all->push_back(std::move(c));
    return all;
  }();
  return *configs;
}

// gtest prints a parameter by its name, not its bytes.
void PrintTo(const Config& c, std::ostream* os) { *os << c.name; }

class ReferenceConfig : public ::testing::TestWithParam<Config> {};

TEST_P(ReferenceConfig, AssignmentAndGatherGroups) {
  const Config& c = GetParam();
  Replication r{c.replicas, c.instances, c.grouping, c.sharded, c.shard_over};
  absl::StatusOr<std::vector<ReplicaRow>> rows = ReplicaTable(r);
  ASSERT_TRUE(rows.ok()) << rows.status();
  std::vector<int> groups;
  for (const ReplicaRow& row : *rows) {
    groups.push_back(row.group);
    // R / instances consecutive replicas per instance.
    EXPECT_EQ(row.instance, row.replica / (c.replicas / c.instances));
  }
  EXPECT_THAT(groups, ElementsAreArray(c.assignment));
  if (c.grouping) {
    EXPECT_THAT(GroupAssignment(*c.grouping, c.replicas),
                ElementsAreArray(c.assignment));
  }
  if (!c.sharded) return;
  absl::StatusOr<ReplicaGrouping> gather = GatherGrouping(r);
  ASSERT_TRUE(gather.ok()) << gather.status();
  EXPECT_EQ(GroupMembers(*gather, c.replicas), c.gather_groups);
  // Each replica's shard is its position in its gather group.
  for (const ReplicaRow& row : *rows) {
    const std::vector<int>& members = c.gather_groups[row.gather_group];
    ASSERT_LT(row.shard, static_cast<int>(members.size()));
    EXPECT_EQ(members[row.shard], row.replica);
  }
}

INSTANTIATE_TEST_SUITE_P(PopXL, ReferenceConfig, ::testing::ValuesIn(Configs()),
                         [](const ::testing::TestParamInfo<Config>& info) {
                           return info.param.name;
                         });

TEST(ReplicaGroupingTest, ParsesStrideAndSize) {
  absl::StatusOr<ReplicaGrouping> g = ParseReplicaGrouping("2,4");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->stride, 2);
  EXPECT_EQ(g->group_size, 4);
  for (const char* bad : {"", "2", "2,", "0,4", "2,0", "a,b", "1,2,3", "-1,2"})
    EXPECT_FALSE(ParseReplicaGrouping(bad).ok()) << bad;
}

TEST(ReplicaGroupingTest, RefusesGroupingsThatDoNotDivide) {
  // 8 % 3 != 0.
  absl::Status s = ValidateGrouping({1, 3}, 8, "--replica-grouping 1,3");
  EXPECT_THAT(s.message(), HasSubstr("group size 3 does not divide the 8"));
  // 4 x 4 = 16 does not divide 8, though 4 does.
  s = ValidateGrouping({4, 4}, 8, "--replica-grouping 4,4");
  EXPECT_THAT(s.message(), HasSubstr("4 x 4 = 16 does not divide the 8"));
  // Stride 1 needs only the size to divide: 8 % 8 == 0.
  EXPECT_TRUE(ValidateGrouping({1, 8}, 8, "x").ok());
  // 6 replicas, stride 3, size 2: 3 x 2 = 6 divides 6; group = r % 3.
  ASSERT_TRUE(ValidateGrouping({3, 2}, 6, "x").ok());
  EXPECT_THAT(GroupAssignment({3, 2}, 6), ElementsAreArray({0, 1, 2, 0, 1, 2}));
}

TEST(ReplicaGroupingTest, RefusesBadShardingAndInstances) {
  // 8 replicas on 3 processes.
  Replication r{8, 3, std::nullopt, false, std::nullopt};
  EXPECT_THAT(GatherGrouping(r).status().message(),
              HasSubstr("8 replicas do not divide over 3 instances"));
  // Shard over 3 of a group of 4.
  r = {8, 2, ReplicaGrouping{1, 4}, true, 3};
  EXPECT_THAT(GatherGrouping(r).status().message(),
              HasSubstr("--shard-over 3: must be at least 1 and divide the "
                        "group size 4"));
  r.shard_over = 0;
  EXPECT_FALSE(GatherGrouping(r).ok());
  // Group (2, 4) over 8 with shard over 4 is (2, 4) again: fine.
  r = {8, 2, ReplicaGrouping{2, 4}, true, 4};
  ASSERT_TRUE(GatherGrouping(r).ok());
  EXPECT_EQ(GatherGrouping(r)->stride, 2);
  // The grouping itself is checked first.
  r = {8, 2, ReplicaGrouping{1, 3}, true, std::nullopt};
  EXPECT_THAT(GatherGrouping(r).status().message(),
              HasSubstr("--replica-grouping 1,3: the group size 3"));
}

TEST(ReplicaGroupingTest, TableText) {
  // 1 instance, 4 replicas, group (2, 2) = r % 2, sharded over the group.
  Replication r{4, 1, ReplicaGrouping{2, 2}, true, std::nullopt};
  absl::StatusOr<std::vector<ReplicaRow>> rows = ReplicaTable(r);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(ReplicaTableText(r, *rows),
            "replica grouping: stride 2, size 2 over 4 replicas on 1 "
            "instances: 2 groups\n"
            "replica instance group gather shard\n"
            "      0        0     0      0     0\n"
            "      1        0     1      1     0\n"
            "      2        0     0      0     1\n"
            "      3        0     1      1     1\n"
            "groups: {0,2} {1,3}\n"
            "variables sharded over 2 replicas; all-gather groups (stride 2, "
            "size 2): {0,2} {1,3}\n");
}

}  // namespace
}  // namespace autoshard::pod
