// The autoshard subcommands. Each has an options struct, a Setup function that
// registers its flags with CLI11, and a Run function that returns the process
// exit code (see kExit* below).
#ifndef AUTOSHARD_CMD_COMMANDS_H_
#define AUTOSHARD_CMD_COMMANDS_H_

#include <signal.h>

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "graph/model_io.h"
#include "sharder/autoshard.h"

namespace autoshard::cmd {

// Documented exit codes.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;  // a bug or an I/O failure
inline constexpr int kExitBadInput = 2;  // bad usage, bad model or config
inline constexpr int kExitNoFit = 3;  // outputs written, but an IPU overflows

// Options shared by the subcommands that cost a model.
struct ModelOptions {
  std::string model;
  std::vector<std::string> input_shapes;  // NAME:D1,D2,...
  int batch_size = -1;                    // -1: not given
  std::string precision = "fp32";
  std::string device = "ipu2";              // built-in name or text-proto file
  double available_memory_proportion = -1;  // -1: the profile's
  bool strict_names = false;
  bool quiet = false;
  std::string plan_path;  // --plan OUT.json
};

struct ShardOptions {
  ModelOptions model;
  int num_ipus = 0;
  std::string strategy = "raw";
  bool optimal_perf = false;
  int64_t max_candidates = 100000;
  double max_search_s = 60;
  std::string compile_cmd;
  int jobs = 1;
  std::string output;  // -o; default <dir>/<stem>.sharded.onnx
  CLI::Option* output_option = nullptr;  // tells whether -o was given
  std::string sharding_config;           // --sharding-config OUT.yaml
  std::string split_dir;                 // --split-dir DIR: per-stage models
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

struct InspectOptions {
  ModelOptions model;
  bool json = false;  // --json: the InspectReport in protobuf's JSON mapping
};

// Each Setup registers a subcommand and returns it, so main can tell which
// one was given after parsing.
CLI::App* SetupShard(CLI::App& app, ShardOptions* options);
int RunShard(const ShardOptions& options);
CLI::App* SetupApply(CLI::App& app, ApplyOptions* options);
int RunApply(const ApplyOptions& options);
CLI::App* SetupInspect(CLI::App& app, InspectOptions* options);
int RunInspect(const InspectOptions& options);
CLI::App* SetupSplit(CLI::App& app, SplitOptions* options);
int RunSplit(const SplitOptions& options);

// Internals shared by the commands (cmd/common.cc).
// Adds MODEL and the shape, precision, device and naming flags; with
// `writes_outputs`, also --plan and --quiet.
void AddModelFlags(CLI::App* sub, ModelOptions* options,
                   bool writes_outputs = true);
absl::StatusOr<Options> ToLibraryOptions(const ModelOptions& options);
// Prints "autoshard: <message>" on stderr and returns the exit code for it.
int ReportError(const absl::Status& status);
// Writes the annotated model, the plan, the sharding config and the split
// folder (when asked), the report on stdout and warnings on stderr. Never
// overwrites the model, its external data or any of `inputs`; checks every
// output path first.
int WriteOutputs(const ModelOptions& options, LoadedModel* loaded,
                 const std::string& output,
                 const std::string& sharding_config_out,
                 const std::vector<std::string>& inputs, const Plan& plan,
                 const std::string& split_dir = "");

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
