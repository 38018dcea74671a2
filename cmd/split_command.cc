#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/output_guard.h"
#include "cmd/commands.h"
#include "writers/split/split.h"

namespace autoshard::cmd {
namespace fs = std::filesystem;

CLI::App* SetupSplit(CLI::App& app, SplitOptions* o) {
  CLI::App* sub = app.add_subcommand(
      "split",
      "write one ONNX model per pipeline stage of an annotated model, and a "
      "manifest.json that chains them back to the original");
  sub->footer(
      "The model's nodes need __ipu_number and __pipeline_stage (INT), as "
      "'shard' and 'apply' write them or as set by hand.\n"
      "Examples:\n"
      "  autoshard split model.sharded.onnx --out-dir stages/\n"
      "  autoshard shard model.onnx --num-ipus 4 --split-dir stages/   "
      "(the same in one step)\n");
  sub->add_option("model", o->model,
                  "the annotated .onnx model (external data beside it)")
      ->required();
  sub->add_option("--out-dir", o->out_dir,
                  "folder for stage_<s>.onnx and manifest.json: created, or "
                  "an empty folder, or an earlier split (replaced as a whole)")
      ->required();
  sub->add_flag("-q,--quiet", o->quiet, kQuietHelp);
  return sub;
}

int RunSplit(const SplitOptions& o) {
  // The weights stay in the file: each stage copies its own from it.
  auto loaded = LoadModel(o.model, /*stream_weights=*/true);
  if (!loaded.ok()) return ReportError(loaded.status());
  std::vector<fs::path> inputs = {loaded->path};
  for (const auto& rel : loaded->external_files) {
    inputs.push_back(loaded->path.parent_path() / rel);
  }
  if (absl::Status s = CheckSplitDir(o.out_dir, inputs); !s.ok()) {
    return ReportError(s);
  }
  const fs::path source_dir = loaded->path.parent_path();
  auto split = SplitStreamed(&loaded->model, loaded->streamed,
                             [&](const onnx::ModelProto& model) {
                               return SplitModel(model, source_dir);
                             });
  if (!split.ok()) {
    return ReportError(
        absl::Status(split.status().code(),
                     absl::StrCat(o.model, ": ", split.status().message())));
  }
  split->manifest.set_model(PathFromFolder(o.model, o.out_dir));
  std::vector<std::string> warnings = split->warnings;
  {
    DeferTerminationSignals defer_signals;
    if (absl::Status s =
            WriteSplit(*split, o.out_dir, source_dir, loaded->path, &warnings);
        !s.ok()) {
      return ReportError(s);
    }
  }
  if (o.quiet) return kExitOk;
  for (const auto& stage : split->manifest.stages()) {
    int from_graph = 0;
    for (const auto& in : stage.inputs())
      from_graph += in.source() == "graph_input";
    std::cout << absl::StrFormat(
        "stage %d (IPU %d): %s  %d nodes (%d copied constants), inputs %d "
        "(%d graph, %d cut), outputs %d\n",
        stage.stage(), stage.ipu(), stage.file(), stage.num_nodes(),
        stage.copied_constant_nodes(), stage.inputs_size(), from_graph,
        stage.inputs_size() - from_graph, stage.outputs_size());
  }
  std::cout << "wrote " << o.out_dir << " (" << split->stages.size()
            << " stage models and manifest.json)\n";
  for (const auto& w : warnings)
    std::cerr << "autoshard: warning: " << w << "\n";
  return kExitOk;
}

}  // namespace autoshard::cmd
