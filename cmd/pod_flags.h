// The CLI's POD flags (issue 15; DESIGN.md §7): `shard --total-ipus N
// [--max-ipus M] [--replica-grouping STRIDE,SIZE] [--shard-over N|group]
// [--batch-size auto|B1,B2,...]` and the `launch` subcommand.
#ifndef AUTOSHARD_CMD_POD_FLAGS_H_
#define AUTOSHARD_CMD_POD_FLAGS_H_

#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "sharder/plan_pod.h"

namespace autoshard::cmd {

// shard's POD flags, as given.
struct PodFlags {
  int total_ipus = 0;  // --total-ipus N; 0: one replica, no replication
  std::string replica_grouping;  // --replica-grouping STRIDE,SIZE
  std::string shard_over;        // --shard-over N, or "group"
};

// Registers --total-ipus, --replica-grouping, --shard-over into `flags`,
// and --max-ipus into `max_ipus` (the library's Options::max_ipus).
void AddPodFlags(CLI::App* sub, PodFlags* flags, int* max_ipus);

// The POD options of `flags` with --batch-size's text `batch_spec` (a
// count, auto or a list), or nullopt without --total-ipus. Errors
// (InvalidArgument naming the flag): a grouping, sharding, or a batch list
// without --total-ipus, and what ParseReplicaGrouping / ParseBatchSizes
// refuse.
absl::StatusOr<std::optional<pod::PodOptions>> PodOptionsOf(
    const PodFlags& flags, const std::string& batch_spec);

// `autoshard launch PLAN.json --hosts a,b --nproc-per-host P --partition
// NAME [--vipu-server HOST] [--env NAME[=VALUE]]... [--json FILE]
// [-- PROGRAM ARGS...]` (pod/launch.h).
struct LaunchCommandOptions {
  std::string plan;  // a plan JSON that shard --plan wrote
  std::string hosts;
  int processes_per_host = 1;
  std::string partition;
  std::string vipu_server;
  std::vector<std::string> env;
  std::vector<std::string> poprun_args;  // --poprun-arg ARG (repeatable)
  std::string mpi_global_args;           // --mpi-global-args 'ARGS'
  std::string json_path;  // --json FILE: the launch file (proto/launch.proto)
  std::vector<std::string> program;
  bool force = false;  // --force: launch a plan that does not fit
  bool quiet = false;
};
CLI::App* SetupLaunch(CLI::App& app, LaunchCommandOptions* options);
int RunLaunch(const LaunchCommandOptions& options);

}  // namespace autoshard::cmd

#endif  // AUTOSHARD_CMD_POD_FLAGS_H_
