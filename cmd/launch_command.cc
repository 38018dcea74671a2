// `autoshard launch`: the poprun command for a plan on a POD
// (pod/launch.h).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "cmd/commands.h"
#include "google/protobuf/util/json_util.h"
#include "graph/model_io.h"
#include "pod/launch.h"
#include "writers/emit.h"

namespace autoshard::cmd {
namespace {

absl::StatusOr<proto::Plan> ReadPlan(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot read the plan"));
  }
  const std::string text((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  proto::Plan plan;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  if (!google::protobuf::util::JsonStringToMessage(text, &plan, options).ok() ||
      plan.num_ipus() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": not a plan (the JSON that 'autoshard shard --plan' writes)"));
  }
  return plan;
}

absl::StatusOr<proto::Launch> BuildFromOptions(const LaunchCommandOptions& o,
                                               const proto::Plan& plan) {
  pod::LaunchOptions launch;
  ASSIGN_OR_RETURN(launch.hosts, pod::ParseHosts(o.hosts));
  launch.processes_per_host = o.processes_per_host;
  launch.partition = o.partition;
  launch.vipu_server = o.vipu_server;
  launch.env = o.env;
  launch.poprun_args = o.poprun_args;
  launch.mpi_global_args = o.mpi_global_args;
  // PopART's log level travels to every instance, as the reference
  // launcher passes it.
  if (const char* level = std::getenv("POPART_LOG_LEVEL");
      level != nullptr && *level != '\0') {
    launch.env.push_back(absl::StrCat("POPART_LOG_LEVEL=", level));
  }
  launch.program = o.program;
  return pod::BuildLaunch(plan, o.plan, launch);
}

}  // namespace

CLI::App* SetupLaunch(CLI::App& app, LaunchCommandOptions* o) {
  CLI::App* sub = app.add_subcommand(
      "launch",
      "print the poprun command that runs a plan's replicas over a POD's "
      "hosts (as an argv list and as a shell line)");
  sub->footer(
      "A plan that does not fit is refused (exit 3) unless --force.\n"
      "The plan gives the IPUs per replica (num_ipus) and, when 'shard "
      "--total-ipus' made it, the POD's IPUs and replicas (else one "
      "replica). Checked: IPUs % IPUs per replica == 0, replicas % "
      "(hosts x --nproc-per-host) == 0, host names well-formed.\n"
      "The program learns its instance and replicas from popdist "
      "(popdist.getInstanceIndex(), getReplicaIndexOffset(), ...). More than "
      "64 IPUs (a POD64 per IPU-Link domain) add --num-ilds.\n"
      "Examples:\n"
      "  autoshard launch plan.json --hosts pod-a,pod-b --nproc-per-host 2 "
      "--partition p256 --vipu-server vipu -- python3 run.py --steps 10\n"
      "  autoshard launch plan.json --hosts pod-a --partition p16 --env "
      "PYTHONPATH --env 'POPLAR_ENGINE_OPTIONS={\"autoReport.all\":\"true\"}' "
      "--json launch.json -- python3 run.py\n");
  sub->add_option("plan", o->plan, "a plan JSON ('autoshard shard --plan')")
      ->required();
  sub->add_option("--hosts", o->hosts, "the hosts, comma-separated: a,b")
      ->required();
  sub->add_option("--nproc-per-host", o->processes_per_host,
                  "poprun instances (processes) per host (default 1)");
  sub->add_option("--partition", o->partition, "the V-IPU partition's name")
      ->required();
  sub->add_option("--vipu-server", o->vipu_server,
                  "the V-IPU server's host (default: poprun's)");
  sub->add_option("--env", o->env,
                  "NAME or NAME=VALUE to pass to every instance (mpirun -x; "
                  "repeatable); VALUE may hold any character (JSON too): "
                  "it is set in poprun's environment")
      ->allow_extra_args(false);
  sub->add_option("--poprun-arg", o->poprun_args,
                  "one more poprun option, passed as is (repeatable; write "
                  "--poprun-arg=--num-ilds=2); --flag=VALUE replaces "
                  "autoshard's default of that flag (e.g. "
                  "--poprun-arg=--update-partition=yes)")
      ->allow_extra_args(false);
  sub->add_option("--mpi-global-args", o->mpi_global_args,
                  "poprun's --mpi-global-args, passed as is (e.g. "
                  "'--tag-output --allow-run-as-root')");
  sub->add_flag("--force", o->force,
                "print the launch of a plan that does not fit (else exit 3)");
  sub->add_option(
      "--json", o->json_path,
      "also write the launch as JSON (share/autoshard/launch.proto) to "
      "this file");
  sub->add_flag("-q,--quiet", o->quiet, kQuietHelp);
  sub->add_option("program", o->program,
                  "after -- (required): the program and its arguments each "
                  "instance runs");
  return sub;
}

int RunLaunch(const LaunchCommandOptions& o) {
  absl::StatusOr<proto::Plan> plan = ReadPlan(o.plan);
  if (!plan.ok()) return ReportError(plan.status());
  if (!plan->fits() && !o.force) {
    std::cerr << "autoshard: error: " << o.plan << ": the plan does not fit "
              << plan->device() << ": "
              << (plan->no_fit_reason().empty() ? plan->out_of_memory()
                                                : plan->no_fit_reason())
              << " (--force prints its launch anyway; exit code 3)\n";
    return kExitNoFit;
  }
  absl::StatusOr<proto::Launch> launch = BuildFromOptions(o, *plan);
  if (!launch.ok()) return ReportError(launch.status());
  if (!o.json_path.empty()) {
    std::error_code ec;
    if (std::filesystem::equivalent(o.json_path, o.plan, ec)) {
      return ReportError(absl::InvalidArgumentError(absl::StrCat(
          "--json ", o.json_path, ": is the plan; refusing to overwrite it")));
    }
    if (absl::Status s = WriteFileAtomically(o.json_path, ProtoJson(*launch));
        !s.ok()) {
      return ReportError(absl::InvalidArgumentError(s.message()));
    }
  }
  if (!o.quiet) std::cout << pod::LaunchText(*launch);
  return kExitOk;
}

}  // namespace autoshard::cmd
