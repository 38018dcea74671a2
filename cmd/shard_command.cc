#include <atomic>
#include <chrono>
#include <climits>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/output_guard.h"
#include "base/plural.h"
#include "base/status_macros.h"
#include "cmd/commands.h"
#include "cmd/help.h"
#include "cmd/model_command.h"
#include "cmd/progress.h"
#include "sharder/problem_file.h"
#include "solver/strategies/registry.h"

namespace autoshard::cmd {

void AddStrategyFlags(CLI::App* sub, Options* o) {
  sub->add_option("--pin", o->pins,
                  "NODE=IPU: plan node NODE on IPU IPU (0-based, below 64; "
                  "repeatable), e.g. --pin embedding=0")
      ->allow_extra_args(false);
  sub->add_option("--strategy", o->strategy, StrategiesHelp())
      ->check(CLI::IsMember(StrategyNames()));
  sub->add_flag("--optimal-perf", o->optimal_perf,
                "search (also within auto): after a split fits, keep "
                "searching for the best bottleneck");
  sub->add_option("--max-candidates", o->max_candidates,
                  absl::StrCat("search: splits to evaluate at most (default ",
                               kDefaultMaxCandidates, ")"));
  sub->add_option(
      "--max-search-seconds", o->max_search_s,
      absl::StrCat("search, optimal, auto: seconds the search may spend, and "
                   "the optimal DPs again (default ",
                   kDefaultMaxSearchSeconds, ")"));
  sub->add_option(
      "--bound-seconds", o->bound_s,
      "seconds the certified lower bound may take (the ideal DP's "
      "relaxation or COIN-OR CBC; default 10); 0: solver off, the cheap "
      "bound");
}

namespace {

// shard's planning flags, bound into the library's options.
void AddPlanningFlags(CLI::App* sub, Options* o) {
  sub->add_flag("--keep-placement", o->keep_placement,
                "evaluate the placement the model already carries "
                "(__ipu_number and __pipeline_stage on every node, as apply "
                "evaluates a config) instead of planning again; --num-ipus "
                "and --strategy are then not used");
  AddStrategyFlags(sub, o);
  sub->add_option(
      "--compile-cmd", o->compile_cmd,
      "confirm the split with a real compiler, e.g. 'my_compile.sh "
      "{model}' ({model}: the annotated candidate; the command sees "
      "$AUTOSHARD_AVAILABLE_MEMORY_PROPORTION; exit 0 = fits): auto, "
      "optimal and raw compile their chosen split, then auto's other "
      "candidates in order until one compiles; search judges every "
      "candidate it tries");
  sub->add_option("--compile-timeout", o->compile_timeout_s,
                  "search: seconds one --compile-cmd run may take before it "
                  "(its whole process group) is killed and its candidate "
                  "counts as not fitting (default 1800); compiles also stop "
                  "when --max-search-seconds runs out");
  sub->add_option("--jobs", o->jobs,
                  "how many at once (default 1): with several models, models "
                  "(each --compile-cmd then compiles one candidate at a "
                  "time); with one, --compile-cmd compiles");
}

// shard's output flags: -o, --sharding-config, --out-dir, --summary,
// --split-dir, --write-problem (--plan is AddModelFlags').
void AddShardOutputFlags(CLI::App* sub, ShardOptions* o) {
  o->output_option = sub->add_option(
      "-o,--output", o->output,
      "write the annotated model to this file (only then: without -o or "
      "--out-dir no model is written, only what is asked: the report, "
      "--plan, --sharding-config, --html)");
  CLI::Option* config =
      sub->add_option("--sharding-config", o->sharding_config,
                      "also write the PopRT manual-sharding YAML to this file");
  sub->add_option("--out-dir", o->out_dir,
                  "write <stem>.sharded.onnx, <stem>.sharding.yaml and "
                  "<stem>.plan.json for each model into this folder (made if "
                  "missing); several models write nothing without it")
      ->excludes(o->output_option)
      ->excludes(config)
      ->excludes(sub->get_option("--plan"));
  sub->add_option("--summary", o->summary_path,
                  "several models: also write the summary rows to this file, "
                  "as JSON (.json) or CSV (.csv)");
  sub->add_option("--split-dir", o->split_dir,
                  "one model: also write one ONNX model per pipeline stage and "
                  "manifest.json into this folder (see 'autoshard split'); "
                  "needs -o, which the manifest names")
      ->excludes("--out-dir")
      ->needs(o->output_option);
  sub->add_flag("--fix-input-shapes", o->model.fix_input_shapes,
                "write the planned input dims (--batch-size, --input-shape, "
                "--dim; a dim left symbolic as 1) into the output model's "
                "inputs, as onnxsim's --overwrite-input-shape, so the "
                "runtime compiles the problem that was planned");
  sub->add_option("--write-problem", o->write_problem,
                  "one model: also write the problem it solved (JSON, "
                  "share/autoshard/problem.proto) for 'autoshard solve'")
      ->excludes("--out-dir");
}

}  // namespace

CLI::App* SetupShard(CLI::App& app, ShardOptions* o) {
  CLI::App* sub =
      app.add_subcommand("shard",
                         "split a model over IPUs and annotate every node with "
                         "__ipu_number and __pipeline_stage");
  sub->footer(
      "Examples:\n"
      "  autoshard shard model.onnx --num-ipus 4 -o model.sharded.onnx\n"
      "  autoshard shard model.onnx --num-ipus auto --strategy optimal\n"
      "  autoshard shard model.onnx --num-ipus 2 -o out.onnx --sharding-config "
      "s.yaml "
      "--plan plan.json\n"
      "  autoshard shard model.onnx --num-ipus 4 --batch-size 8 --precision "
      "fp16\n"
      "  autoshard shard model.onnx --num-ipus 2 --report json > "
      "summary.json  (writes no file)\n"
      "  autoshard shard models/ more/a.onnx --num-ipus 2 --out-dir out "
      "--jobs 2 --summary out/summary.csv\n"
      "Only what is asked is written: the annotated model with -o or "
      "--out-dir, the plan with --plan, and so on; without them shard plans, "
      "reports and reads no weight bytes.\n"
      "Several models, or a folder (every *.onnx below it, in path order, "
      "except *.sharded.onnx and files in --out-dir), print one summary row "
      "(model, nodes, IPUs, fits, bottleneck, seconds, error) on stdout; "
      "with --out-dir each model also gets <stem>.sharded.onnx, "
      "<stem>.sharding.yaml and <stem>.plan.json there (under its folder's "
      "path relative to the models' common folder when names clash). A "
      "failing model never stops the others.\n"
      "Tiles: 'IPU 5 tile 589' is tile 589 of IPU 5 (0..tiles per IPU - 1), "
      "in the report and the HTML page; 'Out of memory on tile 7949' and "
      "'global tile 7949' count over the whole plan (IPU x tiles per IPU + "
      "tile), as Poplar and calibrate's compiler lines do.\n");
  AddModelFlags(sub, &o->model, /*writes_outputs=*/true, &o->models);
  sub->add_option("-n,--num-ipus", o->num_ipus,
                  "number of IPUs, or auto: the smallest power of two (1, 2, "
                  "4, ... --max-ipus) whose split fits")
      ->required();
  AddPodFlags(sub, &o->pod, &o->model.library.max_ipus);
  AddPlanningFlags(sub, &o->model.library);
  AddShardOutputFlags(sub, o);
  SetAdvancedOptions(
      sub, {"--help", "--batch-size", "--precision", "--device", "--output",
            "--plan", "--html", "--out-dir", "--total-ipus", "--compile-cmd",
            "--report", "--quiet", "--verbose"});
  return sub;
}

int RunShard(const ShardOptions& o) {
  std::error_code ec;
  if (o.models.size() != 1 || !o.summary_path.empty() ||
      std::filesystem::is_directory(o.models[0], ec)) {
    if (!o.model.html_path.empty() || !o.model.graph_path.empty()) {
      return ReportError(absl::InvalidArgumentError(
          "--html and --graph take one model file, not several or a folder"));
    }
    return RunShardBatch(o);
  }
  if (o.output_option != nullptr && o.output_option->count() > 0 &&
      o.output.empty()) {
    return ReportError(
        absl::InvalidArgumentError("-o: the output path is empty"));
  }
  ShardOptions one = o;
  one.model.model = o.models[0];
  CreatedFolders created;  // removed again if the run writes nothing there
  if (!o.out_dir.empty()) {
    // The names batch mode gives.
    if (!created.Make(o.out_dir)) {
      return ReportError(absl::InvalidArgumentError(
          absl::StrCat("--out-dir ", o.out_dir, ": cannot make the folder")));
    }
    const std::string stem = (std::filesystem::path(o.out_dir) /
                              std::filesystem::path(one.model.model).stem())
                                 .string();
    one.output = stem + ".sharded.onnx";
    one.sharding_config = stem + ".sharding.yaml";
    one.model.plan_path = stem + ".plan.json";
  }
  return ShardOneModel(one);
}

absl::StatusOr<int> ParseNumIpus(const std::string& text) {
  int count = 0;
  if (text == "auto") return kAutoIpus;
  if (!absl::SimpleAtoi(text, &count) || count < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--num-ipus must be a count of at least 1 or auto, got '", text, "'"));
  }
  return count;
}

absl::StatusOr<Options> ShardLibraryOptions(const ShardOptions& o) {
  ModelOptions model = o.model;
  int batch = 0;
  if (o.pod.total_ipus > 0 && !absl::SimpleAtoi(model.batch_size, &batch)) {
    model.batch_size.clear();  // auto or a list: PlanPod tries each
  }
  ASSIGN_OR_RETURN(Options options, ToLibraryOptions(model));
  ASSIGN_OR_RETURN(options.num_ipus, ParseNumIpus(o.num_ipus));
  options.keep_problem = !o.write_problem.empty();
  RETURN_IF_ERROR(options.Validate());
  return options;
}

int ShardOneModel(const ShardOptions& o) {
  Console& console = CurrentConsole();
  absl::StatusOr<std::optional<pod::PodOptions>> pod;
  // cmd/progress.h: in place on a terminal, else a line every few seconds.
  ProgressLine progress(&std::cerr, StderrIsTerminal());
  // Loading, planning and writing show on it too (issue 27 point 4).
  struct Shown {
    Console& console;
    ~Shown() { console.progress = nullptr; }
  } shown{console};
  if (!o.model.quiet && console.show_progress) console.progress = &progress;
  std::atomic<int> trying_ipus{0};
  const auto search_start = std::chrono::steady_clock::now();
  ModelCommand<Plan> shard;
  shard.options = [&o] { return ShardLibraryOptions(o); };
  shard.prepare = [&] {
    pod = PodOptionsOf(o.pod, o.model.batch_size);
    return pod.status();
  };
  shard.run = [&](const LoadedModel& loaded, Options& options) {
    if (!o.model.quiet && console.show_progress) {
      options.progress = [&, max = options.max_candidates,
                          max_s = options.max_search_s](int64_t candidates,
                                                        int64_t best) {
        progress.Update(SearchProgressText(
            candidates, max,
            std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                          search_start)
                .count(),
            max_s, best, trying_ipus.load()));
      };
      options.trying_num_ipus = [&](int k) {
        trying_ipus = k;
        progress.Update(absl::StrCat("planning ", o.model.model, ": trying ",
                                     Plural(k, "IPU")));
      };
      progress.Update(absl::StrCat("planning ", o.model.model,
                                   ": shapes and costs of ",
                                   loaded.model.graph().node_size(), " nodes"));
    }
    auto plan = *pod ? pod::PlanPod(loaded.model, options, **pod)
                     : PlanModel(loaded.model, options);
    if (!plan.ok()) progress.Done();
    return plan;
  };
  shard.step = [](const Plan& plan) {
    return absl::StrCat("planned (", plan.proto.strategy(), ", ",
                        plan.proto.num_ipus(), " IPUs)");
  };
  shard.report = [&o](LoadedModel& loaded, Plan& plan) {
    plan.proto.set_model(o.model.model);
    if (!o.write_problem.empty()) {
      if (absl::Status s = WriteProblemFile(plan.problem, o.write_problem);
          !s.ok()) {
        return ReportError(s);
      }
    }
    return WriteOutputs(o.model, &loaded, o.output, o.sharding_config,
                        /*inputs=*/{}, plan, o.split_dir);
  };
  return RunModelCommand(o.model, shard);
}

}  // namespace autoshard::cmd
