#include "solver/bound/filler_bound.h"

#include <chrono>
#include <vector>

#include "solver/strategies/coarsen.h"
#include "solver/strategies/ideal_dp.h"
#include "solver/strategies/ideal_lattice.h"

namespace autoshard {
namespace {

// A source is a filler only when it takes at most Σ time / (this x k'): a
// costlier one in the pool would make the bound weak (still valid).
constexpr double kFillerShare = 4;

// Step 1's and step 2's choices: the node each merged source joins (-1: not
// merged), and which sources are fillers.
struct Reduction {
  std::vector<int32_t> joins;
  std::vector<uint8_t> filler;
};

Reduction Reduce(const ShardingProblem& p, const DeviceModel& model,
                 const std::vector<uint8_t>& passive, int share_ipus) {
  const int n = p.num_nodes();
  Reduction r{std::vector<int32_t>(n, -1), std::vector<uint8_t>(n, 0)};
  double total_s = 0;
  for (int32_t v = 0; v < n; ++v) total_s += model.NodeTime(v);
  const double small_s = total_s / (kFillerShare * share_ipus);
  for (int32_t s = 0; s < n; ++s) {
    if (passive[s]) continue;
    bool source = true;
    for (int32_t u : p.producers[s]) source &= passive[u] != 0;
    if (!source) continue;
    double bytes = 0;  // of the tensors that cross when s's reader is later
    for (size_t slot = 0; slot < p.output_bytes[s].size(); ++slot)
      if (!p.output_consumers[s][slot].empty())
        bytes += static_cast<double>(p.output_bytes[s][slot]);
    const double copy_s = bytes / model.profile().link_bytes_per_s();
    if (copy_s < model.NodeTime(s)) {
      r.filler[s] = model.NodeTime(s) <= small_s;
    } else if (p.consumers[s].size() == 1) {
      r.joins[s] = p.consumers[s][0];
    }
  }
  return r;
}

// Groups numbered in topological order: a merged source takes its reader's
// group, made when the reader is reached.
std::vector<int32_t> GroupsOf(const ShardingProblem& p, const Reduction& r) {
  std::vector<int32_t> group(p.num_nodes(), -1);
  std::vector<std::vector<int32_t>> joined(p.num_nodes());
  for (int32_t s = 0; s < p.num_nodes(); ++s)
    if (r.joins[s] >= 0) joined[r.joins[s]].push_back(s);
  int32_t next = 0;
  for (int32_t v : p.topo_order) {
    if (r.joins[v] >= 0) continue;
    group[v] = next++;
    for (int32_t s : joined[v]) group[s] = group[v];
  }
  return group;
}

}  // namespace

FillerBoundResult FillerBound(const ShardingProblem& problem,
                              const DeviceModel& model, int num_ipus,
                              double lower_s, double upper_s,
                              const FillerBoundOptions& options) {
  FillerBoundResult result;
  result.bound_s = lower_s;
  if (num_ipus < 2 || problem.copies_through_host || !(lower_s < upper_s))
    return result;
  const std::vector<uint8_t> constants = PassiveConstants(problem);
  // Note [Filler bound]: k' = k, k / 2, ..., 1 until the reduced lattice is
  // small enough.
  int share =
      options.first_share_ipus > 0 ? options.first_share_ipus : num_ipus;
  for (;; share /= 2) {
    result = FillerBoundResult();
    result.bound_s = lower_s;
    result.share_ipus = share;
    std::vector<uint8_t> passive = constants;
    const Reduction r = Reduce(problem, model, passive, share);
    double filler_s = 0;
    for (int32_t v = 0; v < problem.num_nodes(); ++v) {
      result.merged += r.joins[v] >= 0;
      if (!r.filler[v]) continue;
      ++result.fillers;
      filler_s += model.NodeTime(v);
      passive[v] = 1;
    }
    if (result.merged + result.fillers > 0) {
      const Coarsened reduced =
          CoarsenGroups(problem, model, GroupsOf(problem, r), passive);
      // Its times are node_time_s (each group's Σ NodeTime, Coarsen's),
      // which the model takes over the precision's peak.
      const DeviceModel reduced_model(reduced.problem, model.profile(),
                                      Precision::kFp32);
      IdealDpOptions dp;
      dp.max_ideals = options.max_ideals;
      dp.deadline = options.deadline;
      const IdealDpResult b =
          IdealDpFillerBound(reduced.problem, reduced_model, num_ipus, filler_s,
                             lower_s, upper_s, dp);
      result.ideals = b.ideals;
      result.ran = b.ran && b.found;
      if (result.ran) {
        result.bound_s = std::max(lower_s, b.bottleneck_s);
        return result;
      }
      // Ran but found nothing, or stopped by the clock: a bigger pool only
      // weakens it.
      if (b.ran || std::chrono::steady_clock::now() >= options.deadline)
        return result;
    }
    if (share <= 1) return result;
  }
  return result;
}

}  // namespace autoshard
