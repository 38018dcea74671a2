// Issue 19's table: for each model and IPU count, plans with auto (ipu2,
// batch 1, every other option at its default) and prints a Markdown row:
// the bottleneck before issue 19's searches (the best of auto's candidates
// but the ideal DP, the min-cut order and the moves between ideals) and
// after, the old (cheap) bound, the certified bound and how it was found,
// both gaps, the planning and bound seconds, and for a certified gap above 10%
// the likely reason: granularity (the costliest node is more than the fair
// share Σ time / k), copies (they are more than 10% of the bottleneck IPU's
// time, the fixed cost of each copy included) or memory (the plan does not fit,
// or search had to lower the memory proportion). Then the medians and worsts.
//
// Usage: autoshard_bound_table [--ipus 2,4,8,16] [--bound-seconds S]
//        [--max-search-seconds S] [--precision fp16|fp32] MODEL...
// bench/bound_corpus.sh runs it over a folder.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "bench/table_util.h"
#include "costmodel/device_model.h"
#include "graph/model_io.h"
#include "sharder/autoshard.h"
#include "sharder/prepare.h"

namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
double Worst(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

// Why the certified gap stays large (see the file comment).
std::string Reason(const autoshard::Plan& plan, double costliest_s,
                   double total_s, const autoshard::DeviceModel& model) {
  const auto& pp = plan.proto;
  std::string reasons;
  const int k = pp.num_ipus();
  if (costliest_s > total_s / k) reasons += "granularity ";
  int worst = 0;
  for (int d = 0; d < pp.ipus_size(); ++d)
    if (pp.ipus(d).stage_time_s() > pp.ipus(worst).stage_time_s()) worst = d;
  if (pp.ipus_size() > 0) {
    const auto& ipu = pp.ipus(worst);
    // As the performance model counts them: bytes / link + the fixed cost
    // of each side that copies anything.
    const double copy_s =
        model.CopySeconds(static_cast<double>(ipu.cut_tensor_in_bytes())) +
        model.CopySeconds(static_cast<double>(ipu.cut_tensor_out_bytes()));
    if (copy_s > 0.1 * ipu.stage_time_s()) reasons += "copies ";
  }
  if (!pp.fits() || pp.search().lowered_memory_proportion())
    reasons += "memory ";
  return reasons.empty() ? "-" : reasons;
}

// The flags: the IPU counts, the bound's and the search's seconds, the
// models.
struct Args {
  std::vector<int> ipus = {2, 4, 8, 16};
  double bound_s = 10, search_s = 60;
  bool fp16 = false;  // --precision fp16 (default fp32)
  std::vector<std::string> models;
};

// False on a bad flag value.
bool ParseArgs(int argc, char** argv, Args* args) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--ipus" && i + 1 < argc) {
      auto parsed = autoshard::bench::ParseIpus(argv[++i]);
      if (!parsed) return false;
      args->ipus = *parsed;
    } else if (arg == "--bound-seconds" && i + 1 < argc) {
      if (!absl::SimpleAtod(argv[++i], &args->bound_s)) return false;
    } else if (arg == "--precision" && i + 1 < argc) {
      const std::string p = argv[++i];
      if (p != "fp16" && p != "fp32") return false;
      args->fp16 = p == "fp16";
    } else if (arg == "--max-search-seconds" && i + 1 < argc) {
      if (!absl::SimpleAtod(argv[++i], &args->search_s)) return false;
    } else {
      args->models.push_back(arg);
    }
  }
  return true;
}

// The gaps over every row, for the last line.
struct Totals {
  std::vector<double> old_gaps, gaps;
  int failures = 0, above10 = 0;
  int skipped = 0;  // rows of models with fewer nodes than IPUs
};

// Before: the best fitting candidate but issue 19's searches' (the ideal
// DP, the min-cut orders (plain and balanced), the moves between ideals:
// "<name>+moves", and issue 28's reader hoisting from them, "<name>+hoist";
// the plan's bottleneck when none fits); `chose` gets the chosen strategy.
double BottleneckBeforeIdeal(const autoshard::Plan& plan, std::string* chose) {
  double before = plan.proto.performance().bottleneck_s();
  bool before_found = false;
  for (const auto& c : plan.proto.candidates()) {
    if (c.chosen()) *chose = c.strategy();
    const bool issue19 = c.strategy() == "ideal" ||
                         absl::EndsWith(c.strategy(), "min-cut order") ||
                         absl::EndsWith(c.strategy(), "+moves") ||
                         absl::EndsWith(c.strategy(), "+hoist");
    if (issue19 || !c.fits()) continue;
    if (!before_found || c.bottleneck_s() < before) before = c.bottleneck_s();
    before_found = true;
  }
  return before;
}

// Plans `loaded` at k IPUs and prints its row; a model with fewer nodes
// than IPUs gets no row (a note on stderr): some IPUs would hold nothing,
// and the row would say nothing of the split.
void PrintRow(const autoshard::LoadedModel& loaded, const std::string& name,
              int k, const Args& args, Totals* totals) {
  autoshard::Options options = autoshard::bench::TableOptions(loaded, k);
  options.bound_s = args.bound_s;
  options.max_search_s = args.search_s;
  if (args.fp16) options.precision = autoshard::Precision::kFp16;
  auto prepared = autoshard::internal::Prepare(loaded.model, options);
  if (prepared.ok() && prepared->analysis->problem.num_nodes() < k) {
    std::fprintf(stderr, "%s: %d nodes, fewer than %d IPUs: no row\n",
                 name.c_str(), prepared->analysis->problem.num_nodes(), k);
    ++totals->skipped;
    return;
  }
  auto plan = autoshard::PlanModel(loaded.model, options);
  if (!plan.ok() || !prepared.ok()) {
    std::printf(
        "| %s | %d | %s |\n", name.c_str(), k,
        std::string(
            (prepared.ok() ? plan.status() : prepared.status()).message())
            .c_str());
    ++totals->failures;
    return;
  }
  autoshard::DeviceModel model(prepared->analysis->problem,
                               prepared->analysis->device, options.precision);
  double costliest = 0, total = 0;
  for (int32_t n = 0; n < prepared->analysis->problem.num_nodes(); ++n) {
    costliest = std::max(costliest, model.NodeTime(n));
    total += model.NodeTime(n);
  }
  const auto& perf = plan->proto.performance();
  std::string chose;
  const double before = BottleneckBeforeIdeal(*plan, &chose);
  totals->old_gaps.push_back(perf.gap_percent());
  totals->gaps.push_back(perf.certified_gap_percent());
  const bool large = perf.certified_gap_percent() > 10;
  totals->above10 += large;
  std::printf(
      "| %s | %d | %.1f / %.1f | %.1f | %.1f | %s | %.1f%% | %.1f%% | "
      "%.2f | %.2f | %s | %s |\n",
      name.c_str(), k, before * 1e6, perf.bottleneck_s() * 1e6,
      perf.lower_bound_s() * 1e6, perf.certified_bound_s() * 1e6,
      perf.bound_method().c_str(), perf.gap_percent(),
      perf.certified_gap_percent(), plan->proto.summary().planning_s(),
      perf.bound_seconds(), chose.c_str(),
      large ? Reason(*plan, costliest, total, model).c_str() : "");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!ParseArgs(argc, argv, &args)) return 2;
  if (args.models.empty()) {
    std::fprintf(stderr,
                 "usage: autoshard_bound_table [--ipus 2,4,8,16] "
                 "[--bound-seconds S] [--max-search-seconds S] [--precision "
                 "fp16|fp32] MODEL...\n");
    return 2;
  }
  std::printf(
      "| model | IPUs | bottleneck before / after (us) | old bound (us) | "
      "certified (us) | by | old gap | certified gap | plan s | bound s | "
      "chose | reason (gap > 10%%) |\n|---|---|---|---|---|---|---|---|---|"
      "---|---|---|\n");
  Totals totals;
  for (const std::string& path : args.models) {
    const std::string name = autoshard::bench::ModelLabel(path);
    auto loaded = autoshard::LoadModel(path);
    if (!loaded.ok()) {
      // A failure row per count, as for a model that loads but does not
      // plan: bench/gap_summary.py counts them.
      for (int k : args.ipus) {
        std::printf("| %s | %d | %s |\n", name.c_str(), k,
                    std::string(loaded.status().message()).c_str());
        ++totals.failures;
      }
      continue;
    }
    for (int k : args.ipus) PrintRow(*loaded, name, k, args, &totals);
  }
  std::printf(
      "\n%zu rows: old gap median %.1f%%, worst %.1f%%; certified gap median "
      "%.1f%%, worst %.1f%%; %d rows above 10%%; %d rows left out (fewer "
      "nodes than IPUs)\n",
      totals.gaps.size(), Median(totals.old_gaps), Worst(totals.old_gaps),
      Median(totals.gaps), Worst(totals.gaps), totals.above10, totals.skipped);
  return totals.failures == 0 ? 0 : 1;
}
