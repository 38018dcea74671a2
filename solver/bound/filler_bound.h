// The filler bound: the ideal DP's bound (solver/strategies/ideal_dp.h) on
// a smaller problem whose optimum is still a lower bound on the original's,
// for graphs whose ideals are too many because of many small sources (a
// quantized model's DequantizeLinear of each weight and bias: each doubles
// the ideals).
//
// Note [Filler bound]
// Two steps turn the problem into one with far fewer ideals (PopART's
// adjacent copies; folded constants as in Note [Ideals]):
// 1. Merge: a source s (no producer but folded constants) read by one node v
//    alone, whose output bytes B satisfy B / link_bytes_per_s >= time(s),
//    joins v. Moving s from its IPU a to v's IPU d of any monotone split
//    keeps it monotone and no stage slower: IPU a loses time(s) and copies,
//    IPUs a+1..d-1 lose copies, and IPU d gains time(s) but receives B bytes
//    fewer (B / link seconds at least, DeviceModel::CopySeconds). The move
//    may leave an IPU without a node, so the DP lets IPUs be empty.
// 2. Fill: every other source s whose output bytes B satisfy B / link <
//    time(s) <= Σ time / 4k (a small one) becomes filler: its tensors are
//    dropped (fewer copies: a
//    relaxation) and its compute joins a pool F that may go to any IPU.
//    For a split of the rest with stage times t_d, the best use of the pool
//    gives a bottleneck <= T only if every t_d <= T and Σ (T - t_d) >= F.
// So T is a lower bound when no chain of ideals of the reduced problem has
// every stage time <= T and Σ stage times <= k T - F (IdealDpFillerBound,
// bisection over T). Exact when there are no fillers and no move empties an
// IPU; loose by at most what the pool's placement and the dropped bytes give.
// Step 2 is a relaxation for any size limit; a "small" source is one of at
// most Σ time / 4k' with k' = k first. When the reduced lattice still has too
// many ideals (at large k few sources are that small: tv_quant_resnet18_int8
// at 128 IPUs), k' is halved and the DP tried again, down to k' = 1: a
// bigger pool, fewer ideals, a weaker but still valid bound.
#ifndef AUTOSHARD_SOLVER_BOUND_FILLER_BOUND_H_
#define AUTOSHARD_SOLVER_BOUND_FILLER_BOUND_H_

#include <chrono>
#include <cstdint>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"

namespace autoshard {

struct FillerBoundOptions {
  int64_t max_ideals = 20000;  // of the reduced problem; else not run
  std::chrono::steady_clock::time_point deadline =
      std::chrono::steady_clock::time_point::max();
  // k' of the first try (Note [Filler bound]); 0: num_ipus. Tests set it to
  // check the larger pools' bounds.
  int first_share_ipus = 0;
};

struct FillerBoundResult {
  bool ran = false;                 // the reduced lattice was small enough
  double bound_s = 0;               // valid lower bound when ran (>= lower_s)
  int32_t merged = 0, fillers = 0;  // sources of steps 1 and 2
  int64_t ideals = 0;               // of the reduced problem (at most +1)
  int share_ipus = 0;               // k' of the try that ran (or the last)
};

// Note [Filler bound] onto `num_ipus` IPUs; `lower_s`: a valid bound already
// known, `upper_s`: the bottleneck of some monotone split (the plan's).
// Adjacent-stage copies only (through host: not run). Never fails.
FillerBoundResult FillerBound(const ShardingProblem& problem,
                              const DeviceModel& model, int num_ipus,
                              double lower_s, double upper_s,
                              const FillerBoundOptions& options);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_BOUND_FILLER_BOUND_H_
