#include <climits>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "cmd/commands.h"

namespace autoshard::cmd {

std::string DefaultOutputPath(const std::string& model) {
  std::filesystem::path p(model);
  return (p.parent_path() / (p.stem().string() + ".sharded.onnx")).string();
}

CLI::App* SetupShard(CLI::App& app, ShardOptions* o) {
  CLI::App* sub =
      app.add_subcommand("shard",
                         "split a model over IPUs and annotate every node with "
                         "__ipu_number and __pipeline_stage");
  sub->footer(
      "Examples:\n"
      "  autoshard shard model.onnx --num-ipus 4\n"
      "  autoshard shard model.onnx --num-ipus 2 -o out.onnx --sharding-config "
      "s.yaml "
      "--plan plan.json\n"
      "  autoshard shard model.onnx --num-ipus 4 --batch-size 8 --precision "
      "fp16");
  AddModelFlags(sub, &o->model);
  sub->add_option("-n,--num-ipus", o->num_ipus, "number of IPUs (at least 2)")
      ->required();
  sub->add_option(
         "--strategy", o->strategy,
         "raw (default): PopRT's bytes-balanced split; search: raw, then move "
         "boundary subgraphs until every IPU fits the tile-memory model")
      ->check(CLI::IsMember({"raw", "search"}));
  sub->add_flag(
      "--optimal-perf", o->optimal_perf,
      "search: after a split fits, keep searching for the best bottleneck");
  sub->add_option("--max-candidates", o->max_candidates,
                  "search: splits to evaluate at most (default 100000)");
  sub->add_option("--max-search-seconds", o->max_search_s,
                  "search: seconds to spend at most (default 60)");
  sub->add_option(
      "--compile-cmd", o->compile_cmd,
      "search: judge every candidate with a real compiler, e.g. "
      "'my_compile.sh {model}' ({model}: the annotated candidate; the "
      "command sees $AUTOSHARD_AVAILABLE_MEMORY_PROPORTION)");
  sub->add_option("--jobs", o->jobs,
                  "search with --compile-cmd: compiles at once (default 1)");
  o->output_option = sub->add_option(
      "-o,--output", o->output,
      "annotated model (default: MODEL's folder, <stem>.sharded.onnx)");
  sub->add_option("--sharding-config", o->sharding_config,
                  "also write the PopRT manual-sharding YAML to this file");
  sub->add_option("--split-dir", o->split_dir,
                  "also write one ONNX model per pipeline stage and "
                  "manifest.json into this folder (see 'autoshard split')");
  return sub;
}

int RunShard(const ShardOptions& o) {
  auto options = ToLibraryOptions(o.model);
  if (!options.ok()) return ReportError(options.status());
  options->num_ipus = o.num_ipus;
  options->strategy = o.strategy;
  options->optimal_perf = o.optimal_perf;
  options->max_candidates = o.max_candidates;
  options->max_search_s = o.max_search_s;
  options->compile_cmd = o.compile_cmd;
  options->jobs = o.jobs;
  bool progress_shown = false;
  if (!o.model.quiet) {
    options->progress = [&progress_shown](int64_t candidates,
                                          int64_t best_max_tile_bytes) {
      std::cerr << "\rsearch: " << candidates
                << " candidates, closest fullest tile "
                << (best_max_tile_bytes == INT64_MAX
                        ? std::string("unknown")
                        : std::to_string(best_max_tile_bytes) + " bytes")
                << "   " << std::flush;
      progress_shown = true;
    };
  }
  if (absl::Status s = options->Validate(); !s.ok()) return ReportError(s);
  auto loaded = LoadModel(o.model.model);
  if (!loaded.ok()) return ReportError(loaded.status());
  options->model_dir = loaded->path.parent_path();
  options->external_files = loaded->external_files;
  auto plan = PlanModel(loaded->model, *options);
  if (progress_shown) std::cerr << "\n";
  if (!plan.ok()) {
    return ReportError(absl::Status(
        plan.status().code(),
        absl::StrCat(o.model.model, ": ", plan.status().message())));
  }
  plan->proto.set_model(o.model.model);
  const std::string output = o.output_option->count() > 0
                                 ? o.output
                                 : DefaultOutputPath(o.model.model);
  return WriteOutputs(o.model, &*loaded, output, o.sharding_config,
                      /*inputs=*/{}, *plan, o.split_dir);
}

}  // namespace autoshard::cmd
