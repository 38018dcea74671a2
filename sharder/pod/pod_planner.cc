#include "sharder/pod/pod_planner.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "costmodel/device_profile.h"
#include "graph/status_macros.h"

namespace autoshard::pod {
namespace {

// The IPUs per replica to try (Note [POD throughput]).
absl::StatusOr<std::vector<int>> IpuCounts(const Options& options, int total) {
  if (options.num_ipus != kAutoIpus) {
    if (total % options.num_ipus != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--total-ipus ", total, " is not a multiple of --num-ipus ",
          options.num_ipus, ": the POD's IPUs must split into whole replicas"));
    }
    return std::vector<int>{options.num_ipus};
  }
  std::vector<int> counts;
  for (int k = 1; k <= std::min(total, options.max_ipus); k *= 2) {
    if (total % k == 0) counts.push_back(k);
  }
  return counts;
}

// One IPU's memory: tiles x bytes per tile (DESIGN.md §3.2).
absl::StatusOr<double> IpuMemoryBytes(const Options& options) {
  proto::DeviceProfile device = options.device;
  if (device.name().empty() && device.tiles_per_ipu() == 0) {
    ASSIGN_OR_RETURN(device, LoadDeviceProfile("ipu2"));
  }
  return static_cast<double>(device.tiles_per_ipu()) *
         static_cast<double>(device.bytes_per_tile());
}

// Candidate `a` beats the best so far `b` (both fit): a higher POD
// throughput; ties keep `b`, which has fewer IPUs or a smaller batch (tried
// first).
bool Beats(const proto::PodCandidate& a, const proto::PodCandidate& b) {
  return a.pod_throughput_per_s() > b.pod_throughput_per_s();
}

void SetReplication(const PodOptions& pod, const proto::Plan& plan,
                    proto::Replication* r) {
  r->set_total_ipus(pod.total_ipus);
  r->set_ipus_per_replica(plan.num_ipus());
  r->set_replicas(pod.total_ipus / plan.num_ipus());
  r->set_replica_throughput_per_s(plan.performance().throughput_per_s());
  r->set_pod_throughput_per_s(r->replicas() *
                              plan.performance().throughput_per_s());
  if (pod.grouping) {
    r->set_grouping_stride(pod.grouping->stride);
    r->set_grouping_size(pod.grouping->group_size);
  }
  r->set_sharded(pod.sharded);
  r->set_shard_over(pod.shard_over.value_or(0));
}

Replication ReplicationOf(const proto::Replication& r) {
  Replication out;
  out.replicas = r.replicas();
  if (r.grouping_size() > 0)
    out.grouping = ReplicaGrouping{r.grouping_stride(), r.grouping_size()};
  out.sharded = r.sharded();
  if (r.shard_over() > 0) out.shard_over = r.shard_over();
  return out;
}

// PlanModel for k IPUs per replica and micro-batch b (0: the model's),
// with the time left shared over the `tries_left` candidates.
absl::StatusOr<Plan> PlanCandidate(const onnx::ModelProto& model,
                                   const Options& options, int k, int b,
                                   std::chrono::steady_clock::time_point start,
                                   int tries_left) {
  Options for_one = options;
  for_one.num_ipus = k;
  for_one.shapes.batch_size = b;
  const double spent =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  for_one.max_search_s =
      std::max(1.0, (options.max_search_s - spent) / std::max(1, tries_left));
  return PlanModel(model, for_one);
}

}  // namespace

absl::Status PodOptions::Validate() const {
  if (total_ipus < 1 || total_ipus > kMaxPodIpus) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--total-ipus must be from 1 to ", kMaxPodIpus, ", got ", total_ipus));
  }
  for (int b : batch_sizes) {
    if (b < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--batch-size must be at least 1, got ", b));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int>> ParseBatchSizes(const std::string& spec) {
  std::set<int> sizes;
  if (spec == "auto") {
    for (int b = 1; b <= kAutoBatchMax; b *= 2) sizes.insert(b);
  } else {
    for (absl::string_view part : absl::StrSplit(spec, ',')) {
      int b = 0;
      if (!absl::SimpleAtoi(part, &b) || b < 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--batch-size '", spec,
            "': expected B, auto, or a list B1,B2,... of integers >= 1"));
      }
      sizes.insert(b);
    }
  }
  return std::vector<int>(sizes.begin(), sizes.end());
}

absl::StatusOr<Plan> PlanPod(const onnx::ModelProto& model,
                             const Options& options, const PodOptions& pod) {
  RETURN_IF_ERROR(pod.Validate());
  RETURN_IF_ERROR(options.Validate());
  if (options.max_ipus > kMaxPodIpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-ipus must be at most ", kMaxPodIpus, ", got ",
                     options.max_ipus));
  }
  ASSIGN_OR_RETURN(std::vector<int> counts, IpuCounts(options, pod.total_ipus));
  ASSIGN_OR_RETURN(const double ipu_bytes, IpuMemoryBytes(options));
  const std::vector<int> batches =
      pod.batch_sizes.empty()
          ? std::vector<int>{static_cast<int>(options.shapes.batch_size)}
          : pod.batch_sizes;
  const int total_tries = static_cast<int>(counts.size() * batches.size());
  const auto start = std::chrono::steady_clock::now();
  std::vector<proto::PodCandidate> tried;
  std::optional<Plan> best, last;
  int best_index = -1, planned = 0;
  double weight_bytes = -1;  // known after the first plan
  int64_t num_nodes = 0;     // likewise
  for (int b : batches) {
    bool any_fits = false, batch_fixed = false;
    int batch_used = std::max(b, 1);  // the plans' batch, once one is made
    for (int k : counts) {
      proto::PodCandidate c;
      c.set_ipus_per_replica(k);
      c.set_batch_size(batch_used);
      c.set_replicas(pod.total_ipus / k);
      if (weight_bytes > k * ipu_bytes || (num_nodes > 0 && k > num_nodes)) {
        c.set_note(k > num_nodes && num_nodes > 0
                       ? absl::StrCat("more IPUs than the model's ", num_nodes,
                                      " nodes")
                       : std::string("the weights alone exceed their memory"));
        tried.push_back(c);
        continue;
      }
      ASSIGN_OR_RETURN(Plan plan, PlanCandidate(model, options, k, b, start,
                                                total_tries - planned));
      ++planned;
      weight_bytes =
          static_cast<double>(plan.proto.summary().total_weight_bytes());
      num_nodes = plan.proto.summary().num_nodes();
      batch_used = std::max(plan.proto.batch_size(), 1);
      c.set_batch_size(batch_used);
      c.set_planned(true);
      c.set_fits(plan.proto.fits());
      c.set_bottleneck_s(plan.proto.performance().bottleneck_s());
      c.set_pod_throughput_per_s(c.replicas() *
                                 plan.proto.performance().throughput_per_s());
      batch_fixed = b > 0 && plan.proto.batch_size() != b;
      if (batch_fixed) {
        c.set_note(
            absl::StrCat("the model's batch is fixed at ", c.batch_size()));
      }
      tried.push_back(c);
      // A later batch that is the fixed one again repeats the first's plans.
      if (batch_fixed && b != batches.front()) break;
      any_fits |= c.fits();
      if (c.fits() && (best_index < 0 || Beats(c, tried[best_index]))) {
        best_index = static_cast<int>(tried.size()) - 1;
        best = plan;
      }
      last = std::move(plan);
    }
    if (!any_fits || batch_fixed) break;
  }
  if (!last) {
    return absl::InvalidArgumentError(
        "--total-ipus: no IPU count to plan (every one is too small for "
        "the weights)");
  }
  Plan plan = best ? std::move(*best) : std::move(*last);
  if (best_index >= 0) tried[best_index].set_chosen(true);
  proto::Replication* r = plan.proto.mutable_replication();
  SetReplication(pod, plan.proto, r);
  for (const auto& c : tried) *r->add_tried() = c;
  // Every candidate's planning, not only the chosen one's.
  plan.proto.mutable_summary()->set_planning_s(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count());
  // The grouping must fit the replicas of the chosen plan.
  RETURN_IF_ERROR(GatherGrouping(ReplicationOf(*r)).status());
  if (!best) {
    plan.proto.add_warnings(absl::StrCat(
        "--total-ipus ", pod.total_ipus,
        ": no combination of IPUs per replica and batch tried fits; the "
        "plan is the last one tried"));
  }
  return plan;
}

std::string PodReportText(const proto::Plan& plan) {
  if (!plan.has_replication()) return "";
  const proto::Replication& r = plan.replication();
  std::string out = absl::StrFormat(
      "POD: %d IPUs = %d replicas x %d IPUs per replica, micro-batch %d; "
      "POD throughput %.1f samples/s (%d x %.1f)\n",
      r.total_ipus(), r.replicas(), r.ipus_per_replica(),
      std::max(plan.batch_size(), 1), r.pod_throughput_per_s(), r.replicas(),
      r.replica_throughput_per_s());
  // One line per micro-batch: each IPU count's POD throughput.
  absl::StrAppend(&out, "POD tried (IPUs per replica: POD samples/s):\n");
  for (int i = 0; i < r.tried_size();) {
    const int batch = r.tried(i).batch_size();
    std::vector<std::string> parts;
    for (; i < r.tried_size() && r.tried(i).batch_size() == batch; ++i) {
      const proto::PodCandidate& c = r.tried(i);
      std::string counts = absl::StrCat(c.ipus_per_replica());
      // Consecutive counts skipped for the same reason share one entry.
      while (!c.planned() && i + 1 < r.tried_size() &&
             r.tried(i + 1).batch_size() == batch &&
             !r.tried(i + 1).planned() && r.tried(i + 1).note() == c.note()) {
        absl::StrAppend(&counts, ", ", r.tried(++i).ipus_per_replica());
      }
      parts.push_back(absl::StrCat(
          counts, ": ",
          !c.planned() ? absl::StrCat("skipped (", c.note(), ")")
          : c.fits()   ? absl::StrFormat("%.1f", c.pod_throughput_per_s())
                       : std::string("does not fit"),
          c.chosen() ? " (chosen)" : "",
          c.planned() && !c.note().empty() ? absl::StrCat(" (", c.note(), ")")
                                           : ""));
    }
    absl::StrAppend(&out, "  batch ", batch, ": ", absl::StrJoin(parts, ", "),
                    "\n");
  }
  if (r.grouping_size() > 0 || r.sharded()) {
    const Replication rep = ReplicationOf(r);
    absl::StatusOr<std::vector<ReplicaRow>> rows = ReplicaTable(rep);
    if (rows.ok()) absl::StrAppend(&out, ReplicaTableText(rep, *rows));
  }
  return out;
}

}  // namespace autoshard::pod
