#include "pod/launch.h"

#include <algorithm>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/plural.h"
#include "base/status_macros.h"
#include "pod/replica_grouping.h"

namespace autoshard::pod {
namespace {

bool IsNameChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' ||
         c == '.' || c == '_';
}

// Letters, digits, '-', '.', '_'; not starting with '-' (poprun would read
// an option) or '.'; at most 253 characters (a DNS name's limit).
absl::Status CheckName(const std::string& name, const std::string& what) {
  if (name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is empty"));
  }
  if (name.size() > 253 || name[0] == '-' || name[0] == '.' ||
      !std::all_of(name.begin(), name.end(), IsNameChar)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " '", name,
                     "' is not a name (letters, digits, '-', '.', '_', not "
                     "starting with '-' or '.')"));
  }
  return absl::OkStatus();
}

// NAME or NAME=VALUE for mpirun's -x; VALUE is anything (it travels in
// poprun's environment, Note [poprun command]) but a NUL.
absl::Status CheckEnv(const std::string& entry) {
  const size_t eq = entry.find('=');
  const std::string name = entry.substr(0, eq);
  const bool name_ok =
      !name.empty() &&
      !absl::ascii_isdigit(static_cast<unsigned char>(name[0])) &&
      std::all_of(name.begin(), name.end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
      });
  if (!name_ok || entry.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--env '", entry,
        "': expected NAME or NAME=VALUE (NAME of letters, digits and '_', "
        "not starting with a digit)"));
  }
  return absl::OkStatus();
}

// Each --poprun-arg is one option: it starts with '-'.
absl::Status CheckPoprunArg(const std::string& arg) {
  if (arg.size() < 2 || arg[0] != '-') {
    return absl::InvalidArgumentError(absl::StrCat(
        "--poprun-arg '", arg,
        "': expected one poprun option, e.g. --poprun-arg=--num-ilds=2"));
  }
  return absl::OkStatus();
}

// "--flag" of "--flag=value" ("" without '=').
std::string FlagOf(const std::string& arg) {
  const size_t eq = arg.find('=');
  return eq == std::string::npos ? "" : arg.substr(0, eq);
}

// The replica grouping the plan records, if any.
std::optional<ReplicaGrouping> PlanGrouping(const proto::Plan& plan) {
  const proto::Replication& r = plan.replication();
  if (r.grouping_size() < 1) return std::nullopt;
  return ReplicaGrouping{std::max(1, r.grouping_stride()), r.grouping_size()};
}

// The checks of Note [poprun command] on the counts.
absl::Status CheckCounts(int total, int k, int processes) {
  if (k < 1 || total < 1 || total % k != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the POD's ", total, " IPUs are not a multiple of the plan's ", k,
        " IPUs per replica"));
  }
  const int replicas = total / k;
  if (replicas % processes != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the ", Plural(replicas, "replica is", "replicas are"),
        " not a multiple of the ", Plural(processes, "process", "processes"),
        " (hosts x --nproc-per-host): each process runs the same number of "
        "replicas"));
  }
  return absl::OkStatus();
}

// Note [poprun command]'s argv of launch `l` with options `o`.
void AddArgv(const proto::Launch& l, const LaunchOptions& o,
             proto::Launch* out) {
  auto add = [out](std::string a) { out->add_argv(std::move(a)); };
  std::vector<std::string> names;  // the -x NAMEs
  for (const std::string& e : o.env) {
    names.push_back(e.substr(0, e.find('=')));
    if (e.find('=') == std::string::npos) continue;
    if (out->argv_size() == 0) add("env");
    add(e);
  }
  add("poprun");
  std::set<std::string> replaced;
  for (const std::string& a : o.poprun_args)
    if (!FlagOf(a).empty()) replaced.insert(FlagOf(a));
  auto fixed = [&](std::string a) {
    if (!replaced.count(FlagOf(a))) add(std::move(a));
  };
  fixed(absl::StrCat("--num-instances=", l.instances()));
  fixed(absl::StrCat("--num-replicas=", l.replicas()));
  fixed(absl::StrCat("--ipus-per-replica=", l.ipus_per_replica()));
  fixed(absl::StrCat("--host=", absl::StrJoin(o.hosts, ",")));
  fixed(absl::StrCat("--vipu-partition=", o.partition));
  if (!o.vipu_server.empty())
    fixed(absl::StrCat("--vipu-server-host=", o.vipu_server));
  // One IPU-Link domain is a POD64: a larger partition spans several.
  if (l.total_ipus() > kIpusPerIld)
    fixed(absl::StrCat("--num-ilds=",
                       (l.total_ipus() + kIpusPerIld - 1) / kIpusPerIld));
  fixed("--update-partition=no");
  fixed(absl::StrCat("--vipu-server-timeout=", kVipuServerTimeoutS));
  fixed("--print-topology=yes");
  fixed("--numa-aware=yes");
  for (const std::string& a : o.poprun_args) add(a);
  if (!o.mpi_global_args.empty())
    add(absl::StrCat("--mpi-global-args=", o.mpi_global_args));
  if (!names.empty()) {
    std::string local = "--mpi-local-args=";
    for (size_t i = 0; i < names.size(); ++i)
      absl::StrAppend(&local, i > 0 ? " " : "", "-x ", names[i]);
    add(local);
  }
  for (const std::string& a : o.program) add(a);
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ParseHosts(const std::string& hosts) {
  std::string compact = hosts;
  compact.erase(std::remove_if(compact.begin(), compact.end(),
                               [](char c) { return c == ' ' || c == '\t'; }),
                compact.end());
  if (compact.empty()) return absl::InvalidArgumentError("--hosts is empty");
  std::vector<std::string> out = absl::StrSplit(compact, ',');
  std::set<std::string> seen;
  for (size_t i = 0; i < out.size(); ++i) {
    RETURN_IF_ERROR(
        CheckName(out[i], absl::StrCat("--hosts '", hosts, "': host ", i + 1)));
    if (!seen.insert(out[i]).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--hosts '", hosts, "': host '", out[i], "' is named twice"));
    }
  }
  return out;
}

absl::StatusOr<proto::Launch> BuildLaunch(const proto::Plan& plan,
                                          const std::string& plan_path,
                                          const LaunchOptions& o) {
  if (o.hosts.empty()) return absl::InvalidArgumentError("--hosts is empty");
  for (const std::string& h : o.hosts) RETURN_IF_ERROR(CheckName(h, "a host"));
  if (o.processes_per_host < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--nproc-per-host must be at least 1, got ", o.processes_per_host));
  }
  RETURN_IF_ERROR(CheckName(o.partition, "--partition"));
  if (!o.vipu_server.empty())
    RETURN_IF_ERROR(CheckName(o.vipu_server, "--vipu-server"));
  for (const std::string& e : o.env) RETURN_IF_ERROR(CheckEnv(e));
  for (const std::string& a : o.poprun_args) RETURN_IF_ERROR(CheckPoprunArg(a));
  if (o.program.empty()) {
    return absl::InvalidArgumentError(
        "no program: give the program each instance runs after --, e.g. "
        "autoshard launch plan.json --hosts a --partition p -- python3 "
        "run.py");
  }
  const int k = plan.num_ipus();
  const int total =
      plan.has_replication() ? plan.replication().total_ipus() : k;
  const int processes = static_cast<int>(o.hosts.size()) * o.processes_per_host;
  RETURN_IF_ERROR(CheckCounts(total, k, processes));
  const int replicas = total / k;
  Replication replication{replicas, processes, PlanGrouping(plan), false,
                          std::nullopt};
  ASSIGN_OR_RETURN(std::vector<ReplicaRow> rows, ReplicaTable(replication));

  proto::Launch l;
  l.set_plan(plan_path);
  l.set_total_ipus(total);
  l.set_ipus_per_replica(k);
  l.set_replicas(replicas);
  l.set_instances(processes);
  for (const std::string& h : o.hosts) l.add_hosts(h);
  l.set_processes_per_host(o.processes_per_host);
  l.set_partition(o.partition);
  l.set_vipu_server(o.vipu_server);
  const int per_instance = replicas / processes;
  for (int i = 0; i < processes; ++i) {
    proto::LaunchInstance* in = l.add_instance_table();
    in->set_rank(i);
    in->set_host(o.hosts[i / o.processes_per_host]);
    in->set_rank_in_host(i % o.processes_per_host);
    for (int r = i * per_instance; r < (i + 1) * per_instance; ++r)
      in->add_replicas(r);
  }
  for (const ReplicaRow& row : rows) {
    proto::LaunchReplica* r = l.add_replica_table();
    r->set_replica(row.replica);
    r->set_instance(row.instance);
    r->set_host(l.instance_table(row.instance).host());
    for (int s = 0; s < k; ++s) {
      r->add_ipus(row.replica * k + s);
      r->add_pipeline_stages(s);
    }
    r->set_group(row.group);
  }
  // Issue 30: where the weights live travels to every instance.
  LaunchOptions with_weights = o;
  if (plan.has_weight_locations() &&
      !plan.weight_locations().chosen().empty()) {
    const proto::WeightLocations& w = plan.weight_locations();
    l.set_weights_location(w.chosen());
    l.set_shard_over(std::max(w.shard_over(), 1));
    l.set_retrieval_mode(w.retrieval_mode());
    if (w.chosen() == "remote") {
      with_weights.env.push_back(
          absl::StrCat("AUTOSHARD_WEIGHTS_LOCATION=", w.chosen()));
      with_weights.env.push_back(
          absl::StrCat("AUTOSHARD_SHARD_OVER=", l.shard_over()));
      with_weights.env.push_back(
          absl::StrCat("AUTOSHARD_RETRIEVAL_MODE=", w.retrieval_mode()));
    }
  }
  AddArgv(l, with_weights, &l);
  l.set_shell_line(ShellLine({l.argv().begin(), l.argv().end()}));
  return l;
}

std::string ShellQuote(const std::string& arg) {
  const bool plain =
      !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
               std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
      });
  if (plain) return arg;
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string ShellLine(const std::vector<std::string>& argv) {
  std::vector<std::string> quoted;
  for (const std::string& a : argv) quoted.push_back(ShellQuote(a));
  return absl::StrJoin(quoted, " ");
}

std::string LaunchText(const proto::Launch& l) {
  std::string out = absl::StrFormat(
      "POD: %d IPUs = %s x %s; %s (%s x %s), %s each\n", l.total_ipus(),
      Plural(l.replicas(), "replica"),
      Plural(l.ipus_per_replica(), "IPU per replica", "IPUs per replica"),
      Plural(l.instances(), "instance"), Plural(l.hosts_size(), "host"),
      Plural(l.processes_per_host(), "process", "processes"),
      Plural(l.replicas() / l.instances(), "replica"));
  absl::StrAppend(&out, "shell:\n", l.shell_line(), "\nargv:\n");
  for (const std::string& a : l.argv()) absl::StrAppend(&out, "  ", a, "\n");
  // Pipeline stage s of a replica runs on its s-th IPU.
  absl::StrAppend(&out, "replica instance host IPUs (stages 0..",
                  l.ipus_per_replica() - 1, ") group\n");
  for (const proto::LaunchReplica& r : l.replica_table()) {
    const int first = r.ipus(0), last = r.ipus(r.ipus_size() - 1);
    absl::StrAppendFormat(
        &out, "%7d %8d %s %s %d\n", r.replica(), r.instance(), r.host(),
        first == last ? absl::StrCat(first) : absl::StrCat(first, "-", last),
        r.group());
  }
  return out;
}

}  // namespace autoshard::pod
