// The poprun command that runs a plan's replicas over a POD (DESIGN.md §7),
// as PaddlePaddle's IPU launch controller builds it (seed 002): hosts and
// processes per host give the instances; the plan gives IPUs per replica
// and replicas; a V-IPU partition and server say where the IPUs are.
//
// Note [poprun command]
// With P = hosts x processes per host instances, R replicas and k IPUs per
// replica (R x k = the POD's IPUs):
//   poprun --num-instances=P --num-replicas=R --ipus-per-replica=k
//          --host=H1,H2 --vipu-partition=NAME [--vipu-server-host=S]
//          --update-partition=no --vipu-server-timeout=120
//          --print-topology=yes --numa-aware=yes
//          --mpi-local-args=-x AUTOSHARD_NUM_INSTANCES=P
//                           -x AUTOSHARD_ENDPOINTS=H1:8090,H2:8090 [-x ENV]
//          --instance-mpi-local-args=i:-x AUTOSHARD_INSTANCE_ID=i
//              -x AUTOSHARD_CURRENT_ENDPOINT=Hj:8090 -x AUTOSHARD_RANK_IN_HOST=
//              i % processes per host        (one per instance i)
//          PROGRAM ARGS...
// Instance i runs on host i / processes per host and holds replicas
// i x R/P .. (i+1) x R/P - 1; replica r uses the POD's IPUs r x k .. r x k +
// k - 1, pipeline stage s on IPU r x k + s. The reference launcher's checks
// hold: the POD's IPUs % k == 0 and R % P == 0.
#ifndef AUTOSHARD_SHARDER_POD_LAUNCH_H_
#define AUTOSHARD_SHARDER_POD_LAUNCH_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/launch.pb.h"
#include "proto/plan.pb.h"

namespace autoshard::pod {

// The port of each instance's endpoint (the reference launcher's).
inline constexpr int kEndpointPort = 8090;
// Seconds poprun waits for the V-IPU server (the reference launcher's).
inline constexpr int kVipuServerTimeoutS = 120;

struct LaunchOptions {
  std::vector<std::string> hosts;  // at least one; see ParseHosts
  int processes_per_host = 1;      // >= 1
  std::string partition;           // V-IPU partition, [A-Za-z0-9_.-]+
  std::string vipu_server;         // host name or address; empty: omitted
  // Passed to every instance with mpirun's -x: NAME (its value in the
  // launching shell) or NAME=VALUE (no spaces or quotes in VALUE).
  std::vector<std::string> env;
  std::vector<std::string> program;  // PROGRAM ARGS...; may be empty
};

// "a,b" -> {"a", "b"} (spaces dropped). Errors (InvalidArgument): no host,
// an empty name ("a,,b"), a name that is not a host name or address
// (letters, digits, '-', '.', '_', not starting with '-' or '.'), a host
// named twice.
absl::StatusOr<std::vector<std::string>> ParseHosts(const std::string& hosts);

// The launch of `plan` (its num_ipus are the IPUs per replica; its
// replication, when set, the POD's IPUs and the grouping; else one replica)
// per Note [poprun command]. `plan_path` is recorded as the plan's name.
// Errors (InvalidArgument, one line naming the rule): the POD's IPUs not a
// multiple of the IPUs per replica, replicas not a multiple of the
// processes, fewer replicas than processes, bad hosts, partition, server
// or environment entries.
absl::StatusOr<proto::Launch> BuildLaunch(const proto::Plan& plan,
                                          const std::string& plan_path,
                                          const LaunchOptions& options);

// `arg` quoted for /bin/sh: as it is when it holds only characters the
// shell never interprets ([A-Za-z0-9_@%+=:,./-]), else in single quotes
// (a ' as '\'').
std::string ShellQuote(const std::string& arg);
// The arguments quoted and joined by spaces.
std::string ShellLine(const std::vector<std::string>& argv);

// The launch as text: the shell line, the argv one per line, the
// instances, then the replica -> instance -> host -> IPUs -> stages table.
std::string LaunchText(const proto::Launch& launch);

}  // namespace autoshard::pod

#endif  // AUTOSHARD_SHARDER_POD_LAUNCH_H_
