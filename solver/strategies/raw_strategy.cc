#include "solver/strategies/raw_strategy.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "solver/strategies/builtin.h"

namespace autoshard {

std::vector<int32_t> RawSplitSubgraphs(const SubgraphSet& set, int num_ipus) {
  const auto& subgraphs = set.subgraphs();
  const int count = set.size();
  // The balancing key: weight bytes, else FLOPs, else node count.
  std::vector<double> key(count);
  double total = 0;
  for (int i = 0; i < count; ++i)
    total += key[i] = static_cast<double>(subgraphs[i].weight_bytes);
  if (total <= 0) {
    total = 0;
    for (int i = 0; i < count; ++i) total += key[i] = subgraphs[i].flops;
  }
  if (total <= 0) {
    total = 0;
    for (int i = 0; i < count; ++i)
      total += key[i] = static_cast<double>(subgraphs[i].nodes.size());
  }
  const double target = total / num_ipus;
  std::vector<int32_t> group(count, 0);
  int32_t current = 0;
  double running = 0;
  for (int i = 0; i < count; ++i) {
    group[i] = current;
    const int cuts_needed = num_ipus - 1 - current;
    if (cuts_needed == 0 || i == count - 1) continue;
    const int remaining_after = count - 1 - i;
    if (remaining_after == cuts_needed || running + key[i] >= target) {
      ++current;
      running = 0;
    } else {
      running += key[i];
    }
  }
  return group;
}

SubgraphSet SubgraphsFor(const ShardingProblem& problem, int num_ipus) {
  SubgraphSet set(problem, SubgraphOptions{});
  if (set.size() < num_ipus) set = SubgraphSet(problem, {.drop_small = false});
  if (set.size() < num_ipus) {
    set = SubgraphSet(problem,
                      {.drop_small = false, .every_node_candidate = true});
  }
  return set;
}

absl::StatusOr<Assignment> RawStrategy(const ShardingProblem& problem,
                                       int num_ipus) {
  const int n = problem.num_nodes();
  if (num_ipus < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("--num-ipus must be at least 2, got ", num_ipus));
  }
  if (num_ipus > n) {
    return absl::InvalidArgumentError(
        absl::StrCat("--num-ipus ", num_ipus, " exceeds the model's ", n,
                     " nodes: every IPU needs at least one node"));
  }
  const SubgraphSet set = SubgraphsFor(problem, num_ipus);
  std::vector<int32_t> group = RawSplitSubgraphs(set, num_ipus);
  Assignment out;
  out.ipu.resize(n);
  out.pipeline_stage.resize(n);
  for (int32_t node = 0; node < n; ++node) {
    out.ipu[node] = out.pipeline_stage[node] =
        group[set.subgraph_of_node(node)];
  }
  return out;
}

absl::StatusOr<Assignment> RawSplit(const StrategyContext& context) {
  if (context.num_ipus == 1) {
    const int n = context.problem->num_nodes();
    return Assignment{std::vector<int32_t>(n, 0), std::vector<int32_t>(n, 0)};
  }
  return RawStrategy(*context.problem, context.num_ipus);
}

namespace {

class Raw : public Strategy {
 public:
  absl::string_view name() const override { return "raw"; }
  absl::StatusOr<StrategyResult> Run(const StrategyContext& c) const override {
    ASSIGN_OR_RETURN(Assignment a, RawSplit(c));
    return Evaluated(c, std::move(a), c.device.available_memory_proportion());
  }
};

}  // namespace

const Strategy& RawStrategyInstance() {
  static const Raw raw;
  return raw;
}

}  // namespace autoshard
