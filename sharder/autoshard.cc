#include "sharder/autoshard.h"

#include <chrono>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "costmodel/device_model.h"
#include "costmodel/device_profile.h"
#include "costmodel/problem.h"
#include "graph/graph.h"
#include "graph/model_io.h"
#include "graph/naming.h"
#include "graph/status_macros.h"
#include "sharder/bound/certify.h"
#include "sharder/compile_oracle.h"
#include "sharder/emit.h"
#include "sharder/optimal_strategy.h"
#include "sharder/plan.h"
#include "sharder/prepare.h"
#include "sharder/problem_file.h"
#include "sharder/raw_strategy.h"
#include "sharder/search_strategy.h"
#include "sharder/sharding_points.h"
#include "sharder/strategies/ideal_dp.h"

namespace autoshard {
namespace {

// The search refines to one subgraph per node only up to this many nodes.
constexpr int kMaxNodeGranularity = 20000;

using internal::PrecisionName;
using internal::Prepare;
using internal::Prepared;

// Fills the tile-memory and performance figures of `plan` for assignment `a`.
void EvaluateOnDevice(const Prepared& p, const Options& options,
                      const proto::DeviceProfile& device, const Assignment& a,
                      Plan* plan) {
  proto::Plan& pp = plan->proto;
  DeviceModel model(p.problem, device, options.precision);
  pp.set_device(device.name());
  pp.set_available_memory_proportion(device.available_memory_proportion());
  pp.set_fits(true);
  int64_t worst_bytes = 0;
  for (int32_t d = 0; d < pp.ipus_size(); ++d) {
    const IpuMemory m = model.EvaluateMemory(a.ipu, d);
    *pp.mutable_ipus(d)->mutable_memory() = MemoryProto(m, d, device);
    if (!m.fits && (pp.fits() || m.max_tile_bytes > worst_bytes)) {
      // The message names the fullest tile of all (the compiler names one).
      pp.set_fits(false);
      worst_bytes = m.max_tile_bytes;
      pp.set_out_of_memory(model.OutOfMemoryMessage(d, m));
    }
  }
  const Performance perf =
      model.EvaluatePerformance(a.ipu, pp.ipus_size(), p.batch);
  for (int32_t d = 0; d < pp.ipus_size(); ++d) {
    pp.mutable_ipus(d)->set_stage_time_s(perf.stage_time_s[d]);
  }
  SetPerformanceProto(perf, pp.mutable_performance());
}

Plan FinishPlan(const Prepared& p, const Options& options, const Assignment& a,
                const std::vector<ShardingPoint>& points, std::string strategy,
                std::chrono::steady_clock::time_point start) {
  Plan plan;
  proto::Plan& pp = plan.proto;
  pp.set_strategy(std::move(strategy));
  pp.set_num_ipus(a.num_ipus());
  pp.set_batch_size(static_cast<int32_t>(p.batch));
  pp.set_precision(PrecisionName(options.precision));
  for (const ShardingPoint& pt : points) {
    auto* out = pp.add_sharding_points();
    out->set_node(p.problem.names[pt.node]);
    out->set_ipu(pt.ipu);
    out->set_pipeline_stage(pt.pipeline_stage);
  }
  for (auto& ipu : SummarizeIpus(p.problem, a)) *pp.add_ipus() = std::move(ipu);
  const int n = p.problem.num_nodes();
  for (int32_t node = 0; node < n; ++node) {
    auto* placement = pp.add_nodes();
    placement->set_node(p.problem.names[node]);
    placement->set_ipu(a.ipu[node]);
    placement->set_pipeline_stage(a.pipeline_stage[node]);
  }
  plan.node_names = p.problem.names;
  plan.ipu.assign(a.ipu.begin(), a.ipu.end());
  plan.pipeline_stage.assign(a.pipeline_stage.begin(), a.pipeline_stage.end());
  for (const auto& w : p.warnings) pp.add_warnings(w);
  proto::ModelSummary* s = pp.mutable_summary();
  s->set_num_nodes(n);
  s->set_total_flops(p.costs.total_flops);
  s->set_total_weight_bytes(p.costs.total_weight_bytes);
  s->set_nodes_named(p.naming.renamed_empty + p.naming.renamed_duplicate);
  for (const auto& op : p.costs.ops_without_rule) s->add_ops_without_rule(op);
  s->set_nodes_with_unknown_shapes(p.costs.nodes_with_unknown_shapes);
  EvaluateOnDevice(p, options, p.device, a, &plan);
  s->set_planning_s(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count());
  return plan;
}

// --strategy search (DESIGN.md §4.2) from the raw split `a`: PopRT's
// subgraphs first; when no split of them fits, finer ones (small subgraphs
// kept, then one node each, up to kMaxNodeGranularity nodes). Replaces `a`,
// fills `search`, and sets p->device's memory proportion to the one the
// result fits with.
absl::Status RunSearch(const onnx::ModelProto& model, const Options& options,
                       Prepared* prepared, Assignment* assignment,
                       proto::SearchSummary* summary,
                       std::string* compiler_message) {
  Prepared& p = *prepared;
  SearchOptions search_options;
  search_options.optimal_perf = options.optimal_perf;
  search_options.max_candidates = options.max_candidates;
  search_options.max_seconds = options.max_search_s;
  search_options.batch = p.batch;
  if (options.progress) {
    search_options.progress = [&](const SearchProgress& progress) {
      options.progress(progress.candidates, progress.best_max_tile_bytes);
    };
  }
  // The full model, named as the plan names it, for a compiler to judge.
  onnx::ModelProto named_model;
  std::unique_ptr<CompileOracle> compiler;
  if (!options.compile_cmd.empty()) {
    named_model = model;
    ASSIGN_OR_RETURN(
        NamingResult ignored,
        AssignNodeNames(options.strict_names, named_model.mutable_graph()));
    (void)ignored;
    compiler = std::make_unique<CompileOracle>(
        options.compile_cmd, named_model, options.model_dir,
        options.external_files, options.jobs);
    search_options.oracle =
        [&compiler](const std::vector<std::vector<int32_t>>& candidates,
                    double amp) -> absl::StatusOr<std::vector<OracleVerdict>> {
      ASSIGN_OR_RETURN(std::vector<CompileVerdict> verdicts,
                       compiler->Compile(candidates, amp));
      std::vector<OracleVerdict> out;
      for (const CompileVerdict& v : verdicts) {
        out.push_back({v.fits, v.tile, v.bytes, v.unparsable});
      }
      return out;
    };
  }
  const auto search_start = std::chrono::steady_clock::now();
  // Every weight is stored on at least one IPU: when they alone exceed the
  // memory of all the IPUs, no split fits and there is nothing to search.
  const double all_memory_bytes =
      static_cast<double>(options.num_ipus) * p.device.tiles_per_ipu() *
      static_cast<double>(p.device.bytes_per_tile());
  if (options.compile_cmd.empty() &&
      static_cast<double>(p.costs.total_weight_bytes) > all_memory_bytes) {
    DeviceModel model(p.problem, p.device, options.precision);
    int64_t fullest = 0;
    for (int32_t d = 0; d < options.num_ipus; ++d) {
      fullest = std::max(
          fullest, model.EvaluateMemory(assignment->ipu, d).max_tile_bytes);
    }
    summary->set_candidates(1);
    summary->set_raw_max_tile_bytes(fullest);
    summary->set_max_tile_bytes(fullest);
    summary->set_available_memory_proportion(
        p.device.available_memory_proportion());
    summary->set_optimal_perf(options.optimal_perf);
    summary->set_stop_reason(absl::StrCat(
        "the weights alone (", p.costs.total_weight_bytes,
        " bytes) exceed the memory of ", options.num_ipus, " IPUs"));
    return absl::OkStatus();
  }
  // PopRT's subgraphs first; when no split of them fits, finer ones: small
  // subgraphs kept, then one node each (up to kMaxNodeGranularity nodes).
  std::optional<SearchResult> found;
  int32_t found_subgraphs = 0;
  int64_t raw_max_tile_bytes = -1;  // of PopRT's granularity
  int64_t candidates = 0;
  int32_t previous_size = 0;
  search_options.retry_lower_proportions =
      false;  // once, over all levels, below
  std::string stop_reason;
  for (int level = 0; level < 3; ++level) {
    if (level == 2 && p.problem.num_nodes() > kMaxNodeGranularity) break;
    // Built only when needed: the finer sets cost a walk of the graph each.
    const SubgraphSet subgraphs =
        level == 0   ? SubgraphsFor(p.problem, options.num_ipus)
        : level == 1 ? SubgraphSet(p.problem, {.drop_small = false})
                     : SubgraphSet(p.problem, {.drop_small = false,
                                               .every_node_candidate = true});
    if (level > 0 && subgraphs.size() <= previous_size) continue;  // no finer
    previous_size = subgraphs.size();
    SearchOptions level_options = search_options;
    level_options.max_candidates = options.max_candidates - candidates;
    level_options.max_seconds =
        options.max_search_s -
        std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                      search_start)
            .count();
    if (level_options.max_candidates <= 0 || level_options.max_seconds <= 0) {
      stop_reason =
          level_options.max_candidates <= 0 ? "candidate limit" : "time limit";
      break;
    }
    ASSIGN_OR_RETURN(
        SearchResult r,
        SearchStrategy(p.problem, subgraphs,
                       RawSplitSubgraphs(subgraphs, options.num_ipus),
                       options.num_ipus, p.device, options.precision,
                       level_options));
    candidates += r.candidates;
    stop_reason = r.stop_reason;
    if (raw_max_tile_bytes < 0) raw_max_tile_bytes = r.raw_max_tile_bytes;
    const bool better = !found || (r.fits && !found->fits) ||
                        (r.fits == found->fits && !r.fits &&
                         r.max_tile_bytes < found->max_tile_bytes);
    if (better) {
      found = std::move(r);
      found_subgraphs = subgraphs.size();
    }
    if (found->fits) break;
  }
  if (!found)
    return absl::InternalError("the search ran out of time before it started");
  found->candidates = candidates;
  if (!found->fits) {
    // PopRT's last resort, on the closest split of every granularity.
    ASSIGN_OR_RETURN(
        std::optional<LowerProportionFit> lower,
        FitWithLowerProportion(p.problem, p.device, options.precision,
                               found->assignment.ipu, options.num_ipus,
                               search_options.oracle));
    if (lower) {
      found->fits = true;
      found->available_memory_proportion = lower->available_memory_proportion;
      found->max_tile_bytes = lower->max_tile_bytes;
      stop_reason = "fits with a lower memory proportion";
    }
  }
  *assignment = std::move(found->assignment);
  *compiler_message = found->compiler_message;
  summary->set_candidates(found->candidates);
  summary->set_raw_max_tile_bytes(raw_max_tile_bytes);
  summary->set_max_tile_bytes(found->max_tile_bytes);
  summary->set_fits(found->fits);
  summary->set_available_memory_proportion(found->available_memory_proportion);
  summary->set_lowered_memory_proportion(
      found->available_memory_proportion <
      p.device.available_memory_proportion());
  summary->set_optimal_perf(options.optimal_perf);
  summary->set_stop_reason(stop_reason);
  summary->set_subgraphs(found_subgraphs);
  summary->set_seconds(std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - search_start)
                           .count());
  // The plan is evaluated with the proportion the search settled on.
  p.device.set_available_memory_proportion(found->available_memory_proportion);
  return absl::OkStatus();
}

// Fills the assignment of the optimal strategy and its summary. Falls back
// to `fallback` (with a warning) when the DPs ran out of time before any
// found a split.
absl::Status RunOptimal(const Options& options, Prepared* prepared,
                        const Assignment& fallback, Assignment* assignment,
                        proto::OptimalSummary* summary) {
  Prepared& p = *prepared;
  const auto optimal_start = std::chrono::steady_clock::now();
  DeviceModel model(p.problem, p.device, options.precision);
  OptimalOptions optimal_options;
  optimal_options.max_seconds = options.max_search_s;
  absl::StatusOr<OptimalResult> r =
      OptimalStrategy(p.problem, model, options.num_ipus, optimal_options);
  if (!r.ok()) {
    if (!absl::IsDeadlineExceeded(r.status())) return r.status();
    p.warnings.push_back(absl::StrCat(
        "the optimal strategy found no split within --max-search-seconds ",
        options.max_search_s, "; the raw split is used"));
    *assignment = fallback;
    summary->set_complete(false);
    return absl::OkStatus();
  }
  *assignment = std::move(r->assignment);
  summary->set_order(r->order);
  summary->set_units(r->units);
  summary->set_fits(r->fits);
  summary->set_complete(r->complete);
  summary->set_bottleneck_s(r->bottleneck_s);
  summary->set_fit_evaluations(r->fit_evaluations);
  for (const OptimalResult::Tried& t : r->tried) {
    proto::OrderResult* o = summary->add_orders();
    o->set_order(t.order);
    o->set_units(t.units);
    o->set_fits(t.fits);
    o->set_bottleneck_s(t.bottleneck_s);
  }
  summary->set_seconds(std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - optimal_start)
                           .count());
  return absl::OkStatus();
}

// A split --strategy auto compares.
struct Candidate {
  std::string strategy;
  Assignment assignment;
  double available_memory_proportion = 0;  // judged with
  double seconds = 0;
  bool fits = false;
  double bottleneck_s = 0;
  int64_t max_tile_bytes = 0;
};

// Costs `c` with the tile-memory and performance models.
void Judge(const Prepared& p, const Options& options, Candidate* c) {
  proto::DeviceProfile device = p.device;
  device.set_available_memory_proportion(c->available_memory_proportion);
  DeviceModel model(p.problem, device, options.precision);
  const int k = options.num_ipus;
  c->fits = true;
  c->max_tile_bytes = 0;
  for (int32_t d = 0; d < k; ++d) {
    const IpuMemory m = model.EvaluateMemory(c->assignment.ipu, d);
    c->fits &= m.fits;
    c->max_tile_bytes = std::max(c->max_tile_bytes, m.max_tile_bytes);
  }
  c->bottleneck_s =
      model.EvaluatePerformance(c->assignment.ipu, k, p.batch).bottleneck_s;
}

// `auto`'s order: a split that fits beats one that does not; then the
// smaller bottleneck; on a tie the device's memory proportion beats a lowered
// one (search's retries). Among splits that do not fit, the smaller fullest
// tile.
bool Better(const Candidate& a, const Candidate& b) {
  if (a.fits != b.fits) return a.fits;
  if (!a.fits) return a.max_tile_bytes < b.max_tile_bytes;
  if (a.bottleneck_s != b.bottleneck_s) return a.bottleneck_s < b.bottleneck_s;
  return a.available_memory_proportion > b.available_memory_proportion;
}

// The optimal strategy slices an order in which a constant (a weight's
// Identity, say) may sit far from its reader; SinkConstants moves it there
// when the split is no worse for it (fewer cut tensors, fewer points).
void SinkConstantsIfNoWorse(const Prepared& p, const Options& options,
                            Assignment* a) {
  const double amp = p.device.available_memory_proportion();
  Candidate before{"", *a, amp}, after{"", SinkConstants(p.problem, *a), amp};
  if (after.assignment.ipu == a->ipu) return;
  Judge(p, options, &before);
  Judge(p, options, &after);
  if (!Better(before, after)) *a = std::move(after.assignment);
}

// Search moves from the optimal split (DESIGN.md §4.4): one node per
// subgraph, --optimal-perf style, on a small budget.
constexpr int64_t kPolishCandidates = 2000;
constexpr double kPolishSeconds = 3;

absl::StatusOr<std::optional<Assignment>> Polish(const Prepared& p,
                                                 const Options& options,
                                                 const Assignment& start,
                                                 double seconds_left) {
  if (options.num_ipus < 2 || p.problem.num_nodes() > kMaxNodeGranularity ||
      seconds_left <= 0) {
    return std::nullopt;
  }
  const SubgraphSet nodes(p.problem,
                          {.drop_small = false, .every_node_candidate = true});
  std::vector<int32_t> groups(nodes.size());
  for (int32_t s = 0; s < nodes.size(); ++s) {
    groups[s] = start.ipu[nodes.subgraphs()[s].nodes.front()];
  }
  SearchOptions search_options;
  search_options.optimal_perf = true;
  search_options.max_candidates =
      std::min<int64_t>(options.max_candidates, kPolishCandidates);
  search_options.max_seconds = std::min(seconds_left, kPolishSeconds);
  search_options.batch = p.batch;
  search_options.retry_lower_proportions = false;
  ASSIGN_OR_RETURN(
      SearchResult r,
      SearchStrategy(p.problem, nodes, std::move(groups), options.num_ipus,
                     p.device, options.precision, search_options));
  if (!r.fits) return std::nullopt;
  return std::move(r.assignment);
}

// auto's "ideal" candidate (sharder/strategies/ideal_dp.h): the fastest
// fitting monotone split, when the graph's ideals are few, with stage times
// at most `cap_s`, within `seconds`.
std::optional<Assignment> RunIdeal(const Prepared& p, const Options& options,
                                   double cap_s, double seconds) {
  if (options.num_ipus < 2 || seconds <= 0 ||
      p.problem.num_nodes() > kMaxNodeGranularity) {
    return std::nullopt;
  }
  DeviceModel model(p.problem, p.device, options.precision);
  IdealDpOptions ideal;
  ideal.deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(seconds));
  IdealDpResult r = IdealDpSplit(p.problem, model, options.num_ipus, cap_s,
                                 /*ignore_memory=*/false, ideal);
  if (!r.found) return std::nullopt;
  return Assignment{r.ipu, r.ipu};
}

// Sets the plan's certified bound (sharder/bound/certify.h) for its split.
void Certify(const Prepared& p, const Options& options, Plan* plan) {
  if (options.bound_s <= 0) return;  // the cheap bound, set already
  DeviceModel model(p.problem, p.device, options.precision);
  std::vector<int32_t> ipu(plan->ipu.begin(), plan->ipu.end());
  proto::Performance* perf = plan->proto.mutable_performance();
  SetCertificate(
      CertifyBound(p.problem, model, plan->proto.num_ipus(), ipu,
                   perf->bottleneck_s(), plan->proto.fits(), options.bound_s),
      perf);
}

// Everything after Prepare for one IPU count: the strategy, sharding points
// and figures. May lower p's memory proportion (search's retries).
absl::StatusOr<Plan> PlanPrepared(const onnx::ModelProto& model,
                                  const Options& options, Prepared& p,
                                  std::chrono::steady_clock::time_point start) {
  const int k = options.num_ipus;
  const int n = p.problem.num_nodes();
  if (k > n) {
    return absl::InvalidArgumentError(
        absl::StrCat("--num-ipus ", k, " exceeds the model's ", n,
                     " nodes: every IPU needs at least one node"));
  }
  const auto raw_start = std::chrono::steady_clock::now();
  Assignment a;
  if (k == 1) {
    a.ipu.assign(n, 0);
    a.pipeline_stage.assign(n, 0);
  } else {
    ASSIGN_OR_RETURN(a, RawStrategy(p.problem, k));
  }
  proto::SearchSummary search;
  proto::OptimalSummary optimal;
  std::vector<Candidate> candidates;
  std::string found_message;  // a compiler's failure without a tile
  int chosen = -1;            // auto: the candidate it chose
  const std::string& strategy = options.strategy;
  if (strategy == "search" && k > 1) {
    RETURN_IF_ERROR(RunSearch(model, options, &p, &a, &search, &found_message));
  } else if (strategy == "optimal") {
    const Assignment raw = a;
    RETURN_IF_ERROR(RunOptimal(options, &p, raw, &a, &optimal));
    SinkConstantsIfNoWorse(p, options, &a);
  } else if (strategy == "auto") {
    const double amp = p.device.available_memory_proportion();
    auto elapsed = [](std::chrono::steady_clock::time_point since) {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                           since)
          .count();
    };
    candidates.push_back({"raw", a, amp, elapsed(raw_start)});
    if (k > 1) {
      const auto t = std::chrono::steady_clock::now();
      Assignment searched = a;
      RETURN_IF_ERROR(
          RunSearch(model, options, &p, &searched, &search, &found_message));
      candidates.push_back({"search", std::move(searched),
                            p.device.available_memory_proportion(),
                            elapsed(t)});
      p.device.set_available_memory_proportion(amp);
    }
    const auto t = std::chrono::steady_clock::now();
    Assignment sliced;
    RETURN_IF_ERROR(RunOptimal(options, &p, a, &sliced, &optimal));
    SinkConstantsIfNoWorse(p, options, &sliced);
    candidates.push_back({"optimal", sliced, amp, elapsed(t)});
    if (optimal.fits()) {
      const auto t2 = std::chrono::steady_clock::now();
      ASSIGN_OR_RETURN(
          std::optional<Assignment> polished,
          Polish(p, options, sliced, options.max_search_s - elapsed(start)));
      if (polished) {
        candidates.push_back(
            {"optimal+search", std::move(*polished), amp, elapsed(t2)});
      }
    }
    const auto t3 = std::chrono::steady_clock::now();
    std::optional<Assignment> ideal =
        RunIdeal(p, options,
                 optimal.fits() ? optimal.bottleneck_s()
                                : std::numeric_limits<double>::infinity(),
                 options.max_search_s - elapsed(start));
    if (ideal)
      candidates.push_back({"ideal", std::move(*ideal), amp, elapsed(t3)});
    size_t best = 0;
    for (size_t i = 0; i < candidates.size(); ++i) {
      Judge(p, options, &candidates[i]);
      if (i > 0 && Better(candidates[i], candidates[best])) best = i;
    }
    a = candidates[best].assignment;
    p.device.set_available_memory_proportion(
        candidates[best].available_memory_proportion);
    if (candidates[best].strategy != "search") found_message.clear();
    chosen = static_cast<int>(best);
  }
  RETURN_IF_ERROR(ValidateAssignment(p.problem, a));
  ASSIGN_OR_RETURN(std::vector<ShardingPoint> points,
                   MinimalShardingPoints(p.problem, a));
  Plan plan = FinishPlan(p, options, a, points, strategy, start);
  Certify(p, options, &plan);
  if (options.keep_problem) {
    plan.problem =
        ToProblemProto(p.problem, p.device, options.precision, k, p.batch);
  }
  if (strategy == "search" || (strategy == "auto" && k > 1)) {
    *plan.proto.mutable_search() = search;
  }
  if (strategy == "optimal" || strategy == "auto") {
    *plan.proto.mutable_optimal() = optimal;
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    proto::StrategyResult* r = plan.proto.add_candidates();
    r->set_strategy(c.strategy);
    r->set_fits(c.fits);
    r->set_bottleneck_s(c.bottleneck_s);
    r->set_max_tile_bytes(c.max_tile_bytes);
    r->set_available_memory_proportion(c.available_memory_proportion);
    r->set_seconds(c.seconds);
    r->set_chosen(static_cast<int>(i) == chosen);
  }
  if (strategy == "search" && k > 1) {
    if (!options.compile_cmd.empty() && search.fits() && !plan.proto.fits()) {
      // The compiler accepted it: its word wins over the model's.
      plan.proto.add_warnings(
          absl::StrCat("the tile-memory model disagrees with the compile "
                       "command, which accepted the split: ",
                       plan.proto.out_of_memory()));
      plan.proto.set_fits(true);
      plan.proto.clear_out_of_memory();
    }
    if (!search.fits() && plan.proto.fits()) {
      // The compiler, not the model, said no.
      plan.proto.set_fits(false);
      plan.proto.set_out_of_memory(
          found_message.empty()
              ? absl::StrCat(
                    "the compile command accepted no split; the closest used ",
                    search.max_tile_bytes(), " bytes on its fullest tile")
              : absl::StrCat("the compile command accepted no split: ",
                             found_message));
    }
  }
  return plan;
}

}  // namespace

absl::Status Options::Validate() const {
  if (num_ipus < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--num-ipus must be at least 1 (or auto), got ", num_ipus));
  }
  if (max_ipus < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-ipus must be at least 1, got ", max_ipus));
  }
  if (strategy != "raw" && strategy != "search" && strategy != "optimal" &&
      strategy != "auto") {
    return absl::InvalidArgumentError(
        absl::StrCat("--strategy '", strategy,
                     "' is unknown (available: auto, optimal, search, raw)"));
  }
  if (max_candidates <= 0) {
    return absl::InvalidArgumentError("--max-candidates must be positive");
  }
  if (jobs < 1) return absl::InvalidArgumentError("--jobs must be at least 1");
  if (strategy != "search" && (!compile_cmd.empty() || jobs != 1)) {
    return absl::InvalidArgumentError(
        "--compile-cmd and --jobs need --strategy search");
  }
  if (strategy != "search" && strategy != "auto" && optimal_perf) {
    return absl::InvalidArgumentError(
        "--optimal-perf needs --strategy search or auto");
  }
  if (!(max_search_s > 0)) {
    return absl::InvalidArgumentError("--max-search-seconds must be positive");
  }
  if (!(bound_s >= 0)) {
    return absl::InvalidArgumentError(
        "--bound-seconds must be 0 (solver off) or more");
  }
  if (shapes.batch_size < 0) {
    return absl::InvalidArgumentError("--batch-size must be positive");
  }
  if (available_memory_proportion < 0 || available_memory_proportion > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--available-memory-proportion must be in (0, 1], got ",
                     available_memory_proportion));
  }
  return absl::OkStatus();
}

absl::StatusOr<Plan> PlanModel(const onnx::ModelProto& model,
                               const Options& options) {
  const auto start = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(options.Validate());
  ASSIGN_OR_RETURN(Prepared p, Prepare(model, options));
  if (options.num_ipus != kAutoIpus) {
    return PlanPrepared(model, options, p, start);
  }
  // --num-ipus auto: powers of two until a split fits.
  const int most = std::min(options.max_ipus, p.problem.num_nodes());
  if (most < 1) {
    return absl::InvalidArgumentError("the model's main graph has no nodes");
  }
  // Each count starts from what Prepare made (strategies may lower the
  // memory proportion and add warnings).
  const proto::DeviceProfile device = p.device;
  const std::vector<std::string> warnings = p.warnings;
  std::vector<int> tried;
  std::optional<Plan> plan;
  const auto loop_start = std::chrono::steady_clock::now();
  for (int k = 1; k <= most; k *= 2) {
    Options for_k = options;
    for_k.num_ipus = k;
    // The time limits are shared over the counts still to try, so a model
    // that fits nowhere costs about what one count would (at least 1 s each).
    int counts_left = 0;
    for (int c = k; c <= most; c *= 2) ++counts_left;
    const double spent_s = std::chrono::duration<double>(
                               std::chrono::steady_clock::now() - loop_start)
                               .count();
    for_k.max_search_s =
        std::max(1.0, (options.max_search_s - spent_s) / counts_left);
    for_k.bound_s = 0;  // the certified bound: the last count's only
    p.device = device;
    p.warnings = warnings;
    ASSIGN_OR_RETURN(plan, PlanPrepared(model, for_k, p, start));
    tried.push_back(k);
    if (plan->proto.fits()) break;
  }
  for (int k : tried) plan->proto.add_num_ipus_tried(k);
  Certify(p, options, &*plan);
  if (!plan->proto.fits()) {
    plan->proto.add_warnings(absl::StrCat(
        "--num-ipus auto: no power-of-two IPU count up to ", tried.back(),
        " fits; the plan is for ", tried.back(), " IPUs"));
  }
  return std::move(*plan);
}

absl::StatusOr<Plan> PlanFromShardingPoints(
    const onnx::ModelProto& model, const Options& options,
    const std::vector<NamedShardingPoint>& points) {
  const auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(Prepared p, Prepare(model, options));
  if (points.empty()) {
    // PopRT's rule sends unclaimed nodes to the last device: here device 0.
    // autoshard writes such a config for a 1-IPU plan.
    p.warnings.push_back(
        "the sharding config has no points: every node runs on IPU 0, "
        "pipeline stage 0");
  }
  std::vector<ShardingPoint> resolved;
  for (const NamedShardingPoint& named : points) {
    NodeId id = p.graph.FindNode(named.node);
    if (id == kNoNode) {
      return absl::InvalidArgumentError(
          absl::StrCat("sharding point names node '", named.node,
                       "', which the model does not have"));
    }
    resolved.push_back({id, named.ipu, named.pipeline_stage});
  }
  ASSIGN_OR_RETURN(Assignment a, ApplyShardingPoints(p.problem, resolved));
  RETURN_IF_ERROR(ValidateAssignment(p.problem, a));
  // PopART runs a pipeline stage on one IPU (and `split` needs that).
  std::map<int32_t, std::set<int32_t>> ipus_of_stage;
  for (int32_t node = 0; node < p.problem.num_nodes(); ++node)
    ipus_of_stage[a.pipeline_stage[node]].insert(a.ipu[node]);
  for (const auto& [stage, ipus] : ipus_of_stage) {
    if (ipus.size() < 2) continue;
    p.warnings.push_back(absl::StrCat(
        "pipeline stage ", stage, " runs on IPUs ", absl::StrJoin(ipus, ", "),
        ": PopART pipelines need one IPU per stage (and `split` refuses "
        "such a plan)"));
  }
  return FinishPlan(p, options, a, resolved, "apply", start);
}

absl::Status ApplyPlan(const Plan& plan, onnx::ModelProto* model) {
  onnx::GraphProto* graph = model->mutable_graph();
  if (graph->node_size() != static_cast<int>(plan.node_names.size())) {
    return absl::FailedPreconditionError(
        absl::StrCat("the plan is for a graph of ", plan.node_names.size(),
                     " nodes; this one has ", graph->node_size()));
  }
  auto named = AssignNodeNames(/*strict=*/false, graph);
  if (!named.ok()) return named.status();
  for (int i = 0; i < graph->node_size(); ++i) {
    onnx::NodeProto* node = graph->mutable_node(i);
    if (node->name() != plan.node_names[i]) {
      return absl::FailedPreconditionError(absl::StrCat(
          "node #", i, " is '", node->name(), "' but the plan has '",
          plan.node_names[i], "': not the model that was planned"));
    }
    SetPlacement(plan.ipu[i], plan.pipeline_stage[i], node);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ShardModelBytes(absl::string_view model_bytes,
                                            const Options& options,
                                            Plan* plan_out) {
  ASSIGN_OR_RETURN(onnx::ModelProto model,
                   ParseModelBytes(model_bytes, "model bytes"));
  ASSIGN_OR_RETURN(Plan plan, PlanModel(model, options));
  RETURN_IF_ERROR(ApplyPlan(plan, &model));
  std::string out;
  if (!model.SerializeToString(&out)) {
    return absl::InternalError("cannot serialize the annotated model");
  }
  if (plan_out != nullptr) *plan_out = std::move(plan);
  return out;
}

}  // namespace autoshard
