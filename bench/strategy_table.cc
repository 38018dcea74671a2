// Compares the strategies on real models: for each model and IPU count, plans
// with raw, search, optimal and auto (ipu2, batch 1, every other option at
// its default) and prints a Markdown row: each strategy's bottleneck divided
// by the lower bound (DeviceModel::LowerBound), "*" where the split does not
// fit, and planning seconds; then the median and worst gap of auto.
// Usage: autoshard_strategy_table [--ipus 2,4,8] MODEL.onnx...
// bench/strategies_corpus.sh runs it over a folder.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/table_util.h"
#include "graph/model_io.h"
#include "sharder/autoshard.h"

namespace {

const char* const kStrategies[] = {"raw", "search", "optimal", "auto"};

// One row's cells, strategy by strategy.
struct Row {
  std::string cells, seconds, chose, order;
  double bound = 0;
  bool ok = true;
};

// Plans `loaded` at k IPUs with `strategy` and appends its cells to `row`;
// auto's gap goes to `auto_gaps`.
void AddStrategy(const autoshard::LoadedModel& loaded, int k,
                 const char* strategy, Row* row,
                 std::vector<double>* auto_gaps) {
  autoshard::Options options = autoshard::bench::TableOptions(loaded, k);
  options.strategy = strategy;
  auto plan = autoshard::PlanModel(loaded.model, options);
  if (!plan.ok()) {
    row->cells += " " + std::string(plan.status().message()) + " |";
    row->ok = false;
    return;
  }
  const auto& perf = plan->proto.performance();
  row->bound = perf.lower_bound_s();
  const double ratio = perf.bottleneck_s() / perf.lower_bound_s();
  char cell[64];
  std::snprintf(cell, sizeof cell, " %.3f%s |", ratio,
                plan->proto.fits() ? "" : "*");
  row->cells += cell;
  std::snprintf(cell, sizeof cell, "%s%.2f", row->seconds.empty() ? "" : " / ",
                plan->proto.summary().planning_s());
  row->seconds += cell;
  if (std::string(strategy) == "auto") {
    auto_gaps->push_back((ratio - 1) * 100);
    for (const auto& c : plan->proto.candidates())
      if (c.chosen()) row->chose = c.strategy();
    row->order = plan->proto.optimal().order();
  }
}

// Parses the flags into `ipus` and `models`; false on a bad --ipus.
bool ParseArgs(int argc, char** argv, std::vector<int>* ipus,
               std::vector<std::string>* models) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--ipus" && i + 1 < argc) {
      auto parsed = autoshard::bench::ParseIpus(argv[++i]);
      if (!parsed) {
        std::fprintf(stderr, "bad --ipus value '%s'\n", argv[i]);
        return false;
      }
      *ipus = *parsed;
    } else {
      models->push_back(arg);
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> ipus = {2, 4, 8};
  std::vector<std::string> models;
  if (!ParseArgs(argc, argv, &ipus, &models)) return 2;
  if (models.empty()) {
    std::fprintf(stderr,
                 "usage: autoshard_strategy_table [--ipus 2,4,8] MODEL...\n");
    return 2;
  }
  std::printf(
      "| model | IPUs | lower bound | raw | search | optimal | auto | auto "
      "chose | optimal order | seconds raw / search / optimal / auto |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<double> auto_gaps;
  int failures = 0;
  for (const std::string& path : models) {
    auto loaded = autoshard::LoadModel(path);
    if (!loaded.ok()) {
      std::printf("| %s | | %s |\n", path.c_str(),
                  std::string(loaded.status().message()).c_str());
      ++failures;
      continue;
    }
    const std::string name = autoshard::bench::ModelLabel(path);
    for (int k : ipus) {
      Row row;
      for (const char* strategy : kStrategies)
        AddStrategy(*loaded, k, strategy, &row, &auto_gaps);
      if (!row.ok) ++failures;
      std::printf("| %s | %d | %.1f us |%s %s | %s | %s |\n", name.c_str(), k,
                  row.bound * 1e6, row.cells.c_str(), row.chose.c_str(),
                  row.order.c_str(), row.seconds.c_str());
      std::fflush(stdout);
    }
  }
  if (!auto_gaps.empty()) {
    std::sort(auto_gaps.begin(), auto_gaps.end());
    std::printf(
        "\nauto over %zu rows: median gap to the lower bound %.1f%%, worst "
        "%.1f%%\n",
        auto_gaps.size(), auto_gaps[auto_gaps.size() / 2], auto_gaps.back());
  }
  return failures == 0 ? 0 : 1;
}
