// The `auto` strategy, the default (DESIGN.md §4.4): raw, search (more than
// one IPU), optimal, and search moves from optimal's split when it fits
// ("optimal+search": one node per subgraph, --optimal-perf style, at most
// kPolishCandidates splits in kPolishSeconds), the ideal DP ("ideal",
// solver/strategies/ideal_dp.h), the block DP on a graph of repeated
// segments ("blocks", solver/strategies/blocks/block_dp.h) or else over a
// segment chain ("segments", Note [Segment chain] in
// solver/strategies/blocks/block_chain.h); the best of
// them by BetterResult, then
// the slicing of the min-cut order ("min-cut order", MinCutOrder in
// solver/strategies/closure_cuts.h) and moves between ideals from the best
// ("<its name>+moves", solver/strategies/ideal_moves.h), then reader
// hoisting from the best ("<its name>+hoist",
// solver/strategies/reader_hoist.h), each kept when better. Never worse than
// raw. The plan lists every candidate's figures (proto::StrategyResult) and
// which was chosen.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_AUTO_STRATEGY_H_
#define AUTOSHARD_SOLVER_STRATEGIES_AUTO_STRATEGY_H_

#include <cstdint>
#include <vector>

#include "solver/strategies/strategy.h"

namespace autoshard {

// The budget of auto's last step, search moves from optimal's split.
inline constexpr int64_t kPolishCandidates = 2000;
inline constexpr double kPolishSeconds = 3;
// The budget of the moves between ideals from the best candidate.
inline constexpr double kIdealMovesSeconds = 2;
// The budget of reader hoisting from the best candidate (after the moves).
inline constexpr double kReaderHoistSeconds = 1;
// The least time the slicing with a last stage on IPU 0 gets when a weight
// is read far apart, even past --max-search-seconds (the other candidates
// may have spent it all): GPT-2 small's ~2,000 nodes need well under this.
inline constexpr double kRevisitMinSeconds = 2;
// The least time the block DP's candidate gets, even past
// --max-search-seconds (as kRevisitMinSeconds): on the Llama-2-70B-shaped
// graph (80 layers, 273,292 positions) it takes 1-3 s on a loaded 2-core
// machine.
inline constexpr double kBlocksMinSeconds = 2;
// The min-cut order's windows (tv_ssdlite320 on 16 IPUs: 16 windows gave
// 241.9 us, 64 gave 239.8, 256 gave 239.9).
inline constexpr int kMinCutOrderWindows = 64;

// auto's order, the first rule that tells them apart deciding:
//   1. a split that keeps the constraints beats one that breaks them
//      (StrategyResult::broken_constraint);
//   2. a split that fits beats one that does not;
//   3. when neither fits, the smaller fullest tile (max_tile_bytes), a
//      fullest tile of at most `tied_tile_bytes` counting as that many
//      (Note [Splits that do not fit]; 0, the default: each its own);
//   4. the smaller bottleneck — also between two splits that do not fit
//      with the same fullest tile (the tie rule: before the block DP such
//      a tie went to neither, and the first listed was kept);
//   5. the larger available memory proportion (the device's beats one the
//      search lowered).
// False when neither is better. For a fixed `tied_tile_bytes` a strict weak
// order (rule 3 compares max(max_tile_bytes, tied_tile_bytes)).
bool BetterResult(const StrategyResult& a, const StrategyResult& b,
                  int64_t tied_tile_bytes = 0);

// Note [Splits that do not fit]
// When no candidate fits, rule 3 ranks them by how far their fullest tile
// is from fitting. The model knows a fullest tile only to within the
// profile's memory band (Calibration::memory_error_band x bytes_per_tile,
// ipu2: 15% of a tile, the order of the temporaries it misses;
// docs/calibration.md §6), so a split whose fullest tile is smaller by less
// than that is not known to be closer to fitting, and preferring it would
// throw away a faster split for a difference the model cannot see (the
// Llama-2-70B shapes on 8 IPUs: raw's 12.16 MB against the block DP's
// 12.25 MB, 14% of a 639 kB tile, for 3% of the bottleneck). So auto ties
// every fullest tile up to m + band, m the smallest among the candidates
// that do not fit, and the fastest of those wins. The choice is never
// slower than rule 3 alone would make it (that choice, with fullest tile
// m, is among the tied), its fullest tile at most one band above m, and
// it is still reported as not fitting, with its own fullest tile. Where a
// candidate fits nothing changes (rule 2 decides first); a profile without
// a band (0) ties only equal tiles, as before.

// The `tied_tile_bytes` of Note [Splits that do not fit] for `results`:
// the smallest max_tile_bytes among those that do not fit plus
// `band_bytes` (>= 0), or 0 when every one fits (or there are none).
int64_t TiedTileBytes(const std::vector<const StrategyResult*>& results,
                      int64_t band_bytes);

// Calibration::memory_error_band x bytes_per_tile of `device`, in bytes
// (0 when the profile states no band).
int64_t MemoryBandBytes(const proto::DeviceProfile& device);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_AUTO_STRATEGY_H_
