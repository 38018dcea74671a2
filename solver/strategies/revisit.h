// Shared weights and a last pipeline stage that returns to IPU 0 (issue 29;
// Note [A stage revisits an IPU], costmodel/plan_evaluation.h).
//
// Note [Last stage on IPU 0]
// A weight read far apart — GPT-2's token embedding, read by the first
// Gather and by the LM head at the very end — is stored on two IPUs by a
// split whose stage k runs on IPU k, and PopART refuses such a split when the
// weights are variables ("Can not copy variable tensor ... between virtual
// graphs when pipelining", willow/src/transforms/pipeline.cpp). Graphcore's
// GPT-2 puts the LM head back on IPU 0 instead (graphcore/examples
// nlp/gpt2/pytorch): k IPUs run k + 1 stages. The dominant case is solved
// exactly: over one topological order of units u_0..u_{m-1}, the last slice
// [t, m) runs on IPU 0 as stage k, and for each t the DP of Note [Slicing DP]
// slices [0, t) over the k IPUs with the first slice's time increased by
// the last slice's (its compute and the copies it receives) and its memory
// costed with the last slice's nodes (one IPU holds both, each weight once).
// t runs from m - 1 down while the last slice's compute alone is below the
// best bottleneck found (it only grows), so the result is the fastest such
// slicing of the order under the DP's times. With variable weights, the
// cuts that would put a weight's readers on two IPUs are ruled out:
// readers all before t stay within one slice, and a weight read both before
// and from t has its earlier readers in the first slice.
#ifndef AUTOSHARD_SOLVER_STRATEGIES_REVISIT_H_
#define AUTOSHARD_SOLVER_STRATEGIES_REVISIT_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "costmodel/device_model.h"
#include "costmodel/problem.h"
#include "solver/strategies/optimal_strategy.h"
#include "solver/strategies/strategy.h"

namespace autoshard {

// A weight and the IPUs its readers run on (ascending).
struct WeightIpus {
  int32_t weight = -1;
  std::vector<int32_t> ipus;
};

// The largest floating-point weight (ShardingProblem::weight_is_float;
// ties: the lowest id) that `ipu_of_node`'s nodes read on two or more IPUs,
// if any: what --weights variable forbids. O(Σ weights read).
std::optional<WeightIpus> WeightOnTwoIpus(
    const ShardingProblem& problem, const std::vector<int32_t>& ipu_of_node);

// The largest floating-point weight (ties: the lowest id) of at least 1% of
// the model's weight bytes read far apart: by two nodes more than half the
// topological order apart (GPT-2's tied embedding and LM head: 30% of GPT-2
// small's weights), if any; the weights Note [Last stage on IPU 0] is for
// (a small one saves too little to be worth the search). O(Σ weights read).
std::optional<int32_t> FarApartWeight(const ShardingProblem& problem);

// A slicing of Note [Last stage on IPU 0]: cuts has k + 1 unit positions
// 0 = c_0 < ... < c_k = t < m; slice j (0 <= j < k) runs on IPU j as stage
// j, units [t, m) on IPU 0 as stage k.
struct RevisitSlicing {
  bool found = false;
  bool fits = false;
  bool complete = true;  // every DP finished within deadline and budget
  double bottleneck_s = 0;
  std::vector<int32_t> cuts;
  int64_t fit_evaluations = 0;
};

// The fastest slicing of `order` (at least num_ipus + 1 units, num_ipus >=
// 2) whose last slice returns to IPU 0, faster than `beat_s` (infinity: any),
// fitting unless none does (then the fastest ignoring memory, fits =
// false); with `variable_weights`, only slicings that keep every weight's
// readers on one IPU.
RevisitSlicing SliceWithLastStageOnIpu0(
    const ShardingProblem& problem, const DeviceModel& model,
    const SliceOrder& order, int num_ipus, bool variable_weights, double beat_s,
    std::chrono::steady_clock::time_point deadline,
    int64_t max_fit_evaluations = 50000);

// The placement of a RevisitSlicing of `order`: nodes of slice j on IPU j,
// stage j; of the last slice on IPU 0, stage num_ipus.
Assignment RevisitAssignment(const SliceOrder& order,
                             const std::vector<int32_t>& cuts, int num_nodes);

// auto's candidate: the best RevisitSlicing over the optimal strategy's
// orders within `seconds`, evaluated (constants sunk to their readers when
// no worse and stage 0 keeps a node), faster than `beat_s` when it fits; none
// when num_ipus < 2, nothing was found or time ran out.
std::optional<StrategyResult> RevisitCandidate(const StrategyContext& c,
                                               double beat_s, double seconds);

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_STRATEGIES_REVISIT_H_
