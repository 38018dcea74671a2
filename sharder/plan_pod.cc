#include "sharder/plan_pod.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "costmodel/device_profile.h"
#include "costmodel/weight_location.h"
#include "sharder/weight_locations.h"

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

// The POD's device: options.device, else the built-in ipu2.
absl::StatusOr<proto::DeviceProfile> PodDevice(const Options& options) {
  if (options.device.name().empty() && options.device.tiles_per_ipu() == 0)
    return LoadDeviceProfile("ipu2");
  return options.device;
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
  // A plan that does not fit has no throughput a script could pick.
  if (plan.fits()) {
    r->set_replica_throughput_per_s(plan.performance().throughput_per_s());
    r->set_pod_throughput_per_s(r->replicas() *
                                plan.performance().throughput_per_s());
  }
  if (pod.grouping) {
    r->set_grouping_stride(pod.grouping->stride);
    r->set_grouping_size(pod.grouping->group_size);
  }
  r->set_sharded(pod.sharded);
  r->set_shard_over(pod.shard_over.value_or(0));
}

// PlanModel for k IPUs per replica and micro-batch b (0: the model's),
// with the time left shared over the `tries_left` candidates; `location`
// and `shard_over` are the weights' (Note [Remote weights]).
absl::StatusOr<Plan> PlanCandidate(const onnx::ModelProto& model,
                                   const Options& options, int k, int b,
                                   std::chrono::steady_clock::time_point start,
                                   int tries_left, const std::string& location,
                                   int shard_over) {
  // The CLI's progress says which count is being planned (a POD search
  // plans many; the first progress line used to stay up through all).
  if (options.trying_num_ipus) options.trying_num_ipus(k);
  Options for_one = options;
  for_one.num_ipus = k;
  for_one.shapes.batch_size = b;
  for_one.weights_location = location;
  for_one.shard_over = shard_over;
  const double spent =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  for_one.max_search_s =
      std::max(1.0, (options.max_search_s - spent) / std::max(1, tries_left));
  if (location == kWeightsOnChip && options.weights_location == kWeightsOnChip)
    return PlanModel(model, for_one);
  RETURN_IF_ERROR(for_one.Validate());
  // auto: the fewest bytes off-chip (Note [Choosing where weights live]).
  if (location == kWeightsRemote && options.weights_location == kWeightsAuto)
    return internal::PlanFewestOffChip(model, for_one);
  return internal::PlanAtLocation(model, for_one);
}

// The whole POD's options: PodOptions', the library's, and --max-ipus at
// most kMaxPodIpus.
absl::Status ValidatePod(const Options& options, const PodOptions& pod) {
  RETURN_IF_ERROR(pod.Validate());
  RETURN_IF_ERROR(options.Validate());
  if (options.max_ipus > kMaxPodIpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-ipus must be at most ", kMaxPodIpus, ", got ",
                     options.max_ipus));
  }
  return absl::OkStatus();
}

// One PlanPod call: what every candidate shares.
struct PodRun {
  const onnx::ModelProto& model;
  const Options& options;
  const PodOptions& pod;
  std::vector<int> counts;  // the IPUs per replica to try
  double ipu_bytes = 0;     // one IPU's memory: tiles x bytes per tile
  // The weight locations each candidate is planned with (Locations).
  std::vector<std::string> locations;
  int total_tries = 0;  // counts x batches
  std::chrono::steady_clock::time_point start;
};

// What the candidates tried so far have found.
struct PodSearch {
  std::vector<proto::PodCandidate> tried;
  std::optional<Plan> best, last;
  int best_index = -1;            // in tried
  int planned = 0;                // candidates planned (not skipped)
  double weight_bytes = -1;       // known after the first plan
  int64_t num_nodes = 0;          // likewise
  double best_on_chip_per_s = 0;  // the best on-chip POD throughput
  int best_on_chip_k = 0;         // its IPUs per replica
  int remote_planned = 0;         // remote candidates planned
};

// The best on-chip candidate, kept to compare with remote ones.
void KeepOnChip(const proto::PodCandidate& c, PodSearch* s) {
  if (c.fits() && c.pod_throughput_per_s() > s->best_on_chip_per_s) {
    s->best_on_chip_per_s = c.pod_throughput_per_s();
    s->best_on_chip_k = c.ipus_per_replica();
  }
}

// Why k IPUs per replica is skipped without planning; empty: plan it.
std::string SkipNote(const PodSearch& s, int k, double ipu_bytes, bool remote) {
  if (s.num_nodes > 0 && k > s.num_nodes) {
    return absl::StrCat("more IPUs than the model's ", s.num_nodes, " nodes");
  }
  // Remote weights are not resident (Note [Remote weights]).
  if (!remote && s.weight_bytes > k * ipu_bytes) {
    return "the weights alone exceed their memory";
  }
  return "";
}

// Fills candidate `c` from its plan (b: the batch asked for, 0: the
// model's) and `s` with the model's figures; true when the model's batch
// is fixed at another one than b.
bool RecordPlan(const Plan& plan, int b, proto::PodCandidate* c, PodSearch* s) {
  s->weight_bytes =
      static_cast<double>(plan.proto.summary().total_weight_bytes());
  s->num_nodes = plan.proto.summary().num_nodes();
  c->set_batch_size(std::max(plan.proto.batch_size(), 1));
  c->set_planned(true);
  c->set_fits(plan.proto.fits());
  c->set_bottleneck_s(plan.proto.performance().bottleneck_s());
  // Only a fitting candidate has a POD throughput (0, left out of the
  // JSON, otherwise): `jq max_by(.pod_throughput_per_s)` picks one that fits.
  if (plan.proto.fits()) {
    c->set_pod_throughput_per_s(c->replicas() *
                                plan.proto.performance().throughput_per_s());
  }
  const bool batch_fixed = b > 0 && plan.proto.batch_size() != b;
  if (batch_fixed) {
    c->set_note(
        absl::StrCat("the model's batch is fixed at ", c->batch_size()));
  }
  return batch_fixed;
}

// Keeps `plan` (the last candidate tried) as the last one planned and,
// when it fits and beats the best so far, as the best.
void KeepPlan(Plan plan, PodSearch* s) {
  const proto::PodCandidate& c = s->tried.back();
  if (c.weights_location() != kWeightsRemote) KeepOnChip(c, s);
  if (c.fits() && (s->best_index < 0 || Beats(c, s->tried[s->best_index]))) {
    s->best_index = static_cast<int>(s->tried.size()) - 1;
    s->best = plan;
  }
  s->last = std::move(plan);
}

// The weight locations each candidate is planned with: on-chip only, or
// both (auto chooses between them; remote keeps on-chip plans to compare).
// auto on a device without Streaming Memory is on-chip only.
std::vector<std::string> Locations(const Options& options,
                                   const proto::DeviceProfile& device) {
  if (options.weights_location == kWeightsOnChip ||
      (options.weights_location == kWeightsAuto &&
       !CheckStreamingMemory(device).ok())) {
    return {kWeightsOnChip};
  }
  return {kWeightsOnChip, kWeightsRemote};
}

// Replicas each remote weight is sharded over with R replicas: the gather
// group's size with --shard-over, else 1. Errors: GatherGrouping's.
absl::StatusOr<int> ShardOverFor(const PodOptions& pod, int replicas) {
  if (!pod.sharded) return 1;
  Replication r;
  r.replicas = replicas;
  r.grouping = pod.grouping;
  r.sharded = true;
  r.shard_over = pod.shard_over;
  ASSIGN_OR_RETURN(const ReplicaGrouping gather, GatherGrouping(r));
  return gather.group_size;
}

// A remote candidate whose weights overflow Streaming Memory does not fit,
// nor does its plan (ChosenPlan may return it as the last one tried). The
// replicas of k IPUs sharing one IPU-Machine each hold their shards there
// (internal::ReplicasPerMachine).
void NoteStreamingMemory(proto::PodCandidate* c, Plan* plan) {
  const absl::Status capacity =
      internal::CheckStreamingMemoryOf(*plan, c->replicas());
  if (capacity.ok()) return;
  c->set_fits(false);
  c->clear_pod_throughput_per_s();
  c->set_note(std::string(capacity.message()));
  plan->proto.set_fits(false);
}

// Tries every IPU count at micro-batch b (first_batch: the first one
// tried); false when the batches stop there (none fits, or the model's
// batch is fixed).
absl::StatusOr<bool> TryBatch(const PodRun& run, int b, int first_batch,
                              PodSearch* s) {
  bool any_fits = false, batch_fixed = false;
  int batch_used = std::max(b, 1);  // the plans' batch, once one is made
  const bool auto_location = run.options.weights_location == kWeightsAuto;
  std::vector<int> fit_on_chip;  // IPU counts whose on-chip plan fits
  for (const std::string& location : run.locations) {
    for (int k : run.counts) {
      const bool remote = location == kWeightsRemote;
      // auto: where on-chip fits, nothing goes off-chip (Note [Choosing
      // where weights live]): no remote candidate, no row.
      if (remote && auto_location &&
          std::find(fit_on_chip.begin(), fit_on_chip.end(), k) !=
              fit_on_chip.end()) {
        continue;
      }
      proto::PodCandidate c;
      c.set_ipus_per_replica(k);
      c.set_batch_size(batch_used);
      c.set_replicas(run.pod.total_ipus / k);
      // Rows are named by location when remote ones are asked for or
      // planned (auto's on-chip rows stay as without remote weights).
      if (run.options.weights_location == kWeightsRemote || remote)
        c.set_weights_location(location);
      std::string skip = SkipNote(*s, k, run.ipu_bytes, remote);
      const absl::StatusOr<int> shard_over =
          remote ? ShardOverFor(run.pod, c.replicas()) : 1;
      if (skip.empty() && !shard_over.ok())
        skip = std::string(shard_over.status().message());
      if (!skip.empty()) {
        c.set_note(skip);
        s->tried.push_back(c);
        continue;
      }
      ASSIGN_OR_RETURN(
          Plan plan,
          PlanCandidate(run.model, run.options, k, b, run.start,
                        run.total_tries - s->planned, location, *shard_over));
      ++s->planned;
      if (remote) ++s->remote_planned;
      batch_fixed = RecordPlan(plan, b, &c, s);
      if (!remote && plan.proto.fits()) fit_on_chip.push_back(k);
      batch_used = c.batch_size();
      if (remote && plan.analysis) NoteStreamingMemory(&c, &plan);
      s->tried.push_back(c);
      // A later batch that is the fixed one again repeats the first's plans.
      if (batch_fixed && b != first_batch) return false;
      any_fits |= c.fits();
      // --weights-location remote: on-chip plans are there to compare.
      if (!remote && run.options.weights_location == kWeightsRemote) {
        KeepOnChip(c, s);
        continue;
      }
      KeepPlan(std::move(plan), s);
    }
  }
  return any_fits && !batch_fixed;
}

// The chosen plan (the best, else the last) with its Replication: every
// candidate tried, the whole POD's planning time.
absl::StatusOr<Plan> ChosenPlan(const PodRun& run, PodSearch s) {
  if (!s.last) {
    std::string why = "every one is too small for the weights";
    for (const auto& c : s.tried)
      if (!c.note().empty()) why = c.note();
    return absl::InvalidArgumentError(
        absl::StrCat("--total-ipus: no IPU count to plan (", why, ")"));
  }
  Plan plan = s.best ? std::move(*s.best) : std::move(*s.last);
  if (s.best_index >= 0) s.tried[s.best_index].set_chosen(true);
  proto::Replication* r = plan.proto.mutable_replication();
  SetReplication(run.pod, plan.proto, r);
  r->set_retrieval_mode(run.options.retrieval_mode);
  const bool chosen_remote =
      plan.proto.weight_locations().chosen() == kWeightsRemote;
  if (run.options.weights_location == kWeightsAuto && !chosen_remote &&
      s.remote_planned == 0) {
    // auto that planned nothing remote: the plan on-chip weights give.
    plan.proto.clear_weight_locations();
  } else if (run.options.weights_location != kWeightsOnChip) {
    // The POD's figures: this plan's and the best on-chip one's.
    proto::WeightLocations* w = plan.proto.mutable_weight_locations();
    w->set_asked(run.options.weights_location);
    w->set_throughput_per_s(r->pod_throughput_per_s());
    if (w->chosen() == kWeightsRemote) {
      w->set_other(kWeightsOnChip);
      w->set_other_fits(s.best_on_chip_per_s > 0);
      w->set_other_ipus_per_replica(s.best_on_chip_k);
      w->set_other_throughput_per_s(s.best_on_chip_per_s);
    } else {
      w->clear_other();
      w->clear_other_fits();
      w->clear_other_ipus_per_replica();
      w->clear_other_throughput_per_s();
    }
  }
  for (const auto& c : s.tried) *r->add_tried() = c;
  // Every candidate's planning, not only the chosen one's.
  plan.proto.mutable_summary()->set_planning_s(
      std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                    run.start)
          .count());
  // The grouping must fit the replicas of the chosen plan.
  RETURN_IF_ERROR(GatherGrouping(ReplicationOf(*r)).status());
  if (!s.best) {
    plan.proto.add_warnings(absl::StrCat(
        "--total-ipus ", run.pod.total_ipus,
        ": no combination of IPUs per replica and batch tried fits; the "
        "plan is the last one tried"));
  }
  return plan;
}

}  // namespace

absl::StatusOr<Plan> PlanPod(const onnx::ModelProto& model,
                             const Options& options, const PodOptions& pod) {
  RETURN_IF_ERROR(ValidatePod(options, pod));
  ASSIGN_OR_RETURN(std::vector<int> counts, IpuCounts(options, pod.total_ipus));
  ASSIGN_OR_RETURN(const proto::DeviceProfile device, PodDevice(options));
  const double ipu_bytes = static_cast<double>(device.tiles_per_ipu()) *
                           static_cast<double>(device.bytes_per_tile());
  const std::vector<std::string> locations = Locations(options, device);
  const std::vector<int> batches =
      pod.batch_sizes.empty()
          ? std::vector<int>{static_cast<int>(options.shapes.batch_size)}
          : pod.batch_sizes;
  // Each count is planned once per weight location (Locations); auto's
  // remote candidates come only where on-chip does not fit, and share the
  // time the on-chip ones leave.
  const int total_tries = static_cast<int>(
      counts.size() * batches.size() *
      (options.weights_location == kWeightsAuto ? 1 : locations.size()));
  const PodRun run{
      model,     options,   pod,         counts,
      ipu_bytes, locations, total_tries, std::chrono::steady_clock::now()};
  PodSearch search;
  for (int b : batches) {
    ASSIGN_OR_RETURN(const bool go_on,
                     TryBatch(run, b, batches.front(), &search));
    if (!go_on) break;
  }
  return ChosenPlan(run, std::move(search));
}

}  // namespace autoshard::pod
