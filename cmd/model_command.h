// The one load -> run -> report skeleton of the subcommands that cost a
// model: shard (and batch mode's per-model run, which is shard's), apply and
// inspect. Each command says only what differs (its options, its checks
// before the model is read, the library call, the report); loading, the
// --verbose steps, the error-to-exit-code mapping and the model's path in
// front of the library's errors are written here once.
#ifndef AUTOSHARD_CMD_MODEL_COMMAND_H_
#define AUTOSHARD_CMD_MODEL_COMMAND_H_

#include <chrono>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "cmd/commands.h"
#include "graph/model_io.h"
#include "sharder/options.h"

namespace autoshard::cmd {

// The parts of one model command; `Result` is what the library returns
// (a Plan, an InspectReport).
template <typename Result>
struct ModelCommand {
  // The library options, validated (Options::Validate); errors are reported
  // before the model is read. Default: ValidatedOptions(flags).
  std::function<absl::StatusOr<Options>()> options;
  // The command's own checks and inputs before the model is read (apply's
  // sharding config); may be empty.
  std::function<absl::Status()> prepare;
  // The library call on the loaded model. Its error is reported as
  // "<model><context>: <message>".
  std::function<absl::StatusOr<Result>(const LoadedModel&, Options&)> run;
  std::string context;
  // What --verbose says was done ("inspected"), timed from the call.
  std::function<std::string(const Result&)> step;
  // Writes the outputs and prints the report; returns the exit code.
  std::function<int(LoadedModel&, Result&)> report;
};

// Runs `command` on the model flags.model names: options, prepare, load
// (--verbose: "loaded M (N nodes)"), run (the options' model_dir and
// external_files set from the load), step, report. Every error before the
// report goes through ReportError (its exit code, kExit*).
template <typename Result>
int RunModelCommand(const ModelOptions& flags,
                    const ModelCommand<Result>& command) {
  absl::StatusOr<Options> options =
      command.options ? command.options() : ValidatedOptions(flags);
  if (!options.ok()) return ReportError(options.status());
  if (command.prepare) {
    if (absl::Status s = command.prepare(); !s.ok()) return ReportError(s);
  }
  absl::StatusOr<LoadedModel> loaded =
      LoadModelReported(flags, /*stream_weights=*/options->compile_cmd.empty());
  if (!loaded.ok()) return ReportError(loaded.status());
  options->model_dir = loaded->path.parent_path();
  options->external_files = loaded->external_files;
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Result> result = command.run(*loaded, *options);
  if (!result.ok()) {
    return ReportError(absl::Status(
        result.status().code(), absl::StrCat(flags.model, command.context, ": ",
                                             result.status().message())));
  }
  ReportStep(flags, command.step(*result), start);
  return command.report(*loaded, *result);
}

}  // namespace autoshard::cmd

#endif  // AUTOSHARD_CMD_MODEL_COMMAND_H_
