#include "solver/strategies/auto_strategy.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/deadline.h"
#include "base/saturating.h"
#include "base/status_macros.h"
#include "solver/strategies/auto_steps.h"
#include "solver/strategies/blocks/block_split.h"
#include "solver/strategies/builtin.h"
#include "solver/strategies/coarsen.h"
#include "solver/strategies/constraints.h"
#include "solver/strategies/ideal_dp.h"
#include "solver/strategies/optimal_strategy.h"
#include "solver/strategies/revisit.h"
#include "solver/strategies/search_strategy.h"
#include "solver/strategies/sharding_points.h"
#include "solver/strategies/subgraphs.h"

namespace autoshard {
namespace {

using auto_internal::Candidate;
using auto_internal::Hoisted;
using auto_internal::Moved;
using auto_internal::SlicedMinCutOrder;

// Search moves from `start` (DESIGN.md §4.4): one node per subgraph,
// --optimal-perf style, on a small budget; nullopt when it finds no fitting
// split or is not worth running.
absl::StatusOr<std::optional<Assignment>> Polish(const StrategyContext& c,
                                                 const Assignment& start,
                                                 double seconds_left) {
  const ShardingProblem& p = *c.problem;
  if (c.num_ipus < 2 || p.num_nodes() > kMaxNodeGranularity ||
      seconds_left <= 0) {
    return std::nullopt;
  }
  const SubgraphSet nodes(p,
                          {.drop_small = false, .every_node_candidate = true});
  std::vector<int32_t> groups(nodes.size());
  for (int32_t s = 0; s < nodes.size(); ++s) {
    groups[s] = start.ipu[nodes.subgraphs()[s].nodes.front()];
  }
  SearchOptions options;
  options.optimal_perf = true;
  options.max_candidates =
      std::min<int64_t>(c.max_candidates, kPolishCandidates);
  options.max_seconds = std::min(seconds_left, kPolishSeconds);
  options.batch = c.batch;
  options.retry_lower_proportions = false;
  ASSIGN_OR_RETURN(SearchResult r,
                   SearchStrategy(c.Models(), nodes, std::move(groups),
                                  c.num_ipus, options));
  if (!r.fits) return std::nullopt;
  return std::move(r.assignment);
}

// When the graph has too many ideals: the DP over the coarsened graph (Note
// [Coarsening]), groups of at most Σ time / (32 k), else / (16 k), ... /
// (2 k): the finest whose lattice is small enough; then once more with lone
// sources joining their reader whatever the cap (quantized models: a
// weight's DequantizeLinear per Conv), when faster: both are candidates
// (memory is judged on the nodes by auto's Evaluated, not on the groups).
// `*ran` says whether some coarsened DP ran.
std::vector<Assignment> RunCoarseIdeal(const StrategyContext& c,
                                       const DeviceModel& model, double cap_s,
                                       const IdealDpOptions& ideal, bool* ran) {
  const ShardingProblem& p = *c.problem;
  double total_s = 0;
  for (int32_t n = 0; n < p.num_nodes(); ++n) total_s += model.NodeTime(n);
  std::vector<Assignment> found;
  for (bool sources_join : {false, true}) {
    for (int parts = 32 * c.num_ipus; parts >= 2 * c.num_ipus; parts /= 2) {
      const Coarsened coarse = Coarsen(p, model, total_s / parts, sources_join);
      const DeviceModel coarse_model(coarse.problem, c.device, c.precision);
      const IdealDpResult r =
          IdealDpSplit(coarse.problem, coarse_model, c.num_ipus, cap_s,
                       /*ignore_memory=*/true, ideal);
      *ran |= r.ran;
      if (r.found) {
        std::vector<int32_t> ipu = Refine(p, coarse, r.ipu);
        found.push_back(Assignment{ipu, ipu});
        // The second pass must beat this one; a stage time is at most it.
        cap_s = std::min(cap_s, r.bottleneck_s * (1 - 1e-9));
      }
      if (r.found || r.ran ||
          std::chrono::steady_clock::now() > ideal.deadline) {
        break;
      }
    }
  }
  return found;
}

// RunIdeal's splits, and when it gave none (or only on the coarsened
// graph), why, for the plan's gave_up.
struct IdealRun {
  std::vector<Assignment> found;
  std::string gave_up;  // "" when the exact DP found its split
};

// auto's "ideal" candidate (solver/strategies/ideal_dp.h): the fastest
// fitting monotone split, when the graph's ideals are few (else
// RunCoarseIdeal's), with stage times at most `cap_s`, within `seconds`.
IdealRun RunIdeal(const StrategyContext& c, double cap_s, double seconds) {
  const ShardingProblem& p = *c.problem;
  if (c.num_ipus < 2) return {};
  if (seconds <= 0)
    return {{}, "ideal: not run: --max-search-seconds was spent before it"};
  if (p.num_nodes() > kMaxNodeGranularity) {
    return {{},
            absl::StrCat("ideal: not run: ", p.num_nodes(),
                         " nodes, above its limit of ", kMaxNodeGranularity)};
  }
  const DeviceModel& model = c.Model();
  IdealDpOptions ideal;
  ideal.deadline = SecondsAfter(std::chrono::steady_clock::now(), seconds);
  IdealDpResult r = IdealDpSplit(p, model, c.num_ipus, cap_s,
                                 /*ignore_memory=*/false, ideal);
  if (r.found) return {{Assignment{r.ipu, r.ipu}}, ""};
  if (r.ran) {
    return {{},
            absl::StrCat("ideal: ", r.ideals, " ideals, ", r.pairs, " pairs: ",
                         r.complete
                             ? "no fitting monotone split is faster than "
                               "optimal's"
                             : "stopped by --max-search-seconds or its budget "
                               "of tile-memory evaluations before a split")};
  }
  // Colocation groups merged (constraints.h's ContractGroups): the same
  // constrained optimum, memory judged by Evaluated, from fewer ideals.
  if (std::optional<Coarsened> merged = ContractGroups(p, model, c.num_ipus)) {
    const DeviceModel merged_model(merged->problem, c.device, c.precision);
    const IdealDpResult g =
        IdealDpSplit(merged->problem, merged_model, c.num_ipus, cap_s,
                     /*ignore_memory=*/true, ideal);
    if (g.found) {
      std::vector<int32_t> ipu = Refine(p, *merged, g.ipu);
      return {{Assignment{ipu, ipu}}, ""};
    }
  }
  const std::string why =
      r.pairs > ideal.max_pairs
          ? absl::StrCat("more than ", ideal.max_pairs,
                         " pairs of ideals within optimal's bottleneck")
          : absl::StrCat("more ideals than its limit (", ideal.max_ideals,
                         ", or 32 MB of them)");
  bool coarse_ran = false;
  std::vector<Assignment> found =
      RunCoarseIdeal(c, model, cap_s, ideal, &coarse_ran);
  std::string gave_up = absl::StrCat(
      "ideal: the exact DP did not run: ", why, "; ",
      !found.empty() ? "its split is the coarsened graph's DP's"
      : coarse_ran   ? "the coarsened graph's DP found no split faster than "
                       "optimal's"
                     : "the coarsened graphs had too many ideals too, or "
                       "time ran out");
  return {std::move(found), std::move(gave_up)};
}

// Whether `a` is a plan (ValidateAssignment) on all k IPUs.
bool PlanOnEveryIpu(const ShardingProblem& p, const Assignment& a, int k) {
  return a.num_ipus() == k && ValidateAssignment(p, a).ok();
}

// The ideal DP's fastest split that keeps the constraints, memory not
// judged (on the graph with colocate groups merged when it has too many
// ideals), within `seconds`; nullopt when neither DP finds one that uses
// every IPU (mapping the merged graph's split back may empty one).
std::optional<Assignment> KeepingConstraints(const StrategyContext& c,
                                             double seconds) {
  const ShardingProblem& p = *c.problem;
  if (c.num_ipus < 2 || p.num_nodes() > kMaxNodeGranularity) {
    return std::nullopt;
  }
  IdealDpOptions ideal;
  ideal.deadline = SecondsAfter(std::chrono::steady_clock::now(), seconds);
  const IdealDpResult r = IdealDpSplit(p, c.Model(), c.num_ipus,
                                       std::numeric_limits<double>::infinity(),
                                       /*ignore_memory=*/true, ideal);
  if (r.found) {
    Assignment a{r.ipu, r.ipu};
    if (PlanOnEveryIpu(p, a, c.num_ipus)) return a;
  }
  if (std::optional<Coarsened> merged =
          ContractGroups(p, c.Model(), c.num_ipus)) {
    const DeviceModel merged_model(merged->problem, c.device, c.precision);
    const IdealDpResult g = IdealDpSplit(
        merged->problem, merged_model, c.num_ipus,
        std::numeric_limits<double>::infinity(), /*ignore_memory=*/true, ideal);
    if (g.found) {
      std::vector<int32_t> ipu = Refine(p, *merged, g.ipu);
      Assignment a{ipu, ipu};
      if (PlanOnEveryIpu(p, a, c.num_ipus)) return a;
    }
  }
  return std::nullopt;
}

proto::StrategyResult CandidateProto(const Candidate& c, bool chosen) {
  proto::StrategyResult r;
  r.set_strategy(c.strategy);
  r.set_fits(c.result.evaluation.fits);
  r.set_bottleneck_s(c.result.evaluation.performance.bottleneck_s);
  r.set_max_tile_bytes(c.result.evaluation.max_tile_bytes);
  r.set_available_memory_proportion(c.result.available_memory_proportion);
  r.set_seconds(c.seconds);
  r.set_chosen(chosen);
  return r;
}

// The candidates but `best`, best first by BetterResult (with auto's
// `tied_tile_bytes`), each split once (and not `best`'s).
std::vector<RunnerUp> RunnersUp(const std::vector<Candidate>& candidates,
                                size_t best, int64_t tied_tile_bytes) {
  std::vector<size_t> order;
  for (size_t i = 0; i < candidates.size(); ++i) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return BetterResult(candidates[a].result, candidates[b].result,
                        tied_tile_bytes);
  });
  std::vector<RunnerUp> out;
  std::vector<const std::vector<int32_t>*> seen = {
      &candidates[best].result.assignment.ipu};
  for (size_t i : order) {
    const StrategyResult& r = candidates[i].result;
    if (!r.broken_constraint.empty()) continue;
    if (std::any_of(seen.begin(), seen.end(), [&](const auto* ipu) {
          return *ipu == r.assignment.ipu;
        })) {
      continue;
    }
    seen.push_back(&r.assignment.ipu);
    out.push_back(
        {candidates[i].strategy, r.assignment, r.available_memory_proportion});
  }
  return out;
}

class Auto : public Strategy {
 public:
  absl::string_view name() const override { return "auto"; }
  bool optimal_perf() const override { return true; }
  absl::StatusOr<StrategyResult> Run(const StrategyContext& c) const override;
};

absl::StatusOr<StrategyResult> Auto::Run(const StrategyContext& c) const {
  const double amp = c.device.available_memory_proportion();
  std::vector<Candidate> candidates;
  auto t = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(Assignment raw, RawSplit(c));
  candidates.push_back({"raw", Evaluated(c, raw, amp), SecondsSince(t)});
  std::optional<proto::SearchSummary> search;
  if (c.num_ipus > 1) {
    t = std::chrono::steady_clock::now();
    ASSIGN_OR_RETURN(StrategyResult searched, SearchFrom(c, raw));
    if (searched.summary.has_search()) search = searched.summary.search();
    candidates.push_back({"search", std::move(searched), SecondsSince(t)});
  }
  t = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(StrategyResult sliced, OptimalOrRaw(c, raw));
  std::optional<proto::OptimalSummary> optimal;
  if (sliced.summary.has_optimal()) optimal = sliced.summary.optimal();
  std::vector<std::string> warnings = sliced.warnings;
  candidates.push_back({"optimal", sliced, SecondsSince(t)});
  if (optimal->fits()) {
    t = std::chrono::steady_clock::now();
    ASSIGN_OR_RETURN(
        std::optional<Assignment> polished,
        Polish(c, sliced.assignment, c.max_search_s - SecondsSince(c.start)));
    if (polished) {
      candidates.push_back({"optimal+search",
                            Evaluated(c, std::move(*polished), amp),
                            SecondsSince(t)});
    }
  }
  t = std::chrono::steady_clock::now();
  std::optional<StrategyResult> ideal;  // the best of RunIdeal's
  // With constraints optimal's slicing may have been repaired (Note
  // [Constraints in every strategy]): the cap is the repaired split's.
  double ideal_cap_s = optimal->fits()
                           ? optimal->bottleneck_s()
                           : std::numeric_limits<double>::infinity();
  if (c.problem->HasConstraints()) {
    ideal_cap_s = sliced.evaluation.fits && sliced.broken_constraint.empty()
                      ? sliced.evaluation.performance.bottleneck_s
                      : std::numeric_limits<double>::infinity();
  }
  IdealRun ideal_run =
      RunIdeal(c, ideal_cap_s, c.max_search_s - SecondsSince(c.start));
  for (Assignment& a : ideal_run.found) {
    // A split that leaves an IPU without a node is no plan (plan_prepared.cc
    // refuses it): vad_silero_v5 onto 4 IPUs, whose only Constant was an
    // IPU's one node, once node times made moving it off look faster.
    if (!ValidateAssignment(*c.problem, a).ok()) continue;
    StrategyResult r = Evaluated(c, std::move(a), amp);
    if (!ideal || BetterResult(r, *ideal)) ideal = std::move(r);
  }
  if (ideal) candidates.push_back({"ideal", *ideal, SecondsSince(t)});
  // Repeated blocks (a transformer's layers): the block DP's split.
  t = std::chrono::steady_clock::now();
  double fastest_s = std::numeric_limits<double>::infinity();
  for (const Candidate& x : candidates)
    fastest_s =
        std::min(fastest_s, x.result.evaluation.performance.bottleneck_s);
  // At most half the search budget (a review: with all that is left, and
  // the time given back below, auto ran twice --max-search-seconds).
  std::optional<BlockSplit> blocks = BlockDpSplit(
      c,
      std::max(
          std::min(c.max_search_s - SecondsSince(c.start), c.max_search_s / 2),
          kBlocksMinSeconds),
      fastest_s);
  // The block DP's time is its own: every step after it (the min-cut order,
  // the moves, the revisit) gets the time it had before the block DP
  // existed, so a plan is never slower for it (on graphs with repeats the
  // moves once got nothing). The search may so take up to the block DP's
  // time, at most max(half of --max-search-seconds, kBlocksMinSeconds),
  // longer.
  const double search_s = c.max_search_s + SecondsSince(t);
  // A chain of single-node cuts' split is listed now (as before the cuts
  // were widened: the Llama rows' moves start from it); any other is
  // judged now and listed after the first moves (below).
  std::optional<Candidate> blocks_candidate;
  if (blocks) {
    Candidate x{blocks->name, Evaluated(c, std::move(blocks->assignment), amp),
                SecondsSince(t)};
    if (blocks->single_node_cuts) {
      candidates.push_back(std::move(x));
    } else {
      blocks_candidate = std::move(x);
    }
  }
  // No candidate keeps the constraints (none fits, say): the fastest split
  // that keeps them whatever its memory, so a plan that does not fit is
  // given rather than none.
  if (std::none_of(candidates.begin(), candidates.end(),
                   [](const Candidate& x) {
                     return x.result.broken_constraint.empty();
                   })) {
    t = std::chrono::steady_clock::now();
    if (std::optional<Assignment> kept = KeepingConstraints(
            c, std::max(search_s - SecondsSince(c.start), 1.0))) {
      candidates.push_back(
          {"ideal", Evaluated(c, std::move(*kept), amp), SecondsSince(t)});
    }
  }
  // --weights variable: a split with a weight's readers on two IPUs does
  // not compile, so any that does not beats it.
  auto allowed = [&](size_t i) {
    return !c.variable_weights ||
           !WeightOnTwoIpus(*c.problem, candidates[i].result.assignment.ipu);
  };
  // Keeping the constraints first, then allowed.
  auto standing = [&](size_t i) {
    return 2 * static_cast<int>(
                   candidates[i].result.broken_constraint.empty()) +
           static_cast<int>(allowed(i));
  };
  // Note [Splits that do not fit] (auto_strategy.h): the fullest tiles tied
  // among the candidates of the best standing, set by choose().
  const int64_t band_bytes = MemoryBandBytes(c.device);
  int64_t tied_tile_bytes = 0;
  auto better = [&](size_t i, size_t than) {
    if (standing(i) != standing(than)) return standing(i) > standing(than);
    return BetterResult(candidates[i].result, candidates[than].result,
                        tied_tile_bytes);
  };
  // The best candidate (the first listed of equals), the tie recomputed
  // over every candidate so far.
  auto choose = [&] {
    int top = 0;
    for (size_t i = 0; i < candidates.size(); ++i)
      top = std::max(top, standing(i));
    std::vector<const StrategyResult*> tops;
    for (size_t i = 0; i < candidates.size(); ++i)
      if (standing(i) == top) tops.push_back(&candidates[i].result);
    tied_tile_bytes = TiedTileBytes(tops, band_bytes);
    size_t chosen = 0;
    for (size_t i = 1; i < candidates.size(); ++i) {
      if (better(i, chosen)) chosen = i;
    }
    return chosen;
  };
  size_t best = choose();
  // Each judged candidate is listed, and chosen when better.
  auto consider = [&](std::optional<Candidate> found) {
    if (!found ||
        !ValidateAssignment(*c.problem, found->result.assignment).ok())
      return;
    candidates.push_back(std::move(*found));
    best = choose();
  };
  consider(
      SlicedMinCutOrder(c, candidates[best], search_s - SecondsSince(c.start)));
  consider(Moved(c, candidates[best], search_s - SecondsSince(c.start)));
  // Note [Balanced min-cut order] (closure_cuts.h): kept only when faster,
  // and then moved too. The moves above ran first, from the same start as
  // without it: a balanced order that is faster before the moves may be
  // slower after them.
  const size_t before_balanced = best;
  consider(SlicedMinCutOrder(c, candidates[best],
                             search_s - SecondsSince(c.start),
                             /*balanced=*/true));
  if (best != before_balanced) {
    consider(Moved(c, candidates[best], search_s - SecondsSince(c.start)));
  }
  // The block DP's other splits (widened cuts, a segment chain), kept only
  // when faster, and then moved too: as for the balanced order, the moves
  // above ran from the start they had without it, since a split faster
  // before the moves may be slower after them (ocr_ppocrv4_det at 4 and 8
  // IPUs, tv_quant_resnet18_int8 at 16: 0.2-0.9% slower when listed
  // before them).
  if (blocks_candidate) {
    const size_t before_blocks = best;
    consider(std::move(blocks_candidate));
    if (best != before_blocks) {
      consider(Moved(c, candidates[best], search_s - SecondsSince(c.start)));
    }
  }
  // Note [Reader hoisting] (reader_hoist.h): from the best so far, kept
  // only when faster.
  consider(Hoisted(c, candidates[best], search_s - SecondsSince(c.start)));
  // A weight read far apart (or, with variable weights, no split yet that
  // keeps a weight's readers on one IPU): a last stage back on IPU 0
  // (Note [Last stage on IPU 0]), kept when faster.
  const std::optional<int32_t> far = FarApartWeight(*c.problem);
  std::optional<PlanEvaluation> other;
  if (far || !allowed(best)) {
    t = std::chrono::steady_clock::now();
    std::optional<StrategyResult> revisit = RevisitCandidate(
        c, std::numeric_limits<double>::infinity(),
        std::max(search_s - SecondsSince(c.start), kRevisitMinSeconds));
    if (revisit) {
      const size_t before = best;
      const bool before_allowed = allowed(before);
      const size_t count = candidates.size();
      consider(Candidate{"last stage on IPU 0", std::move(*revisit),
                         SecondsSince(t)});
      // Only when the revisiting split became a candidate (consider()
      // drops one that leaves an IPU without a node): otherwise `last`
      // would name an earlier, non-revisiting candidate.
      const size_t last = candidates.size() - 1;
      if (candidates.size() > count) {
        if (best == last && before_allowed) {
          other = candidates[before].result.evaluation;
        } else if (best != last && allowed(last)) {
          other = candidates[last].result.evaluation;
        }
      }
    }
  }
  StrategyResult out = candidates[best].result;
  if (far) out.shared_weight = *far;
  out.other_evaluation = std::move(other);
  if (candidates[best].strategy != "search") {
    out.compiler_message.clear();
    out.compiler_fits.reset();
  }
  out.summary.Clear();
  if (search) *out.summary.mutable_search() = *search;
  if (optimal) *out.summary.mutable_optimal() = *optimal;
  out.warnings = std::move(warnings);
  for (size_t i = 0; i < candidates.size(); ++i) {
    *out.summary.add_candidates() = CandidateProto(candidates[i], i == best);
  }
  if (!ideal_run.gave_up.empty()) out.summary.add_gave_up(ideal_run.gave_up);
  out.runners_up = RunnersUp(candidates, best, tied_tile_bytes);
  if (c.variable_weights) {
    out.runners_up.erase(
        std::remove_if(
            out.runners_up.begin(), out.runners_up.end(),
            [&](const RunnerUp& r) {
              return WeightOnTwoIpus(*c.problem, r.assignment.ipu).has_value();
            }),
        out.runners_up.end());
  }
  return out;
}

}  // namespace

bool BetterResult(const StrategyResult& a, const StrategyResult& b,
                  int64_t tied_tile_bytes) {
  const PlanEvaluation& x = a.evaluation;
  const PlanEvaluation& y = b.evaluation;
  if (a.broken_constraint.empty() != b.broken_constraint.empty())
    return a.broken_constraint.empty();
  if (x.fits != y.fits) return x.fits;
  if (!x.fits) {
    const int64_t tx = std::max(x.max_tile_bytes, tied_tile_bytes);
    const int64_t ty = std::max(y.max_tile_bytes, tied_tile_bytes);
    if (tx != ty) return tx < ty;
  }
  if (x.performance.bottleneck_s != y.performance.bottleneck_s) {
    return x.performance.bottleneck_s < y.performance.bottleneck_s;
  }
  return a.available_memory_proportion > b.available_memory_proportion;
}

int64_t TiedTileBytes(const std::vector<const StrategyResult*>& results,
                      int64_t band_bytes) {
  std::optional<int64_t> least;
  for (const StrategyResult* r : results) {
    if (r->evaluation.fits) continue;
    least = std::min(least.value_or(r->evaluation.max_tile_bytes),
                     r->evaluation.max_tile_bytes);
  }
  return least ? SaturatingAdd(*least, std::max<int64_t>(band_bytes, 0)) : 0;
}

int64_t MemoryBandBytes(const proto::DeviceProfile& device) {
  const double band = device.calibration().memory_error_band() *
                      static_cast<double>(device.bytes_per_tile());
  return band > 0 ? static_cast<int64_t>(band) : 0;
}

const Strategy& AutoStrategyInstance() {
  static const Auto strategy;
  return strategy;
}

}  // namespace autoshard
