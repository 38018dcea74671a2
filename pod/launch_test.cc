#include "pod/launch.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace autoshard::pod {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A plan of k IPUs per replica on a POD of `total` IPUs.
proto::Plan PodPlan(int k, int total) {
  proto::Plan plan;
  plan.set_num_ipus(k);
  plan.mutable_replication()->set_total_ipus(total);
  plan.mutable_replication()->set_ipus_per_replica(k);
  plan.mutable_replication()->set_replicas(total / k);
  return plan;
}

LaunchOptions TwoHosts(int processes_per_host) {
  LaunchOptions o;
  o.hosts = {"pod-a", "pod-b"};
  o.processes_per_host = processes_per_host;
  o.partition = "p16";
  o.vipu_server = "vipu.local";
  o.program = {"python3", "run.py", "--name", "it's"};
  return o;
}

TEST(LaunchTest, PoprunCommandForSixteenIpus) {
  // 16 IPUs / 4 per replica = 4 replicas; 2 hosts x 2 processes = 4
  // instances, one replica each; replica r on IPUs 4r .. 4r + 3.
  absl::StatusOr<proto::Launch> l =
      BuildLaunch(PodPlan(4, 16), "plan.json", TwoHosts(2));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_THAT(
      l->argv(),
      ElementsAre("poprun", "--num-instances=4", "--num-replicas=4",
                  "--ipus-per-replica=4", "--host=pod-a,pod-b",
                  "--vipu-partition=p16", "--vipu-server-host=vipu.local",
                  "--update-partition=no", "--vipu-server-timeout=300",
                  "--print-topology=yes", "--numa-aware=yes",
                  // No variables of autoshard's: the program asks popdist.
                  "python3", "run.py", "--name", "it's"));
  ASSERT_EQ(l->replica_table_size(), 4);
  const proto::LaunchReplica& r2 = l->replica_table(2);
  EXPECT_EQ(r2.instance(), 2);
  EXPECT_EQ(r2.host(), "pod-b");
  EXPECT_THAT(r2.ipus(), ElementsAre(8, 9, 10, 11));
  EXPECT_THAT(r2.pipeline_stages(), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(l->instance_table(3).replicas(), ElementsAre(3));
  // The shell line quotes what the shell would split or expand.
  EXPECT_THAT(l->shell_line(),
              ::testing::StartsWith("poprun --num-instances=4 "));
  EXPECT_THAT(l->shell_line(), HasSubstr(" python3 run.py --name 'it'\\''s'"));
}

TEST(LaunchTest, ReplicasSplitOverInstancesAndGroups) {
  // 8 IPUs, 1 per replica: 8 replicas over 2 hosts x 1 process = 4 each.
  proto::Plan plan = PodPlan(1, 8);
  // Grouping (stride 2, size 4): group = r % 2.
  plan.mutable_replication()->set_grouping_stride(2);
  plan.mutable_replication()->set_grouping_size(4);
  absl::StatusOr<proto::Launch> l = BuildLaunch(plan, "p", TwoHosts(1));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_THAT(l->instance_table(1).replicas(), ElementsAre(4, 5, 6, 7));
  EXPECT_EQ(l->replica_table(5).host(), "pod-b");
  EXPECT_EQ(l->replica_table(5).group(), 1);
  EXPECT_EQ(l->replica_table(6).group(), 0);
}

TEST(LaunchTest, RefusesCountsTheLauncherRefuses) {
  // 18 % 4 != 0.
  EXPECT_THAT(
      BuildLaunch(PodPlan(4, 18), "p", TwoHosts(1)).status().message(),
      HasSubstr("the POD's 18 IPUs are not a multiple of the plan's 4"));
  // 16 / 4 = 4 replicas over 2 x 3 = 6 processes.
  EXPECT_THAT(
      BuildLaunch(PodPlan(4, 16), "p", TwoHosts(3)).status().message(),
      HasSubstr("the 4 replicas are not a multiple of the 6 processes"));
  // A plan without replication is one replica: 2 processes are too many.
  proto::Plan one;
  one.set_num_ipus(2);
  EXPECT_THAT(BuildLaunch(one, "p", TwoHosts(1)).status().message(),
              HasSubstr("the 1 replica is not a multiple of the 2 processes"));
  LaunchOptions o = TwoHosts(1);
  o.partition = "";
  EXPECT_THAT(BuildLaunch(PodPlan(1, 2), "p", o).status().message(),
              HasSubstr("--partition is empty"));
  o = TwoHosts(1);
  o.env = {"A B=1"};
  EXPECT_FALSE(BuildLaunch(PodPlan(1, 2), "p", o).ok());
  o.env = {"1X=1"};
  EXPECT_FALSE(BuildLaunch(PodPlan(1, 2), "p", o).ok());
  o.env.clear();
  o.poprun_args = {"num-ilds=2"};
  EXPECT_THAT(BuildLaunch(PodPlan(1, 2), "p", o).status().message(),
              HasSubstr("expected one poprun option"));
  o = TwoHosts(1);
  o.program.clear();
  EXPECT_THAT(BuildLaunch(PodPlan(1, 2), "p", o).status().message(),
              HasSubstr("no program"));
}

TEST(LaunchTest, AnyEnvironmentValueTravelsInPoprunsEnvironment) {
  LaunchOptions o = TwoHosts(1);
  o.env = {"PATH", "POPLAR_ENGINE_OPTIONS={\"a\": \"it's\"}", "X=1"};
  absl::StatusOr<proto::Launch> l = BuildLaunch(PodPlan(1, 2), "p", o);
  ASSERT_TRUE(l.ok()) << l.status();
  // env NAME=VALUE ... poprun ...; mpirun's -x NAME for each.
  EXPECT_THAT(
      std::vector<std::string>(l->argv().begin(), l->argv().begin() + 4),
      ElementsAre("env", "POPLAR_ENGINE_OPTIONS={\"a\": \"it's\"}", "X=1",
                  "poprun"));
  EXPECT_THAT(l->argv(),
              ::testing::Contains(
                  "--mpi-local-args=-x PATH -x POPLAR_ENGINE_OPTIONS -x X"));
  EXPECT_THAT(l->shell_line(),
              ::testing::StartsWith(
                  "env 'POPLAR_ENGINE_OPTIONS={\"a\": \"it'\\''s\"}' X=1 "
                  "poprun "));
}

TEST(LaunchTest, PoprunArgumentsPassThroughAndReplaceDefaults) {
  LaunchOptions o = TwoHosts(1);
  o.poprun_args = {"--num-ilds=2", "--update-partition=yes"};
  o.mpi_global_args = "--tag-output --allow-run-as-root";
  absl::StatusOr<proto::Launch> l = BuildLaunch(PodPlan(1, 2), "p", o);
  ASSERT_TRUE(l.ok()) << l.status();
  const std::vector<std::string> argv(l->argv().begin(), l->argv().end());
  EXPECT_THAT(argv,
              ::testing::Not(::testing::Contains("--update-partition=no")));
  // After the defaults, in order: the user's poprun options, then the MPI
  // global arguments, then the local ones.
  const auto at = std::find(argv.begin(), argv.end(), "--num-ilds=2");
  ASSERT_NE(at, argv.end());
  EXPECT_EQ(*(at - 1), "--numa-aware=yes");
  EXPECT_EQ(*(at + 1), "--update-partition=yes");
  EXPECT_EQ(*(at + 2), "--mpi-global-args=--tag-output --allow-run-as-root");
}

TEST(LaunchTest, MoreThanAPod64SpansIpuLinkDomains) {
  auto has_ilds = [](int total) -> std::string {
    LaunchOptions o = TwoHosts(1);
    absl::StatusOr<proto::Launch> l = BuildLaunch(PodPlan(2, total), "p", o);
    EXPECT_TRUE(l.ok()) << l.status();
    for (const std::string& a : l->argv())
      if (a.rfind("--num-ilds=", 0) == 0) return a;
    return "";
  };
  EXPECT_EQ(has_ilds(64), "");  // one POD64: poprun's default
  EXPECT_EQ(has_ilds(128), "--num-ilds=2");
  EXPECT_EQ(has_ilds(256), "--num-ilds=4");
  EXPECT_EQ(has_ilds(192), "--num-ilds=3");
}

TEST(LaunchTest, ParsesHosts) {
  ASSERT_TRUE(ParseHosts("a, b ,c").ok());
  EXPECT_THAT(*ParseHosts("a, b ,c"), ElementsAre("a", "b", "c"));
  EXPECT_THAT(ParseHosts("a,,b").status().message(),
              HasSubstr("host 2 is empty"));
  EXPECT_THAT(ParseHosts("").status().message(), HasSubstr("--hosts is empty"));
  EXPECT_THAT(ParseHosts("a,-x").status().message(),
              HasSubstr("host 2 '-x' is not a name"));
  EXPECT_THAT(ParseHosts("a;rm,b").status().message(), HasSubstr("not a name"));
  EXPECT_THAT(ParseHosts("a,a").status().message(),
              HasSubstr("host 'a' is named twice"));
  EXPECT_TRUE(ParseHosts("10.0.0.1,host_2.example").ok());
}

TEST(LaunchTest, ShellQuote) {
  EXPECT_EQ(ShellQuote("--host=a,b"), "--host=a,b");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("$HOME"), "'$HOME'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellLine({"echo", "a b", "c"}), "echo 'a b' c");
}

}  // namespace
}  // namespace autoshard::pod
