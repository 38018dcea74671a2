// The autoshard subcommands. Each has an options struct, a Setup function that
// registers its flags with CLI11, and a Run function that returns the process
// exit code (see kExit* below).
#ifndef AUTOSHARD_CMD_COMMANDS_H_
#define AUTOSHARD_CMD_COMMANDS_H_

#include <signal.h>

#include <chrono>
#include <iostream>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "cmd/isolate.h"
#include "cmd/pod_flags.h"
#include "graph/model_io.h"
#include "proto/inspect.pb.h"
#include "sharder/autoshard.h"
#include "solver/strategies/defaults.h"
#include "writers/pictures.h"

namespace autoshard::cmd {

// Documented exit codes.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;  // a bug or an I/O failure
inline constexpr int kExitBadInput = 2;  // bad usage, bad model or config
// The plan does not fit: the report and --plan written, the model only with
// --write-anyway.
inline constexpr int kExitNoFit = 3;
// The exit codes as --help and README state them.
// What -q means for every subcommand.
inline constexpr char kQuietHelp[] =
    "print no report and no warnings (errors still go to stderr; --report "
    "json, where there is one, is still printed)";
inline constexpr char kExitCodesHelp[] =
    "Exit codes: 0 ok; 1 internal error; 2 bad usage or input (missing or "
    "corrupt model, bad option, unwritable output); 3 the plan does not fit "
    "(the report, --plan and pictures written; the model only with "
    "--write-anyway). With several models: the most serious of theirs "
    "(1, then 2, then 3).";
// The same for the subcommands that make no plan of a model (split,
// calibrate, devices): no 3, one model each.
inline constexpr char kExitCodesNoPlanHelp[] =
    "Exit codes: 0 ok; 1 internal error; 2 bad usage or input (missing or "
    "corrupt model, bad option, unwritable output).";

// Where a command's text goes: results on `out` (stdout), warnings and
// errors on `err` (stderr). Batch mode gives each model's run its own
// Console with buffers, printed in order when the model is done, and reads
// the figures of its summary row from it.
class ProgressLine;  // cmd/progress.h

struct Console {
  std::ostream* out = &std::cout;
  std::ostream* err = &std::cerr;
  bool show_progress = true;  // the search's progress line (not in batches)
  std::string label;          // the model, before its warnings and errors
  // When set, held while writing the outputs of a model with external data
  // (cmd/isolate.h: batch models run in processes of their own).
  ProcessWriteLock* write_lock = nullptr;
  // The run's progress line (loading, planning, writing; issue 27 point 4)
  // when shown: a shard of one model, not -q, not in a batch.
  ProgressLine* progress = nullptr;
  // Filled as the run goes, for a batch's summary row:
  std::string error;     // the first error reported
  bool planned = false;  // the figures below are set
  int64_t num_nodes = 0;
  int num_ipus = 0;
  bool fits = false;
  double bottleneck_s = 0;
  std::string assumed;  // the plan's assumed dims, as the report names them
  std::string shapes;   // exact | assumed | unresolved (ShapesVerdict)
  std::string output;   // the annotated model, once written
};
// The calling thread's Console (by default stdout and stderr).
Console& CurrentConsole();
// Held shared while a command writes its outputs (termination signals
// deferred meanwhile); batch mode's signal thread takes it exclusively before
// it ends the process, so a signal never cuts a model's outputs in half.
std::shared_mutex& OutputWriteLock();

// The flags of the subcommands that cost a model (shard, apply, inspect,
// calibrate). The flags that are library options bind straight into the
// embedded `library` (--strict-names, --precision,
// --available-memory-proportion here; shard's planning flags too); the
// rest are the CLI's texts (parsed by ToLibraryOptions into `library`'s
// shapes and device) and its outputs.
struct ModelOptions {
  Options library;  // sharder/options.h; validated once, Options::Validate
  std::string model;
  std::vector<std::string> input_shapes;  // NAME:D1,D2,...
  std::vector<std::string> dims;          // --dim NAME=VALUE
  // --batch-size: B, or empty; shard with --total-ipus also takes auto or
  // B1,B2,... (cmd/pod_flags.h).
  std::string batch_size;
  std::string device = "ipu2";  // built-in name or text-proto file
  bool quiet = false;
  bool verbose = false;
  std::string report = "text";  // --report text|json
  std::string plan_path;        // --plan OUT.json
  // --popart-options OUT.json: PopART session options for the weights'
  // locations (pod/weights_report.h PopartOptionsJson; issue 30).
  std::string popart_options_path;
  bool write_anyway = false;      // --write-anyway: the model even when no fit
  bool fix_input_shapes = false;  // shard --fix-input-shapes
  std::string html_path;          // --html OUT.html
  std::string graph_path;         // --graph OUT.svg|.png|.pdf|.dot
  std::string graph_detail = "auto";  // --graph-detail auto|nodes|runs
  std::string command_line;           // the process's arguments, for the page
};

// `shard`: model.library also holds --max-ipus, --keep-placement,
// --strategy, --optimal-perf, --max-candidates, --max-search-seconds,
// --bound-seconds, --compile-cmd, --compile-timeout and --jobs (several
// models: models at once, cmd/batch.cc; one: compiles at once).
struct ShardOptions {
  ModelOptions model;
  // MODEL...: files or folders (every *.onnx below). One file without
  // --out-dir is the single-model mode; else batch mode (cmd/batch.cc).
  std::vector<std::string> models;
  std::string out_dir;       // --out-dir: <stem>.sharded.onnx, ... in DIR
  std::string summary_path;  // --summary FILE.json|.csv (batch)
  std::string num_ipus;      // a count, or "auto"
  std::string output;        // -o; default <dir>/<stem>.sharded.onnx
  CLI::Option* output_option = nullptr;  // tells whether -o was given
  std::string sharding_config;           // --sharding-config OUT.yaml
  std::string split_dir;                 // --split-dir DIR: per-stage models
  PodFlags pod;               // --total-ipus, --replica-grouping, --shard-over
  std::string write_problem;  // --write-problem FILE (proto/problem.proto)
};

struct ApplyOptions {
  ModelOptions model;
  std::string sharding_config;  // --sharding-config IN.yaml
  std::string output;           // -o
};

struct SplitOptions {
  std::string model;    // an annotated model
  std::string out_dir;  // --out-dir DIR
  bool quiet = false;
};

struct CalibrateOptions {
  ModelOptions model;               // shapes, precision, --device (the base)
  std::vector<std::string> models;  // MODEL...
  std::string compile_cmd;          // --compile-cmd 'CMD {model}'
  std::vector<int> num_ipus = {2};  // --num-ipus: raw splits to compile
  int jobs = 1;                     // compiles at once
  std::string output;               // -o: the calibrated profile
  // --remote-load BYTES,SECONDS and --facts FILE (kind "remote_load"):
  // measured remote loads to fit the Streaming Memory bandwidth to
  // (costmodel/remote_load_fit.h).
  std::vector<std::string> remote_loads;
  std::string facts;
};

struct InspectOptions {
  ModelOptions model;
  bool json = false;  // --json: the InspectReport in protobuf's JSON mapping
  std::string nodes;  // --nodes [text|csv]: the per-node table; "" none
  std::string nodes_csv;  // --nodes-csv FILE: the per-node table as CSV
};

// `solve PROBLEM.json` (cmd/solve_command.cc): shard's planning flags.
struct SolveCommandOptions {
  std::string problem;          // the problem file
  std::string num_ipus;         // -n/--num-ipus COUNT|auto; "": the file's
  std::string plan;             // --plan OUT.json
  std::string report = "text";  // --report text|json
  bool quiet = false;           // -q (kQuietHelp)
  bool verbose = false;         // -v: every IPU in the report
  // --strategy, --optimal-perf, --max-candidates, --max-search-seconds,
  // --bound-seconds, --max-ipus, as shard's.
  Options library;
};

// --strategy, --optimal-perf, --max-candidates, --max-search-seconds and
// --bound-seconds into `options` (shard and solve).
void AddStrategyFlags(CLI::App* sub, Options* options);
// "auto" -> kAutoIpus, else a count of at least 1; InvalidArgument naming
// --num-ipus otherwise (shard and solve).
absl::StatusOr<int> ParseNumIpus(const std::string& text);

// Each Setup registers a subcommand and returns it, so main can tell which
// one was given after parsing.
CLI::App* SetupShard(CLI::App& app, ShardOptions* options);
int RunShard(const ShardOptions& options);
// The library options of a shard command (--num-ipus parsed), validated.
absl::StatusOr<Options> ShardLibraryOptions(const ShardOptions& options);
// Shards the one model options.model.model into options.output (and
// options.sharding_config, options.model.plan_path when set), printing
// through CurrentConsole(). Batch mode calls it once per model.
int ShardOneModel(const ShardOptions& options);
// Several models or folders (cmd/batch.cc): each through ShardOneModel, at
// most options.model.library.jobs at once, one summary row per model.
int RunShardBatch(const ShardOptions& options);
CLI::App* SetupApply(CLI::App& app, ApplyOptions* options);
int RunApply(const ApplyOptions& options);
CLI::App* SetupInspect(CLI::App& app, InspectOptions* options);
int RunInspect(const InspectOptions& options);
CLI::App* SetupSplit(CLI::App& app, SplitOptions* options);
int RunSplit(const SplitOptions& options);
CLI::App* SetupCalibrate(CLI::App& app, CalibrateOptions* options);
int RunCalibrate(const CalibrateOptions& options);
CLI::App* SetupSolve(CLI::App& app, SolveCommandOptions* options);
int RunSolve(const SolveCommandOptions& options);

// Internals shared by the commands (cmd/common.cc).
// Adds MODEL (into options->model, or one or more into *models when given)
// and the shape, precision, device, naming, --quiet, --verbose and --report
// flags; with `writes_outputs`, also --plan.
void AddModelFlags(CLI::App* sub, ModelOptions* options,
                   bool writes_outputs = true,
                   std::vector<std::string>* models = nullptr);
// options.library with the texts parsed into it: --batch-size, --device,
// --input-shape and --dim (and --graph's name checked). Not validated.
absl::StatusOr<Options> ToLibraryOptions(const ModelOptions& options);
// ToLibraryOptions, then Options::Validate: the checks made before a model
// is read.
absl::StatusOr<Options> ValidatedOptions(const ModelOptions& options);
// Prints "autoshard: error: <message>" on stderr and returns the exit code
// for it.
int ReportError(const absl::Status& status);
// Prints "autoshard: warning: <message>" on stderr (the Console's label
// first).
void ReportWarning(const std::string& message);
// LoadModel(options.model), with --verbose reporting it (ReportStep).
// With `stream_weights`, large inline weights stay in the file (Note
// [Weights stay in the file]): for commands that write the model only
// through SaveModel.
absl::StatusOr<LoadedModel> LoadModelReported(const ModelOptions& options,
                                              bool stream_weights = false);
// With --verbose, prints "autoshard: <what> in S s" (S since `start`) on
// stderr.
void ReportStep(const ModelOptions& options, const std::string& what,
                std::chrono::steady_clock::time_point start);
// Writes the annotated model, the plan, the sharding config, the pictures
// and the split folder (when asked; the library's all-or-nothing
// WriteOutputs, writers/write_outputs.h), then the report on stdout
// and warnings on stderr. Never
// overwrites the model, its external data or any of `inputs`; checks every
// output path first. An empty `output`: no annotated model (shard without
// -o).
int WriteOutputs(const ModelOptions& options, LoadedModel* loaded,
                 const std::string& output,
                 const std::string& sharding_config_out,
                 const std::vector<std::string>& inputs, const Plan& plan,
                 const std::string& split_dir = "");

// --html, and with `graph` --graph and --graph-detail (cmd/pictures.cc).
void AddPictureFlags(CLI::App* sub, ModelOptions* options, bool graph);
// The --html page and --graph file of `plan` for `model`, as asked (nothing
// when neither is); errors prefixed with the model's path.
absl::StatusOr<Pictures> RenderPlanPictures(const ModelOptions& options,
                                            const onnx::ModelProto& model,
                                            const Plan& plan);
// inspect --html: checks the path and writes the page of `report`.
absl::Status WriteInspectHtml(const ModelOptions& options,
                              const LoadedModel& loaded,
                              const proto::InspectReport& report);

// Blocks the signals that would end the process while outputs are being
// written, so a kill never leaves a temporary file; they are delivered when
// the object goes out of scope.
class DeferTerminationSignals {
 public:
  DeferTerminationSignals();
  ~DeferTerminationSignals();

 private:
  sigset_t old_;
};

}  // namespace autoshard::cmd

#endif  // AUTOSHARD_CMD_COMMANDS_H_
