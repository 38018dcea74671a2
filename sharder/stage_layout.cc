#include "sharder/stage_layout.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/saturating.h"
#include "solver/strategies/revisit.h"

namespace autoshard::internal {
namespace {

// Weight `w`'s name; "weight <w>" for a problem file's analysis, whose
// costs list no weights (sharder/solve_problem.cc).
std::string WeightName(const Prepared& p, int32_t w) {
  const auto& weights = p.analysis->costs.weights;
  return w >= 0 && w < static_cast<int32_t>(weights.size())
             ? weights[w].name
             : absl::StrCat("weight ", w);
}

int64_t WeightBytes(const PlanEvaluation& e) {
  int64_t bytes = 0;
  for (const IpuMemory& m : e.memory)
    bytes = SaturatingAdd(bytes, m.weight_bytes);
  return bytes;
}

}  // namespace

absl::Status CheckVariableWeights(const Prepared& p, const Options& options,
                                  const Assignment& a) {
  if (options.weights != "variable") return absl::OkStatus();
  const ShardingProblem& problem = p.analysis->problem;
  const std::optional<WeightIpus> split = WeightOnTwoIpus(problem, a.ipu);
  if (!split) return absl::OkStatus();
  // A reader on each IPU, the first in topological order.
  std::vector<std::string> readers;
  std::set<int32_t> seen;
  for (int32_t node : problem.topo_order) {
    const auto& w = problem.node_weights[node];
    if (std::find(w.begin(), w.end(), split->weight) == w.end()) continue;
    if (!seen.insert(a.ipu[node]).second) continue;
    readers.push_back(
        absl::StrCat("'", problem.names[node], "' on IPU ", a.ipu[node]));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--weights variable: weight '", WeightName(p, split->weight),
      "' is read on IPUs ", absl::StrJoin(split->ipus, ", "), " (",
      absl::StrJoin(readers, ", "),
      "); PopART cannot copy a variable between IPUs when pipelining: put "
      "every reader of a weight on one IPU (a last pipeline stage may return "
      "to IPU 0), or use --weights constant"));
}

void SetStageLayout(const Prepared& p, const Options& options,
                    const Assignment& a, const PlanEvaluation& chosen,
                    int32_t shared_weight,
                    const std::optional<PlanEvaluation>& other,
                    proto::Plan* plan) {
  const bool revisits = a.RevisitsAnIpu();
  if (!revisits && shared_weight < 0) return;
  proto::StageLayout* s = plan->mutable_stages();
  s->set_num_stages(a.num_stages());
  for (int32_t d : a.IpuOfStage()) s->add_stage_ipus(d);
  s->set_weights(options.weights);
  if (shared_weight >= 0) {
    s->set_shared_weight(WeightName(p, shared_weight));
    s->set_shared_weight_bytes(
        p.analysis->problem.weight_size_bytes[shared_weight]);
  }
  s->set_choice(revisits ? "revisit" : "duplicate");
  if (other) {
    s->set_weight_bytes_saved(WeightBytes(*other) - WeightBytes(chosen));
    s->set_other_bottleneck_s(other->performance.bottleneck_s);
  }
}

}  // namespace autoshard::internal
