// The `search` strategy as the planner runs it (DESIGN.md §4.2): SearchStrategy
// (solver/strategies/search_strategy.h) on PopRT's subgraphs first; when no
// split of them fits, on finer ones (small subgraphs kept, then one node each,
// up to kMaxNodeGranularity nodes); when still none fits, the closest split
// with a lower available memory proportion.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "costmodel/node_bound.h"
#include "solver/strategies/builtin.h"
#include "solver/strategies/raw_strategy.h"
#include "solver/strategies/search_strategy.h"

namespace autoshard {
namespace {

SearchOptions SearchOptionsOf(const StrategyContext& c) {
  SearchOptions o;
  o.optimal_perf = c.optimal_perf;
  o.max_candidates = c.max_candidates;
  o.max_seconds = c.max_search_s;
  o.batch = c.batch;
  if (c.progress) {
    o.progress = [progress = c.progress](const SearchProgress& p) {
      progress(p.candidates, p.best_max_tile_bytes);
    };
  }
  o.oracle = c.oracle;
  o.retry_lower_proportions = false;  // once, over all levels, below
  return o;
}

// Every weight is stored on at least one IPU: when they alone exceed the
// memory of all the IPUs, no split fits and there is nothing to search.
std::optional<StrategyResult> WeightsExceedMemory(const StrategyContext& c,
                                                  const Assignment& raw) {
  const ShardingProblem& p = *c.problem;
  int64_t weight_bytes = 0;
  for (int64_t w : p.weight_size_bytes)
    weight_bytes = SaturatingAdd(weight_bytes, w);
  const double all_memory_bytes =
      static_cast<double>(c.num_ipus) * c.device.tiles_per_ipu() *
      static_cast<double>(c.device.bytes_per_tile());
  // Nor when a node alone overflows an IPU (costmodel/node_bound.h).
  const std::optional<OverflowingNode> too_big =
      NodeThatNoIpuHolds(p, c.Model());
  if (c.oracle ||
      (!too_big && static_cast<double>(weight_bytes) <= all_memory_bytes)) {
    return std::nullopt;
  }
  StrategyResult r = Evaluated(c, raw, c.device.available_memory_proportion());
  proto::SearchSummary& s = *r.summary.mutable_search();
  s.set_candidates(1);
  s.set_raw_max_tile_bytes(r.evaluation.max_tile_bytes);
  s.set_max_tile_bytes(r.evaluation.max_tile_bytes);
  s.set_available_memory_proportion(c.device.available_memory_proportion());
  s.set_optimal_perf(c.optimal_perf);
  s.set_stop_reason(too_big ? too_big->message
                            : absl::StrCat("the weights alone (", weight_bytes,
                                           " bytes) exceed the memory of ",
                                           c.num_ipus, " IPUs"));
  return r;
}

// The best search over the granularity levels, and what they tried.
struct LevelsResult {
  std::optional<SearchResult> found;
  int32_t found_subgraphs = 0;
  int64_t raw_max_tile_bytes = -1;  // of PopRT's granularity
  int64_t candidates = 0;
  std::string stop_reason;
};

absl::StatusOr<LevelsResult> SearchLevels(const StrategyContext& c,
                                          const SearchOptions& options) {
  const ShardingProblem& p = *c.problem;
  const auto search_start = std::chrono::steady_clock::now();
  LevelsResult out;
  int32_t previous_size = 0;
  for (int level = 0; level < 3; ++level) {
    if (level == 2 && p.num_nodes() > kMaxNodeGranularity) break;
    // Built only when needed: the finer sets cost a walk of the graph each.
    const SubgraphSet subgraphs =
        level == 0   ? SubgraphsFor(p, c.num_ipus)
        : level == 1 ? SubgraphSet(p, {.drop_small = false})
                     : SubgraphSet(p, {.drop_small = false,
                                       .every_node_candidate = true});
    if (level > 0 && subgraphs.size() <= previous_size) continue;  // no finer
    previous_size = subgraphs.size();
    SearchOptions level_options = options;
    level_options.max_candidates = c.max_candidates - out.candidates;
    level_options.max_seconds = c.max_search_s - SecondsSince(search_start);
    if (level_options.max_candidates <= 0 || level_options.max_seconds <= 0) {
      out.stop_reason =
          level_options.max_candidates <= 0 ? "candidate limit" : "time limit";
      break;
    }
    ASSIGN_OR_RETURN(SearchResult r,
                     SearchStrategy(c.Models(), subgraphs,
                                    RawSplitSubgraphs(subgraphs, c.num_ipus),
                                    c.num_ipus, level_options));
    out.candidates += r.candidates;
    out.stop_reason = r.stop_reason;
    if (out.raw_max_tile_bytes < 0)
      out.raw_max_tile_bytes = r.raw_max_tile_bytes;
    const bool better = !out.found || (r.fits && !out.found->fits) ||
                        (r.fits == out.found->fits && !r.fits &&
                         r.max_tile_bytes < out.found->max_tile_bytes);
    if (better) {
      out.found = std::move(r);
      out.found_subgraphs = subgraphs.size();
    }
    if (out.found->fits) break;
  }
  return out;
}

}  // namespace

absl::StatusOr<StrategyResult> SearchFrom(const StrategyContext& c,
                                          const Assignment& raw) {
  const double amp = c.device.available_memory_proportion();
  if (c.num_ipus < 2) return Evaluated(c, raw, amp);
  if (std::optional<StrategyResult> r = WeightsExceedMemory(c, raw)) {
    return *std::move(r);
  }
  const auto search_start = std::chrono::steady_clock::now();
  const SearchOptions options = SearchOptionsOf(c);
  ASSIGN_OR_RETURN(LevelsResult levels, SearchLevels(c, options));
  if (!levels.found) {
    return absl::InvalidArgumentError(
        "the search ran out of time before it started: raise "
        "--max-search-seconds");
  }
  SearchResult& found = *levels.found;
  if (!found.fits) {
    // PopRT's last resort, on the closest split of every granularity.
    ASSIGN_OR_RETURN(std::optional<LowerProportionFit> lower,
                     FitWithLowerProportion(c.Models(), found.assignment.ipu,
                                            c.num_ipus, options.oracle));
    if (lower) {
      found.fits = true;
      found.available_memory_proportion = lower->available_memory_proportion;
      found.max_tile_bytes = lower->max_tile_bytes;
      levels.stop_reason = "fits with a lower memory proportion";
    }
  }
  // The plan is evaluated with the proportion the search settled on.
  const std::vector<int32_t> judged = found.assignment.ipu;
  StrategyResult r = Evaluated(c, std::move(found.assignment),
                               found.available_memory_proportion);
  // Evaluated repairs a split that breaks a constraint (Note [Constraints in
  // every strategy]): then neither the search's memory figures nor the
  // compiler's verdict are the plan's.
  const bool repaired = r.assignment.ipu != judged;
  if (repaired) {
    found.fits = r.evaluation.fits;
    found.max_tile_bytes = r.evaluation.max_tile_bytes;
    found.compiler_message.clear();
  }
  proto::SearchSummary& s = *r.summary.mutable_search();
  s.set_candidates(levels.candidates);
  s.set_raw_max_tile_bytes(levels.raw_max_tile_bytes);
  s.set_max_tile_bytes(found.max_tile_bytes);
  s.set_fits(found.fits);
  s.set_available_memory_proportion(found.available_memory_proportion);
  s.set_lowered_memory_proportion(found.available_memory_proportion < amp);
  s.set_optimal_perf(c.optimal_perf);
  s.set_stop_reason(levels.stop_reason);
  s.set_subgraphs(levels.found_subgraphs);
  s.set_seconds(SecondsSince(search_start));
  // A repaired split was not compiled: the planner has it compiled
  // (CompileInOrder) as it does the other strategies' splits.
  if (c.oracle && !repaired) r.compiler_fits = found.fits;
  r.compiler_message = found.compiler_message;
  return r;
}

namespace {

class Search : public Strategy {
 public:
  absl::string_view name() const override { return "search"; }
  // PopRT's way: a compiler judges every candidate as the search goes.
  bool accepts_oracle() const override { return true; }
  bool optimal_perf() const override { return true; }
  absl::StatusOr<StrategyResult> Run(const StrategyContext& c) const override {
    ASSIGN_OR_RETURN(Assignment raw, RawSplit(c));
    return SearchFrom(c, raw);
  }
};

}  // namespace

const Strategy& SearchStrategyInstance() {
  static const Search search;
  return search;
}

}  // namespace autoshard
