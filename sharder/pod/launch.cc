#include "sharder/pod/launch.h"

#include <algorithm>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "graph/status_macros.h"
#include "sharder/pod/replica_grouping.h"

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

// NAME or NAME=VALUE for mpirun's -x; poprun splits --mpi-local-args at
// spaces, so VALUE holds no space or quote.
absl::Status CheckEnv(const std::string& entry) {
  const size_t eq = entry.find('=');
  const std::string name = entry.substr(0, eq);
  const bool name_ok =
      !name.empty() &&
      !absl::ascii_isdigit(static_cast<unsigned char>(name[0])) &&
      std::all_of(name.begin(), name.end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
      });
  const std::string value = eq == std::string::npos ? "" : entry.substr(eq + 1);
  const bool value_ok = value.find_first_of(" \t\n'\"\\") == std::string::npos;
  if (!name_ok || !value_ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--env '", entry,
        "': expected NAME or NAME=VALUE (NAME of letters, digits and '_'; "
        "VALUE without spaces or quotes)"));
  }
  return absl::OkStatus();
}

std::string Endpoint(const std::string& host) {
  return absl::StrCat(host, ":", kEndpointPort);
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
        "the ", replicas, " replicas are not a multiple of the ", processes,
        " processes (hosts x --nproc-per-host): each process runs the same "
        "number of replicas"));
  }
  return absl::OkStatus();
}

void AddArgv(const proto::Launch& l, const LaunchOptions& o,
             const std::vector<std::string>& endpoints, proto::Launch* out) {
  auto add = [out](std::string a) { out->add_argv(std::move(a)); };
  add("poprun");
  add(absl::StrCat("--num-instances=", l.instances()));
  add(absl::StrCat("--num-replicas=", l.replicas()));
  add(absl::StrCat("--ipus-per-replica=", l.ipus_per_replica()));
  add(absl::StrCat("--host=", absl::StrJoin(o.hosts, ",")));
  add(absl::StrCat("--vipu-partition=", o.partition));
  if (!o.vipu_server.empty())
    add(absl::StrCat("--vipu-server-host=", o.vipu_server));
  add("--update-partition=no");
  add(absl::StrCat("--vipu-server-timeout=", kVipuServerTimeoutS));
  add("--print-topology=yes");
  add("--numa-aware=yes");
  std::string global = absl::StrCat(
      "--mpi-local-args=-x AUTOSHARD_NUM_INSTANCES=", l.instances(),
      " -x AUTOSHARD_ENDPOINTS=", absl::StrJoin(endpoints, ","));
  for (const std::string& e : o.env) absl::StrAppend(&global, " -x ", e);
  add(global);
  for (const proto::LaunchInstance& i : l.instance_table()) {
    add(absl::StrCat("--instance-mpi-local-args=", i.rank(),
                     ":-x AUTOSHARD_INSTANCE_ID=", i.rank(),
                     " -x AUTOSHARD_CURRENT_ENDPOINT=", i.endpoint(),
                     " -x AUTOSHARD_RANK_IN_HOST=", i.rank_in_host()));
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
  std::vector<std::string> endpoints;
  for (const std::string& h : o.hosts) endpoints.push_back(Endpoint(h));
  const int per_instance = replicas / processes;
  for (int i = 0; i < processes; ++i) {
    proto::LaunchInstance* in = l.add_instance_table();
    in->set_rank(i);
    in->set_host(o.hosts[i / o.processes_per_host]);
    in->set_endpoint(endpoints[i / o.processes_per_host]);
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
  AddArgv(l, o, endpoints, &l);
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
      "POD: %d IPUs = %d replicas x %d IPUs per replica; %d instances "
      "(%d hosts x %d processes), %d replicas each\n",
      l.total_ipus(), l.replicas(), l.ipus_per_replica(), l.instances(),
      l.hosts_size(), l.processes_per_host(), l.replicas() / l.instances());
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
