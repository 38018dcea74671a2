// The `search` strategy: PopRT's search, done against the tile-memory model
// instead of a compiler run per candidate (DESIGN.md §4.2).
//
// Starting from the raw split's groups of subgraphs (one group per IPU), while
// some IPU overflows, the neighbours of a split move one boundary subgraph of
// the IPU with the fullest tile: a start (bottom) subgraph, none of whose
// kids is on the IPU, to the next group that consumes it; an end (top)
// subgraph, none of whose parents is on the IPU, to the previous group that
// feeds it; and either kind to the least-loaded group it may join (moves of
// every overflowing IPU are tried, the fullest first). A move is
// allowed when every parent stays on an earlier or the same group and every
// kid on a later or the same group (the plan stays monotone), and the group
// it leaves keeps a subgraph. Neighbours are visited breadth-first with a
// visited set (a Zobrist hash of the subgraph -> group map); as in PopRT, only
// splits no worse than the closest failure seen are expanded. Without
// optimal_perf the first split that fits wins. With it, the 5 most balanced
// fitting splits (by compute time: FLOPs weighted by each op class's
// efficiency) are kept and improved by moves off their slowest group that
// reduce the imbalance, and the fitting split with the best estimated
// bottleneck seen, the start included, wins: never worse than the start. If
// nothing fits, the closest split is tried again with available memory
// proportion 0.3, then 0.1.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_SEARCH_STRATEGY_H_
#define AUTOSHARD_SOLVER_STRATEGIES_SEARCH_STRATEGY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "costmodel/cost_model.h"
#include "costmodel/device_models.h"
#include "costmodel/problem.h"
#include "proto/device.pb.h"
#include "solver/strategies/defaults.h"
#include "solver/strategies/oracle.h"
#include "solver/strategies/sharding_points.h"
#include "solver/strategies/subgraphs.h"

namespace autoshard {

// Reported about once a second while a search runs.
struct SearchProgress {
  int64_t candidates = 0;           // splits evaluated so far
  int64_t best_max_tile_bytes = 0;  // the fullest tile of the closest split
  bool found_fit = false;
  double elapsed_s = 0;
};

struct SearchOptions {
  bool optimal_perf = false;  // keep searching for the best bottleneck
  // Splits to evaluate before stopping (> 0), and time to spend (> 0).
  int64_t max_candidates = kDefaultMaxCandidates;
  double max_seconds = kDefaultMaxSearchSeconds;
  // While no split fits: stop after this many candidates without a closer
  // split (a smaller fullest tile). At POD scale the closest split's fullest
  // tile is often one IPU's that no move reaches, and the rest of the
  // budget would be spent on a plateau (issue 15).
  int64_t max_stall_candidates = 20000;
  int64_t batch = 1;  // samples per pipeline step (performance)
  std::function<void(const SearchProgress&)> progress;  // may be empty
  // Without a fitting split, retry the closest with proportion 0.3, 0.1.
  bool retry_lower_proportions = true;
  // When set, a real compiler decides whether a split fits and which tile
  // overflows (PopRT's way); the tile-memory model still orders the moves.
  SearchOracle oracle;
};

struct SearchResult {
  Assignment assignment;  // IPU = pipeline stage = group
  bool fits = false;
  // The proportion the result fits with: the profile's, or 0.3 / 0.1 after
  // the retries; the profile's when nothing fits.
  double available_memory_proportion = 0;
  int64_t candidates = 0;          // splits evaluated
  int64_t raw_max_tile_bytes = 0;  // the raw split's fullest tile
  // The result's fullest tile, costed with available_memory_proportion
  // (INT64_MAX when a compiler failed without naming a tile).
  int64_t max_tile_bytes = 0;
  std::string compiler_message;  // that failure's message, if any
  // Why it stopped: "a split fits", "no move left", "candidate limit",
  // "time limit", "no closer split in N candidates" (with optimal_perf, "a
  // split fits" is never the reason).
  std::string stop_reason;
};

struct LowerProportionFit {
  double available_memory_proportion = 0;  // 0.3 or 0.1
  int64_t max_tile_bytes = 0;              // costed with it
};

// PopRT's last resort: does the split `ipu_of_node` fit with available memory
// proportion 0.3, else 0.1 (only those below models.profile()'s)? Judged by
// the tile-memory model (models.At(proportion)), or by `oracle` when set.
// nullopt when neither fits.
absl::StatusOr<std::optional<LowerProportionFit>> FitWithLowerProportion(
    const DeviceModels& models, const std::vector<int32_t>& ipu_of_node,
    int num_ipus, const SearchOracle& oracle);

// Runs the search on `subgraphs` starting from `start_groups` (group per
// subgraph, e.g. RawSplitSubgraphs; every group 0..num_ipus-1 non-empty and
// the split monotone). Deterministic. Errors: InvalidArgument for a start
// that is not such a split or options out of range.
absl::StatusOr<SearchResult> SearchStrategy(const ShardingProblem& problem,
                                            const SubgraphSet& subgraphs,
                                            std::vector<int32_t> start_groups,
                                            int num_ipus,
                                            const proto::DeviceProfile& device,
                                            Precision precision,
                                            const SearchOptions& options);

// The same with the run's device models (models.problem() on
// models.profile()), which the search and its retries take their
// DeviceModels from instead of building them.
absl::StatusOr<SearchResult> SearchStrategy(const DeviceModels& models,
                                            const SubgraphSet& subgraphs,
                                            std::vector<int32_t> start_groups,
                                            int num_ipus,
                                            const SearchOptions& options);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_SEARCH_STRATEGY_H_
