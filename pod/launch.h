// The poprun command that runs a plan's replicas over a POD (DESIGN.md §7):
// hosts and processes per host give the instances; the plan gives IPUs per
// replica and replicas; a V-IPU partition and server say where the IPUs
// are. The shape follows PaddlePaddle's IPU launch controller (seed 002),
// without its PaddlePaddle-only conventions (endpoints on port 8090).
//
// Note [poprun command]
// With P = hosts x processes per host instances, R replicas and k IPUs per
// replica (R x k = N, the POD's IPUs):
//   [env NAME=VALUE ...]                 (each --env NAME=VALUE)
//   poprun --num-instances=P --num-replicas=R --ipus-per-replica=k
//          --host=H1,H2 --vipu-partition=NAME [--vipu-server-host=S]
//          [--num-ilds=ceil(N / 64)]     (when N > 64)
//          --update-partition=no --vipu-server-timeout=300
//          --print-topology=yes --numa-aware=yes
//          [--poprun-arg ARG ...]        (an ARG --flag=... replaces the
//                                         default of that flag above)
//          [--mpi-global-args=ARGS]      (as given)
//          [--mpi-local-args=-x NAME ...] (one per --env)
//          PROGRAM ARGS...
// The flags' meaning and values, from Graphcore's PopRun user guide and
// graphcore/examples' launch scripts (as the lead looked them up, issue 32):
// an IPU-Link domain (ILD) is a POD64, and partitions of more IPUs are
// launched with --num-ilds (POD128: 2, POD256: 4); --update-partition=no is
// poprun's default, said outright (autoshard never resizes a partition);
// --vipu-server-timeout is 120 s by default, the examples use 300 to 600 at
// POD scale, autoshard 300. The program learns its instance and replicas
// from popdist (popdist.getInstanceIndex(), getNumInstances(),
// getReplicaIndexOffset(), getNumLocalReplicas()), which reads what poprun
// passes: autoshard adds no variables of its own. poprun splits
// --mpi-local-args at spaces, so a value never goes there: NAME=VALUE is
// set in poprun's environment (the env prefix, quoted for the shell) and
// mpirun's "-x NAME" exports it to every instance, whatever its characters
// (JSON for POPLAR_ENGINE_OPTIONS).
// Instance i runs on host i / processes per host and holds replicas
// i x R/P .. (i+1) x R/P - 1; replica r uses the POD's IPUs r x k .. r x k +
// k - 1, pipeline stage s on IPU r x k + s. The reference launcher's checks
// hold: N % k == 0 and R % P == 0.
#ifndef AUTOSHARD_POD_LAUNCH_H_
#define AUTOSHARD_POD_LAUNCH_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/launch.pb.h"
#include "proto/plan.pb.h"

namespace autoshard::pod {

// Seconds poprun waits for the V-IPU server (Note [poprun command]).
inline constexpr int kVipuServerTimeoutS = 300;
// IPUs of one IPU-Link domain, a POD64 (Note [poprun command]).
inline constexpr int kIpusPerIld = 64;

struct LaunchOptions {
  std::vector<std::string> hosts;  // at least one; see ParseHosts
  int processes_per_host = 1;      // >= 1
  std::string partition;           // V-IPU partition, [A-Za-z0-9_.-]+
  std::string vipu_server;         // host name or address; empty: omitted
  // Passed to every instance with mpirun's -x: NAME (its value in the
  // launching shell) or NAME=VALUE (any VALUE; Note [poprun command]).
  std::vector<std::string> env;
  // Further poprun options, each one argument starting with '-'; one of
  // the form --flag=... replaces the default of that flag.
  std::vector<std::string> poprun_args;
  std::string mpi_global_args;       // poprun's --mpi-global-args; may be ""
  std::vector<std::string> program;  // PROGRAM ARGS...; at least one
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
// processes, fewer replicas than processes, bad hosts, partition, server,
// environment entries or poprun arguments, no program.
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

#endif  // AUTOSHARD_POD_LAUNCH_H_
