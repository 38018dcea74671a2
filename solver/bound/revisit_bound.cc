#include "solver/bound/revisit_bound.h"

#include <algorithm>
#include <vector>

#include "solver/bound/certify.h"
#include "solver/bound/cut_bound.h"
#include "solver/bound/heavy_bound.h"

namespace autoshard {
ShardingProblem DropHeadTailReads(const ShardingProblem& problem,
                                  const DeviceModel& model, double upper_s,
                                  int64_t* dropped) {
  const int n = problem.num_nodes();
  // The heaviest path into (out of) each node, its own time included: at
  // most the compute of it and its ancestors (descendants).
  std::vector<double> anc_s(n, 0);
  for (int32_t v : problem.topo_order) {
    for (int32_t u : problem.producers[v])
      anc_s[v] = std::max(anc_s[v], anc_s[u]);
    anc_s[v] += model.NodeTime(v);
  }
  const std::vector<double> desc_s = HeaviestPathsOutS(problem, model);
  ShardingProblem r = problem;
  r.node_time_s.assign(n, 0);
  for (int32_t v = 0; v < n; ++v) r.node_time_s[v] = model.NodeTime(v);
  // Dropping more than the note asks only relaxes further: a rounding
  // margin up, never down.
  const double limit_s = upper_s * (1 + 1e-12);
  int64_t count = 0;
  for (int32_t p = 0; p < n; ++p) {
    if (anc_s[p] > limit_s) continue;
    bool any = false;
    for (size_t slot = 0; slot < r.output_consumers[p].size(); ++slot) {
      std::vector<int32_t>& readers = r.output_consumers[p][slot];
      const auto keep_end = std::stable_partition(
          readers.begin(), readers.end(),
          [&](int32_t c) { return anc_s[p] + desc_s[c] > limit_s; });
      for (auto it = keep_end; it != readers.end(); ++it) {
        auto& inputs = r.input_tensors[*it];
        inputs.erase(std::remove(inputs.begin(), inputs.end(),
                                 std::make_pair(p, static_cast<int32_t>(slot))),
                     inputs.end());
        ++count;
        any = true;
      }
      readers.erase(keep_end, readers.end());
    }
    if (!any) continue;
    // The node-level edges p -> c no tensor of p carries any more.
    std::vector<int32_t>& consumers = r.consumers[p];
    for (auto it = consumers.begin(); it != consumers.end();) {
      const int32_t c = *it;
      if (anc_s[p] + desc_s[c] > limit_s) {
        ++it;
        continue;
      }
      bool still = false;
      for (const auto& readers : r.output_consumers[p])
        still |= std::find(readers.begin(), readers.end(), c) != readers.end();
      if (still) {
        ++it;
        continue;
      }
      auto& producers = r.producers[c];
      producers.erase(std::remove(producers.begin(), producers.end(), p),
                      producers.end());
      it = consumers.erase(it);
    }
  }
  if (dropped) *dropped = count;
  return r;
}

RevisitBoundResult RevisitBound(const ShardingProblem& problem,
                                const DeviceModel& model, int num_ipus,
                                double upper_s,
                                const CutBoundOptions& cut_options) {
  RevisitBoundResult result;
  if (num_ipus < 2 || !(upper_s > 0)) return result;
  const ShardingProblem relaxed =
      DropHeadTailReads(problem, model, upper_s, &result.dropped);
  // Its times are node_time_s, which the model takes over the precision's
  // peak (as the filler bound's reduced problem).
  const DeviceModel relaxed_model(relaxed, model.profile(), Precision::kFp32);
  const int stages = num_ipus + 1;
  // Note [Late branches] only on the sharper bound below (it costs the
  // most, and a chain it accepts is one this DP accepts too).
  CutBoundOptions whole;
  whole.late_share = 0;
  whole.end_ideals = cut_options.end_ideals;
  const CutBoundResult cut =
      CutBound(relaxed, relaxed_model, stages, upper_s, whole);
  result.out_of_work = cut.out_of_work;
  result.bound_s = cut.bound_s;  // at least the cheap bound for k + 1
  result.method = "min-cut on k + 1 stages";
  // Note [Heavy-node bound] on R_T: the IPU holding v is a stage of Q
  // (costing at most its IPU's time in the plan), and the other k - 1 IPUs
  // hold the rest of the compute (for v in S_0 or S_k IPU 0 holds S_k or
  // S_0 too, which only adds to its time: Note [Heavy node and the rest]'s
  // lambda >= 1/k weighs it at least as much as the rest loses). Before the
  // revisit cut bound, so Note [Late branches]'s costly pass there runs only
  // where it may prove more.
  HeavyBoundOptions heavy_options;
  heavy_options.enough_s = upper_s / (1 + kCertifiedEnoughPercent / 100);
  const HeavyBoundResult heavy = HeavyNodeBound(
      relaxed, relaxed_model, num_ipus, result.bound_s, heavy_options);
  result.out_of_work |= heavy.out_of_work;
  // Note [Revisit cut bound]: IPU 0's two stages summed.
  CutBoundOptions options;
  options.end_ideals = cut_options.end_ideals;
  if (heavy.node >= 0) options.known_s = heavy.bound_s;
  const CutBoundResult chain =
      RevisitCutBound(relaxed, relaxed_model, num_ipus, upper_s, options);
  result.out_of_work |= chain.out_of_work;
  if (chain.bound_s > result.bound_s) {
    result.bound_s = chain.bound_s;
    // Not improved: RevisitCutBound returned the cheap bound for k IPUs
    // (above the cheap bound for k + 1 the first DP starts from).
    result.method = chain.improved ? "min-cut, IPU 0's two stages summed"
                                   : "cheap (k IPUs)";
  }
  if (heavy.node >= 0 && heavy.bound_s > result.bound_s) {
    result.bound_s = heavy.bound_s;
    result.method = "heavy node";
  }
  result.bound_s = std::min(result.bound_s, upper_s);
  return result;
}

}  // namespace autoshard
