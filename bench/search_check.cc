// Checks the search against brute force: for every model given, on 2 and 4
// IPUs of an ipu2 whose tiles hold PERCENT% of the raw split's fullest tile,
// runs --strategy search and, where the subgraphs are few enough
// (k^subgraphs <= 2^20), tries every monotone assignment of subgraphs to IPUs
// with the tile-memory model. Prints: model, IPUs, subgraphs, raw fits, search
// fits, candidates, and whether any split fits ("-" when too many to try).
// Usage: autoshard_search_check PERCENT MODEL...
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "costmodel/device_model.h"
#include "costmodel/plan_evaluation.h"
#include "graph/model_io.h"
#include "sharder/prepare.h"
#include "solver/strategies/raw_strategy.h"
#include "solver/strategies/search_strategy.h"

using namespace autoshard;

namespace {

// True when some monotone assignment of `set`'s subgraphs onto k IPUs, each
// IPU non-empty, fits. Subgraph ids are a topological order.
bool AnyFits(const ShardingProblem& problem, const SubgraphSet& set, int k,
             const DeviceModel& model) {
  const int s_count = set.size();
  std::vector<int32_t> group(s_count, 0), ipu_of_node(problem.num_nodes(), 0);
  std::function<bool(int)> place = [&](int s) -> bool {
    if (s == s_count) {
      std::vector<bool> used(k, false);
      for (int32_t g : group) used[g] = true;
      for (bool u : used) {
        if (!u) return false;
      }
      for (int32_t node = 0; node < problem.num_nodes(); ++node) {
        ipu_of_node[node] = group[set.subgraph_of_node(node)];
      }
      return EvaluatePlan(model, ipu_of_node, k, /*batch=*/1).fits;
    }
    int32_t lo = 0;
    for (int32_t p : set.subgraphs()[s].parents) lo = std::max(lo, group[p]);
    for (int32_t g = lo; g < k; ++g) {
      group[s] = g;
      if (place(s + 1)) return true;
    }
    return false;
  };
  return place(0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s PERCENT MODEL...\n", argv[0]);
    return 2;
  }
  const int percent = std::atoi(argv[1]);
  std::printf(
      "| model | IPUs | subgraphs | raw fits | search fits | candidates | any "
      "split fits |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (int i = 2; i < argc; ++i) {
    auto loaded = LoadModel(argv[i]);
    if (!loaded.ok()) continue;
    Options options;
    options.shapes.batch_size = 1;
    auto prepared = internal::Prepare(loaded->model, options);
    if (!prepared.ok()) continue;
    const ShardingProblem& problem = prepared->analysis->problem;
    for (int k : {2, 4}) {
      if (k > problem.num_nodes()) continue;
      const SubgraphSet set = SubgraphsFor(problem, k);
      const std::vector<int32_t> raw = RawSplitSubgraphs(set, k);
      proto::DeviceProfile device = prepared->analysis->device;
      auto a = RawStrategy(problem, k);
      const int64_t fullest =
          EvaluatePlan(DeviceModel(problem, device, Precision::kFp32), a->ipu,
                       k, /*batch=*/1)
              .max_tile_bytes;
      device.set_bytes_per_tile(std::max<int64_t>(fullest * percent / 100, 64));
      DeviceModel model(problem, device, Precision::kFp32);
      auto r =
          SearchStrategy(problem, set, raw, k, device, Precision::kFp32, {});
      std::string any = "-";
      if (std::pow(k, set.size()) <= (1 << 20)) {
        any = AnyFits(problem, set, k, model) ? "yes" : "no";
      }
      std::printf("| %s | %d | %d | no | %s%s | %lld | %s |\n", argv[i], k,
                  set.size(), r->fits ? "yes" : "no",
                  r->fits && r->available_memory_proportion < 0.6
                      ? " (AMP 0.3/0.1)"
                      : "",
                  static_cast<long long>(r->candidates), any.c_str());
    }
  }
  return 0;
}
