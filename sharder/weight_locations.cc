#include "sharder/weight_locations.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "costmodel/remote_choice.h"
#include "costmodel/weight_location.h"
#include "sharder/plan_model.h"
#include "sharder/plan_prepared.h"
#include "sharder/prepare.h"
#include "solver/bound/certify.h"

namespace autoshard::internal {
namespace {

// Records `other` in `chosen`'s weight_locations for comparison.
void SetOther(const Plan& other, Plan* chosen) {
  proto::WeightLocations* w = chosen->proto.mutable_weight_locations();
  w->set_other(other.proto.weight_locations().chosen());
  w->set_other_fits(other.proto.fits());
  w->set_other_ipus_per_replica(other.proto.num_ipus());
  w->set_other_throughput_per_s(
      other.proto.fits() ? other.proto.performance().throughput_per_s() : 0);
}

// True when `a` is the better plan: it fits and `b` does not, or a higher
// throughput, or the same with fewer remote bytes.
bool Better(const Plan& a, const Plan& b) {
  if (a.proto.fits() != b.proto.fits()) return a.proto.fits();
  const double ta = a.proto.performance().throughput_per_s();
  const double tb = b.proto.performance().throughput_per_s();
  if (ta != tb) return ta > tb;
  return a.proto.weight_locations().remote_bytes() <
         b.proto.weight_locations().remote_bytes();
}

// The plan of `model` with the weights `remote` off-chip, the others
// resident, onto options.num_ipus IPUs, described.
absl::StatusOr<Plan> PlanWithRemote(const onnx::ModelProto& model,
                                    const Options& options,
                                    const std::vector<int32_t>& remote) {
  const auto start = std::chrono::steady_clock::now();
  Options on_chip = options;
  on_chip.weights_location = kWeightsOnChip;
  ASSIGN_OR_RETURN(Prepared p, Prepare(model, on_chip));
  RETURN_IF_ERROR(MakeChosenWeightsRemote(
      p.analysis->device, options.shard_over, remote, &p.analysis->problem));
  ASSIGN_OR_RETURN(Plan plan, PlanPreparedModel(p, model, options, start));
  plan.analysis = std::move(p.analysis);
  DescribeWeightLocations(options, &plan);
  return plan;
}

// Lowers `plan`'s certified bound to one that holds over every set of
// weights off-chip (Note [Choosing where weights live]): the bounds of the
// all-on-chip problem `resident`, its memory not counted (fits false), its
// cheap bound without loads.
void CertifyOverEveryRemoteSet(const Prepared& resident, const Options& options,
                               Plan* plan) {
  Plan probe;
  probe.proto = plan->proto;
  probe.placement = plan->placement;
  probe.proto.set_fits(false);
  const int k = plan->proto.num_ipus();
  proto::Performance* q = probe.proto.mutable_performance();
  q->set_lower_bound_s(resident.analysis->device_model().LowerBound(k));
  Certify(resident, options, &probe);
  proto::Performance* perf = plan->proto.mutable_performance();
  // Both certifications' seconds (Certify sets the probe's own).
  if (options.bound_s > 0)
    perf->set_bound_seconds(perf->bound_seconds() + q->bound_seconds());
  if (q->lower_bound_s() < perf->lower_bound_s()) {
    perf->set_lower_bound_s(q->lower_bound_s());
    perf->set_gap_percent(
        GapPercent(perf->bottleneck_s(), perf->lower_bound_s()));
  }
  // With the solver off Certify sets nothing: the cheap bound is the
  // certificate.
  const double bound_s =
      options.bound_s > 0 ? q->certified_bound_s() : q->lower_bound_s();
  if (bound_s < perf->certified_bound_s()) {
    perf->set_certified_bound_s(bound_s);
    perf->set_certified_gap_percent(GapPercent(perf->bottleneck_s(), bound_s));
    perf->set_bound_method(
        absl::StrCat(options.bound_s > 0 ? q->bound_method() : "cheap",
                     "; over every set of weights off-chip"));
  }
}

}  // namespace

absl::StatusOr<Plan> PlanFewestOffChip(const onnx::ModelProto& model,
                                       const Options& options) {
  Options all = options;
  all.weights_location = kWeightsRemote;
  ASSIGN_OR_RETURN(Plan best, PlanAtLocation(model, all));
  if (!best.proto.fits() || !best.analysis) return best;
  // Note [Fewest bytes off-chip] for the split the planner found with every
  // weight remote, then planned again with only those weights remote (the
  // split may change), a few rounds while the plan improves.
  Options fixed = options;
  fixed.weights_location = kWeightsRemote;
  fixed.num_ipus = best.proto.num_ipus();
  Options on_chip = options;
  on_chip.weights_location = kWeightsOnChip;
  ASSIGN_OR_RETURN(const Prepared resident, Prepare(model, on_chip));
  const ModelAnalysis& a = *resident.analysis;
  std::vector<int32_t> placement = best.placement.ipu;
  for (int round = 0; round < kFewestOffChipRounds; ++round) {
    const RemoteChoice choice =
        FewestBytesOffChip(a.problem, a.device, a.precision, placement,
                           fixed.num_ipus, options.shard_over);
    if (!choice.fits) break;
    ASSIGN_OR_RETURN(Plan plan, PlanWithRemote(model, fixed, choice.remote));
    if (!Better(plan, best)) break;
    const bool same_split = plan.placement.ipu == placement;
    placement = plan.placement.ipu;
    best = std::move(plan);
    if (same_split) break;
  }
  CertifyOverEveryRemoteSet(resident, on_chip, &best);
  return best;
}

absl::StatusOr<Plan> PlanAtLocation(const onnx::ModelProto& model,
                                    const Options& options) {
  const auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(Prepared p, Prepare(model, options));
  ASSIGN_OR_RETURN(Plan plan, PlanPreparedModel(p, model, options, start));
  plan.analysis = std::move(p.analysis);
  DescribeWeightLocations(options, &plan);
  return plan;
}

void DescribeWeightLocations(const Options& options, Plan* plan) {
  if (!plan->analysis) return;
  const ModelAnalysis& a = *plan->analysis;
  const ShardingProblem& problem = a.problem;
  proto::WeightLocations* w = plan->proto.mutable_weight_locations();
  w->set_asked(options.weights_location);
  const bool remote = HasRemoteWeights(problem);
  w->set_chosen(remote ? kWeightsRemote : kWeightsOnChip);
  w->set_shard_over(remote ? options.shard_over : 1);
  w->set_retrieval_mode(options.retrieval_mode);
  w->set_on_chip_weight_bytes(ResidentWeightBytes(problem));
  w->set_throughput_per_s(
      plan->proto.fits() ? plan->proto.performance().throughput_per_s() : 0);
  w->set_streaming_memory_capacity_bytes(
      a.device.streaming_memory_bytes_per_machine());
  if (!remote) return;
  w->set_bound_note(
      "the bounds count each remote weight's load once, at its first reader "
      "(Note [Remote weights]): still valid lower bounds");
  const int k = plan->proto.num_ipus();
  const DeviceModel::RemoteLoads loads =
      a.device_model().RemoteLoadsOf(plan->placement.ipu, k);
  std::vector<std::vector<int32_t>> ipus_of(problem.weight_loaded_bytes.size());
  std::vector<std::vector<int64_t>> bytes_per_ipu(k);
  for (int d = 0; d < k && d < plan->proto.ipus_size(); ++d) {
    proto::IpuCost* cost = plan->proto.mutable_ipus(d);
    cost->set_remote_weight_bytes(loads.bytes[d]);
    cost->set_remote_load_s(loads.load_s[d]);
    for (int32_t wt : loads.weights[d]) {
      ipus_of[wt].push_back(d);
      bytes_per_ipu[d].push_back(problem.weight_loaded_bytes[wt]);
    }
  }
  std::vector<int32_t> order;
  int64_t total = 0;
  for (size_t wt = 0; wt < ipus_of.size(); ++wt) {
    if (problem.weight_loaded_bytes[wt] <= 0) continue;
    order.push_back(static_cast<int32_t>(wt));
    total += problem.weight_loaded_bytes[wt];
  }
  std::stable_sort(order.begin(), order.end(), [&](int32_t x, int32_t y) {
    return problem.weight_loaded_bytes[x] > problem.weight_loaded_bytes[y];
  });
  for (int32_t wt : order) {
    proto::RemoteWeight* r = w->add_remote_weights();
    if (static_cast<size_t>(wt) < a.costs.weights.size())
      r->set_name(a.costs.weights[wt].name);
    r->set_bytes(problem.weight_loaded_bytes[wt]);
    r->set_shard_bytes(
        ShardBytes(problem.weight_loaded_bytes[wt], options.shard_over));
    for (int32_t d : ipus_of[wt]) r->add_ipus(d);
  }
  w->set_remote_bytes(total);
  const std::vector<int64_t> machines = StreamingBytesPerMachine(
      bytes_per_ipu, a.device.ipus_per_machine(), options.shard_over);
  w->set_streaming_memory_bytes_per_machine(
      *std::max_element(machines.begin(), machines.end()));
}

int ReplicasPerMachine(const proto::DeviceProfile& device, int ipus_per_replica,
                       int replicas) {
  const int per = std::max(device.ipus_per_machine(), 1);
  const int k = std::max(ipus_per_replica, 1);
  int sharing = 1;
  if (k < per) {
    sharing = (per + k - 1) / k;
  } else if (k % per != 0) {
    sharing = 2;
  }
  return std::max(1, std::min(sharing, replicas));
}

absl::Status CheckStreamingMemoryOf(const Plan& plan, int replicas) {
  if (!plan.analysis) return absl::OkStatus();
  const proto::WeightLocations& w = plan.proto.weight_locations();
  if (w.chosen() != kWeightsRemote) return absl::OkStatus();
  const int replicas_per_machine = ReplicasPerMachine(
      plan.analysis->device, plan.proto.num_ipus(), replicas);
  // One replica's fullest machine, times the replicas that share it (an
  // upper bound when k is not a multiple of the machine's IPUs).
  return CheckStreamingCapacity(
      plan.analysis->device,
      {w.streaming_memory_bytes_per_machine() * replicas_per_machine});
}

absl::StatusOr<Plan> PlanWeightLocations(const onnx::ModelProto& model,
                                         const Options& options) {
  if (options.weights_location == kWeightsRemote) {
    ASSIGN_OR_RETURN(Plan plan, PlanAtLocation(model, options));
    RETURN_IF_ERROR(CheckStreamingMemoryOf(plan));
    return plan;
  }
  if (options.weights_location != kWeightsAuto) {
    return PlanAtLocation(model, options);
  }
  Options on_chip = options;
  on_chip.weights_location = kWeightsOnChip;
  ASSIGN_OR_RETURN(Plan on, PlanAtLocation(model, on_chip));
  // Note [Choosing where weights live]: a plan that fits on-chip moves
  // nothing off-chip, nor can a device without Streaming Memory: the plan
  // is then exactly the on-chip one.
  if (on.proto.fits() || !CheckStreamingMemory(on.analysis->device).ok()) {
    on.proto.clear_weight_locations();
    return on;
  }
  on.proto.mutable_weight_locations()->set_asked(kWeightsAuto);
  ASSIGN_OR_RETURN(Plan off, PlanFewestOffChip(model, options));
  off.proto.mutable_weight_locations()->set_asked(kWeightsAuto);
  const bool off_ok = off.proto.fits() && CheckStreamingMemoryOf(off).ok();
  const bool take_off =
      off_ok &&
      (!on.proto.fits() || off.proto.performance().throughput_per_s() >
                               on.proto.performance().throughput_per_s());
  Plan& chosen = take_off ? off : on;
  SetOther(take_off ? on : off, &chosen);
  if (!off_ok) chosen.proto.mutable_weight_locations()->set_other_fits(false);
  return std::move(chosen);
}

}  // namespace autoshard::internal
