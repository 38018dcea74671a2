// SolveProblem with host devices (issue 31; Problem.num_host_devices,
// Tarnawski et al.'s CPUs): Note [Host devices in solve].
#include "sharder/solve_host.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "sharder/plan_model.h"
#include "sharder/problem_file.h"
#include "solver/bound/host_bound.h"
#include "solver/strategies/coarsen.h"
#include "solver/strategies/constraints.h"
#include "solver/strategies/ideal_dp.h"
#include "solver/strategies/revisit.h"

namespace autoshard::internal {
namespace {

// Note [Host stages in a plan]
// The DP numbers a chain's stages by position, IPUs and hosts alike; the
// plan says which is which: an IPU stage's nodes, sharding points and row
// take its IPU number (the IPU stages counted in chain order), a host
// stage's take ipu -1 with on_host and host_device (the host stages
// counted in chain order); every node's pipeline_stage stays its position,
// and Plan.ipus stays in chain order. Cut tensors name IPUs the same way,
// with from_host and to_host for the host's end (it pays no copy: the IPU
// at the other end does). Plan.num_ipus counts the IPUs only.
void NameHostStages(const std::vector<int32_t>& host_positions, int num_ipus,
                    proto::Plan* out) {
  const int stages = num_ipus + static_cast<int>(host_positions.size());
  // Per position: its IPU number, or -1 - its host index.
  std::vector<int32_t> device(stages);
  for (int pos = 0, ipu = 0, host = 0; pos < stages; ++pos) {
    const bool is_host =
        std::binary_search(host_positions.begin(), host_positions.end(), pos);
    device[pos] = is_host ? -1 - host++ : ipu++;
  }
  // A position past the chain (none should be) counts as an IPU after
  // every host.
  const int32_t hosts = static_cast<int32_t>(host_positions.size());
  auto at = [&](int32_t pos) {
    return pos < stages ? device[pos] : pos - hosts;
  };
  for (proto::NodePlacement& node : *out->mutable_nodes()) {
    const int32_t d = at(node.ipu());
    node.set_pipeline_stage(node.ipu());
    node.set_ipu(std::max(d, -1));
    if (d < 0) {
      node.set_on_host(true);
      node.set_host_device(-1 - d);
    }
  }
  for (proto::ShardingPoint& point : *out->mutable_sharding_points()) {
    point.set_pipeline_stage(point.ipu());
    point.set_ipu(std::max(at(point.ipu()), -1));
  }
  const int64_t tiles = out->tiles_per_ipu();
  for (proto::IpuCost& cost : *out->mutable_ipus()) {
    const int32_t d = at(cost.ipu());
    cost.set_ipu(std::max(d, -1));
    if (d < 0) cost.set_host_device(-1 - d);
    // The fullest tile's index across IPUs counts IPUs only too.
    proto::IpuMemory& m = *cost.mutable_memory();
    if (d >= 0 && tiles > 0) m.set_max_tile(d * tiles + m.max_tile() % tiles);
  }
  for (proto::CutTensor& t : *out->mutable_cut_tensors()) {
    const int32_t from = at(t.from_ipu());
    t.set_from_ipu(std::max(from, -1));
    t.set_from_host(from < 0);
    std::vector<int32_t> readers;
    for (int32_t pos : t.reader_ipus()) {
      if (at(pos) < 0) {
        t.set_to_host(true);
      } else {
        readers.push_back(at(pos));
      }
    }
    t.clear_reader_ipus();
    for (int32_t r : readers) t.add_reader_ipus(r);
  }
  out->set_num_ipus(num_ipus);
}

// The plan of the host-aware DP's chain `r` (k IPUs and the host devices it
// used, in chain order): PlanOfAssignment on a copy of the problem in which
// a host stage's nodes take their host_time_s and hold no weights, code or
// temporaries; each host entry then takes its compute only (no copies, no
// memory: Tarnawski et al.'s CPU), and the bottleneck, throughput, latency
// and fit follow; Note [Host stages in a plan] names the stages.
Plan HostPlan(const internal::Prepared& base, const Options& options,
              int num_ipus, const IdealDpResult& r,
              std::chrono::steady_clock::time_point start) {
  internal::Prepared q;
  ModelAnalysis& a = *q.analysis;
  a.model = base.analysis->model;
  a.problem = base.analysis->problem;
  a.device = base.analysis->device;
  a.precision = base.analysis->precision;
  a.batch = base.analysis->batch;
  a.costs = base.analysis->costs;
  ShardingProblem& s = a.problem;
  const int n = s.num_nodes();
  const std::set<int32_t> hosts(r.host_positions.begin(),
                                r.host_positions.end());
  if (s.node_time_s.empty()) s.node_time_s.assign(n, -1);
  if (s.code_bytes.empty()) s.code_bytes.assign(n, -1);
  std::vector<double> host_load_s(num_ipus + hosts.size(), 0);
  for (int32_t v = 0; v < n; ++v) {
    if (hosts.count(r.ipu[v]) == 0) continue;
    s.node_time_s[v] = std::max(0.0, s.host_time_s[v]);
    s.node_weights[v].clear();
    s.code_bytes[v] = 0;
    s.temporary_bytes[v] = 0;
    if (!s.is_constant[v]) host_load_s[r.ipu[v]] += s.node_time_s[v];
  }
  // The DP kept them; positions are not IPU numbers once a host is among
  // them.
  s.allowed_ipus.clear();
  s.colocate_group.clear();
  s.colocate_names.clear();
  s.host_time_s.clear();
  s.num_host_devices = 0;
  Placement assignment;
  assignment.ipu = r.ipu;
  assignment.pipeline_stage = r.ipu;
  Options o = options;
  o.num_ipus = num_ipus + static_cast<int>(hosts.size());
  Plan plan = PlanOfAssignment(q, o, assignment, {},
                               "ideal DP with host devices", start);
  proto::Plan& out = plan.proto;
  out.set_num_host_devices(static_cast<int>(hosts.size()));
  proto::Performance& perf = *out.mutable_performance();
  double bottleneck = 0;
  bool fits = true;
  for (proto::IpuCost& cost : *out.mutable_ipus()) {
    if (hosts.count(cost.ipu()) > 0) {
      perf.set_latency_s(perf.latency_s() - cost.stage_time_s() +
                         host_load_s[cost.ipu()]);
      cost.set_host(true);
      cost.set_stage_time_s(host_load_s[cost.ipu()]);
      // Its cut-tensor bytes stay: what it receives and sends (the IPUs at
      // the other end pay the copies).
      cost.clear_memory();
      cost.mutable_memory()->set_fits(true);
    } else {
      fits &= cost.memory().fits();
    }
    bottleneck = std::max(bottleneck, cost.stage_time_s());
  }
  perf.set_bottleneck_s(bottleneck);
  perf.set_throughput_per_s(static_cast<double>(a.batch) /
                            (bottleneck + a.device.step_fixed_s()));
  out.set_fits(fits);
  if (fits) out.clear_out_of_memory();
  NameHostStages(r.host_positions, num_ipus, &out);
  plan.analysis = std::move(q.analysis);
  return plan;
}

// Note [Free sinks]
// A node no one reads, with no time on either device, one producer and no
// constraint of its own adds no time beside its producer, and elsewhere
// only adds copies of the producer's tensor; its stage can only come after
// the producer's. Colocating it with its producer keeps every plan valid,
// but not every optimum: every IPU must hold a node, and the sink alone may
// be the cheapest way to fill one (u sends a large tensor to v and a small
// one to the sink, k = 3: {u,v} | {sink} | {w} beats any split of u | v).
// So the grouped problem's DP gives plans (memory judged), and its bound
// only with every IPU allowed empty (IdealDpOptions.allow_empty_ipus): from
// any plan, moving each free sink to its producer's stage (it may run there:
// no time, no constraint) only shortens stages (its tensor is no longer
// copied), perhaps emptying an IPU, so that relaxation's optimum is at most
// every plan's bottleneck. Their DP
// merges such sinks too (GNMT's 17). Returns the problem with them grouped
// (colocate_group empty when there are no groups).
ShardingProblem GroupFreeSinks(const ShardingProblem& problem,
                               const DeviceModel& model) {
  ShardingProblem q = problem;
  const int n = q.num_nodes();
  for (int32_t v = 0; v < n; ++v) {
    if (!q.consumers[v].empty() || q.producers[v].size() != 1) continue;
    const int32_t u = q.producers[v][0];
    const bool free = model.NodeTime(v) == 0 && q.host_time_s[v] == 0 &&
                      !q.is_constant[v] &&
                      (q.allowed_ipus.empty() ||
                       q.allowed_ipus[v] == ShardingProblem::kAnyIpu) &&
                      (q.host_only.empty() || !q.host_only[v]) &&
                      (q.colocate_group.empty() || q.colocate_group[v] < 0);
    if (!free) continue;
    if (q.colocate_group.empty()) q.colocate_group.assign(n, -1);
    if (q.colocate_group[u] < 0) {
      q.colocate_group[u] = static_cast<int32_t>(q.colocate_names.size());
      q.colocate_names.push_back(q.names[u]);
    }
    q.colocate_group[v] = q.colocate_group[u];
  }
  return q;
}

// `s` seconds in whole milliseconds, at most a year (Validate accepts an
// infinite budget).
std::chrono::milliseconds Milliseconds(double s) {
  constexpr double kYearMs = 1000.0 * 365 * 24 * 3600;
  const double ms = 1000 * s > 0 ? std::min(1000 * s, kYearMs) : 0.0;
  return std::chrono::milliseconds(static_cast<int64_t>(ms));
}

// Now plus half of the time to options.deadline.
std::chrono::steady_clock::time_point HalfOfTheRest(
    const IdealDpOptions& options) {
  const auto now = std::chrono::steady_clock::now();
  return options.deadline > now ? now + (options.deadline - now) / 2 : now;
}

// Note [Coarsened host DP]
// When the lattice is too large even with free sinks grouped (and colocate
// groups merged), the plan's DP runs on that problem coarsened (Note
// [Coarsening], coarsen.h) into groups of at most Σ IPU time / (32 k), else
// / (16 k), ... / (2 k) — the finest whose lattice is small enough, as
// auto's coarsened DP (RunCoarseIdeal), and whose DP finishes in half of the
// time left (the coarsest: in all of it). A group's members share their host
// capability (Coarsen never merges a host_only node, one that may run on the
// host and one that may not), and its host time is their Σ, so every chain of
// the groups is a chain of the nodes with the same stage times: a valid plan
// (memory judged again by HostPlan), never a bound (a coarser lattice has fewer
// chains). Not run when a node is restricted to some IPUs or in a colocate
// group left unmerged: Coarsen keeps neither.
IdealDpResult CoarseHostDp(const ShardingProblem& problem,
                           const internal::Prepared& p, int num_ipus,
                           double cap_s, const IdealDpOptions& options) {
  IdealDpResult none;
  if (std::any_of(problem.allowed_ipus.begin(), problem.allowed_ipus.end(),
                  [](uint64_t a) { return a != ShardingProblem::kAnyIpu; }) ||
      std::any_of(problem.colocate_group.begin(), problem.colocate_group.end(),
                  [](int32_t g) { return g >= 0; })) {
    return none;
  }
  const DeviceModel model(problem, p.analysis->device, p.analysis->precision);
  double total_s = 0;
  for (int32_t v = 0; v < problem.num_nodes(); ++v)
    total_s += model.NodeTime(v);
  IdealDpResult last = none;
  for (int parts = 32 * num_ipus; parts >= 2 * num_ipus; parts /= 2) {
    if (std::chrono::steady_clock::now() > options.deadline) break;
    const Coarsened coarse = Coarsen(problem, model, total_s / parts);
    const DeviceModel coarse_model(coarse.problem, p.analysis->device,
                                   p.analysis->precision);
    // Half of the time left, so that a coarser graph still has some when
    // this one runs out (the last one has all of it).
    IdealDpOptions level = options;
    if (parts / 2 >= 2 * num_ipus) level.deadline = HalfOfTheRest(options);
    IdealDpResult r =
        IdealDpHostSplit(coarse.problem, coarse_model, num_ipus, cap_s, level);
    if (r.found) r.ipu = Refine(problem, coarse, r.ipu);
    if (r.found || r.complete) return r;
    if (r.ran) last = r;
  }
  return last;
}

// IdealDpHostSplit, or IdealDpHostBound with `bound`, on p's problem; when
// its lattice is too large, on the problem with free sinks grouped (Note
// [Free sinks]) and each group merged (ContractGroups: the same constrained
// optimum, the plan mapped back by Refine); for a plan, when that is too
// large too, Note [Coarsened host DP]'s.
// *used_groups says whether the result is not the problem's own DP: then it
// is a plan (valid, maybe not the best) but no bound, since a free sink
// alone on an IPU may be the cheapest way to fill it (a review's
// counterexample: u sends a large tensor to v and a small one to the sink,
// k = 3), and a coarsened lattice has fewer chains.
IdealDpResult HostDp(const Prepared& p, int num_ipus, double cap_s,
                     const IdealDpOptions& options, bool bound,
                     bool* used_groups, std::string* how = nullptr) {
  *used_groups = false;
  const ShardingProblem& problem = p.analysis->problem;
  const DeviceModel& model = p.analysis->device_model();
  // Without colocate groups a plan's exact DPs have half of the time left
  // each, so that a lattice with too many pairs (collected until the limit,
  // slowly) leaves some to the coarsened DP; with them all of it (their
  // fallback is the exact DP with the groups merged, and Coarsen keeps no
  // group).
  const bool groups =
      std::any_of(problem.colocate_group.begin(), problem.colocate_group.end(),
                  [](int32_t g) { return g >= 0; });
  auto run = [&](const ShardingProblem& q, const DeviceModel& m) {
    if (bound) return IdealDpHostBound(q, m, num_ipus, cap_s, options);
    IdealDpOptions exact = options;
    if (!groups) exact.deadline = HalfOfTheRest(options);
    return IdealDpHostSplit(q, m, num_ipus, cap_s, exact);
  };
  IdealDpResult r = run(problem, model);
  // A plan's exact DP that ran out of time (pairs collected, the DP not
  // finished) leaves the rest of the time to the grouped and coarsened DPs.
  if (r.ran && (bound || r.complete)) return r;
  IdealDpResult fallback = r;  // what a plan's DP returns when none finds one
  // Its split (found within the fit budget, unfinished) stays when the
  // fallbacks find none faster.
  auto r_better = [&](const IdealDpResult& x) {
    return r.found && (!x.found || r.bottleneck_s <= x.bottleneck_s);
  };
  const ShardingProblem grouped = GroupFreeSinks(problem, model);
  std::optional<Coarsened> merged;
  if (!grouped.colocate_group.empty()) {
    const DeviceModel grouped_model(grouped, p.analysis->device,
                                    p.analysis->precision);
    merged = ContractGroups(grouped, grouped_model, num_ipus);
  }
  if (merged) {
    const DeviceModel merged_model(merged->problem, p.analysis->device,
                                   p.analysis->precision);
    // Merging the problem's own colocate groups keeps the constrained
    // optimum (ContractGroups); grouping free sinks may lose it, but not
    // its relaxation with empty IPUs (Note [Free sinks]).
    const bool sinks_grouped = grouped.colocate_group != problem.colocate_group;
    IdealDpResult g;
    if (bound && sinks_grouped) {
      IdealDpOptions empty_ok = options;
      empty_ok.allow_empty_ipus = true;
      g = IdealDpHostBound(merged->problem, merged_model, num_ipus, cap_s,
                           empty_ok);
    } else {
      g = run(merged->problem, merged_model);
    }
    if (g.found && !bound) g.ipu = Refine(grouped, *merged, g.ipu);
    if (!bound && g.ran && r_better(g)) return r;
    if (bound || g.found || (g.ran && g.complete)) {
      *used_groups = sinks_grouped && !bound;
      if (how != nullptr) {
        *how = sinks_grouped ? " (free sinks and colocate groups merged)"
                             : " (colocate groups merged)";
      }
      return g;
    }
    if (g.ran && !r.found) fallback = g;
  }
  if (bound) return r;
  IdealDpResult c = CoarseHostDp(merged ? merged->problem : problem, p,
                                 num_ipus, cap_s, options);
  if (!c.ran || (!c.found && fallback.found) || r_better(c)) return fallback;
  if (c.found && merged) c.ipu = Refine(grouped, *merged, c.ipu);
  *used_groups = true;
  if (how != nullptr) {
    *how = absl::StrCat(" on the coarsened graph (", c.ideals,
                        " ideals; Note [Coarsened host DP])");
  }
  c.complete = false;  // the optimum of the coarse lattice only
  return c;
}

// The certified bound of a plan with host devices (Note [Host devices in
// solve]): the plan's DP `split` when it is its own bound, else the host
// DP's relaxation within options.bound_s, else the larger of Note [Host work
// bound]'s and Note [Host chain bound]'s ("host chain bound" when that is
// the larger). These hold over chains only; when a plan may return to IPU 0
// (`revisit_possible`, as Certify decides it: Note [Last stage on IPU 0]),
// only Note [Host work bound]'s, which holds for every placement.
void SetHostBound(Prepared& p, const Options& options,
                  const IdealDpOptions& dp_options, int num_ipus,
                  const IdealDpResult& split, bool split_grouped, double ipu_s,
                  bool revisit_possible, proto::Performance* perf) {
  const ShardingProblem& problem = p.analysis->problem;
  const double bottleneck = perf->bottleneck_s();
  const auto bound_start = std::chrono::steady_clock::now();
  auto set = [&](double bound_s, std::string method) {
    perf->set_lower_bound_s(bound_s);
    perf->set_certified_bound_s(bound_s);
    const double gap = bound_s > 0 ? 100 * (bottleneck / bound_s - 1) : 0;
    perf->set_gap_percent(gap);
    perf->set_certified_gap_percent(gap);
    perf->set_bound_method(std::move(method));
    perf->set_bound_seconds(std::chrono::duration<double>(
                                std::chrono::steady_clock::now() - bound_start)
                                .count());
  };
  if (revisit_possible) {
    set(std::min(bottleneck,
                 HostWorkBound(problem, p.analysis->device_model(), num_ipus)),
        "host work bound (a plan may return to IPU 0, which the host DP's "
        "chains leave out)");
    return;
  }
  // The plan's DP is its own bound when memory passed over no value and no
  // folded constant could fill an IPU the relaxation leaves empty (Note
  // [Empty IPUs], ideal_dp.cc): the optimum over every chain, or none below
  // the IPU-only plan's bottleneck.
  const bool no_constants =
      std::find(problem.is_constant.begin(), problem.is_constant.end(), 1) ==
      problem.is_constant.end();
  IdealDpResult bound;
  bool bound_grouped = split_grouped;
  if (split.complete && !split.memory_binding && no_constants &&
      !split_grouped) {
    bound = split;
    bound.found = true;
    if (!split.found) bound.bottleneck_s = ipu_s;
  } else {
    IdealDpOptions bound_options = dp_options;
    bound_options.deadline = bound_start + Milliseconds(options.bound_s);
    bound = HostDp(p, num_ipus, bottleneck, bound_options, /*bound=*/true,
                   &bound_grouped);
  }
  const bool exact = bound.found && bound.complete && !bound_grouped;
  double bound_s =
      exact ? std::min(bound.bottleneck_s, bottleneck)
            : HostWorkBound(problem, p.analysis->device_model(), num_ipus);
  std::string method = exact ? "ideal DP with host devices"
                             : "host work bound (the ideal DP with host "
                               "devices did not finish)";
  if (!exact) {
    // Note [Host chain bound] (solver/bound/host_bound.h), on the lattice
    // the DP would use (at most 32 MB of its bits, as the DP's).
    const int64_t words = std::max<int64_t>(1, (problem.num_nodes() + 63) / 64);
    const int64_t max_ideals =
        std::min<int64_t>(dp_options.max_ideals, (int64_t{1} << 22) / words);
    const DeviceModel& model = p.analysis->device_model();
    bool ran = false;
    double chain_s =
        HostChainBound(problem, model, num_ipus, bound_s, bottleneck,
                       max_ideals, nullptr, nullptr, &ran);
    // Too many ideals: the values of the problem with free sinks and
    // colocate groups merged (the same values; with folded constants a
    // group's compute would count them, so not then).
    if (!ran && no_constants) {
      const ShardingProblem grouped = GroupFreeSinks(problem, model);
      if (!grouped.colocate_group.empty()) {
        const DeviceModel grouped_model(grouped, p.analysis->device,
                                        p.analysis->precision);
        if (std::optional<Coarsened> merged =
                ContractGroups(grouped, grouped_model, num_ipus)) {
          const DeviceModel merged_model(merged->problem, p.analysis->device,
                                         p.analysis->precision);
          chain_s =
              HostChainBound(problem, model, num_ipus, bound_s, bottleneck,
                             max_ideals, &merged->problem, &merged_model);
        }
      }
    }
    chain_s = std::min(chain_s, bottleneck);
    if (chain_s > bound_s) {
      bound_s = chain_s;
      method =
          "host chain bound (the ideal DP with host devices did not finish)";
    }
  }
  set(bound_s, std::move(method));
}

}  // namespace

// Note [Host devices in solve]
// Only the ideal DP places nodes on the host (IdealDpHostSplit, exact over
// chains of IPU and host stages when the lattice is enumerated). The other
// strategies plan the IPUs alone (when no node is host_only): a valid plan
// that leaves the host empty, and a cap for the DP. The certified bound is
// the host DP's relaxation (IdealDpHostBound); the IPU-only bounds are not
// bounds once the host can take work, so without it the bound is the larger
// of Note [Host work bound]'s and Note [Host chain bound]'s (the IPU-only
// planner's bound is then not used). One budget, --max-search-seconds from
// the run's start: the IPU planner has half, the host DP the rest, and at
// least half of the budget from when the IPU planner returned.
absl::StatusOr<Plan> SolveWithHost(
    Prepared& p, const Options& options,
    std::chrono::steady_clock::time_point start) {
  const ShardingProblem& problem = p.analysis->problem;
  std::string host_only;
  for (int32_t v = 0; v < problem.num_nodes() && host_only.empty(); ++v)
    if (!problem.host_only.empty() && problem.host_only[v])
      host_only = problem.names[v];
  std::vector<std::string> notes;
  std::optional<Plan> ipu_plan;
  int num_ipus = options.num_ipus;
  auto ipu_done = std::chrono::steady_clock::now();
  if (host_only.empty()) {
    // One budget (--max-search-seconds from `start`): the IPU planner has
    // half of it, the host DP what is left.
    Options ipu_options = options;
    ipu_options.max_search_s = options.max_search_s / 2;
    absl::StatusOr<Plan> plan =
        PlanPreparedCount(p, ipu_options, nullptr, start);
    ipu_done = std::chrono::steady_clock::now();
    if (plan.ok()) {
      num_ipus = plan->proto.num_ipus();
      ipu_plan = std::move(*plan);
    } else if (num_ipus == kAutoIpus) {
      return plan.status();
    } else {
      // The IPUs alone may fail where the host helps (a constraint only a
      // host placement keeps): the host DP still runs.
      notes.push_back(
          absl::StrCat("the IPUs alone: ", plan.status().message()));
    }
  } else {
    if (num_ipus == kAutoIpus)
      return absl::InvalidArgumentError(absl::StrCat(
          "node '", host_only,
          "' runs only on the host: give --num-ipus N (auto plans the IPUs "
          "alone)"));
    notes.push_back(absl::StrCat(
        "strategies other than the ideal DP with host devices skipped: node '",
        host_only, "' runs only on the host"));
  }
  const double ipu_s = ipu_plan && ipu_plan->proto.fits()
                           ? ipu_plan->proto.performance().bottleneck_s()
                           : std::numeric_limits<double>::infinity();
  // More ideals than auto's DP allows (the host DP is the only one that
  // can use the host): 200,000 ideals (32 MB of their bits at most) and
  // 8 million pairs (about 170 MB).
  IdealDpOptions dp_options;
  dp_options.max_ideals = 200000;
  dp_options.max_pairs = 8000000;
  // The rest of --max-search-seconds (the IPU planner's share spent), and
  // at least half of it from when the IPU planner returned (with -n auto
  // that planner's minimum per count may spend all of it).
  dp_options.deadline =
      std::max(start + Milliseconds(options.max_search_s),
               ipu_done + Milliseconds(options.max_search_s / 2));
  bool split_grouped = false;
  std::string how;
  const IdealDpResult split = HostDp(p, num_ipus, ipu_s, dp_options,
                                     /*bound=*/false, &split_grouped, &how);
  std::optional<Plan> plan;
  // The DP's split is kept whenever it is faster, also when it leaves the
  // host empty (its lattice cap is above auto's, so it can beat the IPU
  // planner on the IPUs alone, or find a split where that planner failed),
  // unless it does not fit where the IPU planner's does (a coarsened DP
  // judges memory by groups).
  // The rebuilt plan's figures decide (Refine and PlaceConstants may move
  // them from the DP's), and a plan that does not fit is kept over an IPU
  // plan that does not fit either.
  if (split.found && split.bottleneck_s < ipu_s * (1 - 1e-9)) {
    Plan host_plan = HostPlan(p, options, num_ipus, split, start);
    const bool ipu_fits = ipu_plan && ipu_plan->proto.fits();
    if ((host_plan.proto.fits() || !ipu_fits) &&
        host_plan.proto.performance().bottleneck_s() < ipu_s * (1 - 1e-9)) {
      plan = std::move(host_plan);
      if (ipu_plan) {
        notes.push_back(absl::StrCat(
            "host devices: the ideal DP with them", how, " ",
            split.host_positions.empty() ? "(leaving the host empty) " : "",
            "beat the IPU planner (", ipu_plan->proto.strategy(), ", ",
            ipu_plan->proto.performance().bottleneck_s(), " s)"));
      }
    }
  }
  if (!plan && ipu_plan) {
    plan = std::move(ipu_plan);
    notes.push_back(
        split.complete
            ? "host devices: none speeds the plan up (ideal DP with them)"
        : split.ran && !how.empty()
            ? absl::StrCat("host devices: the ideal DP with them", how,
                           " found no faster split that fits; the host is "
                           "left empty")
            : absl::StrCat("host devices: the ideal DP with them did not ",
                           split.ran ? "finish in time" : "run", " (",
                           split.ideals, " ideals, ", split.pairs,
                           " pairs); the host is left empty"));
  } else if (!plan) {
    return absl::NotFoundError(absl::StrCat(
        "no split onto ", num_ipus, " IPUs and ", problem.num_host_devices,
        " host devices found: the ideal DP with host devices ",
        split.complete ? "found none that fits"
                       : (split.ran ? "ran out of time" : "did not run"),
        " (", split.ideals, " ideals)"));
  }
  // As Certify (plan_prepared.cc): auto may return a plan whose last stage
  // is on IPU 0.
  const bool revisit_possible =
      plan->proto.has_stages() ||
      (options.strategy == "auto" &&
       (options.weights == "variable" || FarApartWeight(problem).has_value()));
  SetHostBound(p, options, dp_options, num_ipus, split, split_grouped, ipu_s,
               revisit_possible, plan->proto.mutable_performance());
  for (std::string& note : notes) plan->proto.add_warnings(std::move(note));
  return std::move(*plan);
}

}  // namespace autoshard::internal
