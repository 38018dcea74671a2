#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <filesystem>
#include <iostream>
#include <optional>
#include <shared_mutex>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/output_guard.h"
#include "base/plural.h"
#include "base/status_macros.h"
#include "cmd/commands.h"
#include "cmd/progress.h"
#include "costmodel/device_profile.h"
#include "pod/poprt_flags.h"
#include "pod/weights_report.h"
#include "sharder/assumptions.h"
#include "writers/emit.h"
#include "writers/write_outputs.h"

namespace autoshard::cmd {
namespace fs = std::filesystem;
namespace {

absl::Status ParseInputShape(const std::string& spec, ShapeOptions* shapes) {
  const size_t colon = spec.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--input-shape '", spec,
                     "': expected NAME:D1,D2,... (e.g. input:1,3,224,224)"));
  }
  std::vector<int64_t> dims;
  for (absl::string_view part : absl::StrSplit(spec.substr(colon + 1), ',')) {
    int64_t d = 0;
    if (!absl::SimpleAtoi(part, &d) || d <= 0 || d > INT32_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input-shape '", spec, "': '", part,
                       "' is not an integer from 1 to 2^31-1"));
    }
    dims.push_back(d);
  }
  if (!shapes->input_shapes.emplace(spec.substr(0, colon), std::move(dims))
           .second) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--input-shape names '", spec.substr(0, colon), "' twice"));
  }
  return absl::OkStatus();
}

// --dim NAME=VALUE into shapes->dims. 0 is a dim ONNX allows (an empty KV
// cache: --dim past_sequence_length=0 for a prefill).
absl::Status ParseDim(const std::string& spec, ShapeOptions* shapes) {
  const size_t eq = spec.find('=');
  int64_t value = 0;
  if (eq == std::string::npos || eq == 0 ||
      !absl::SimpleAtoi(spec.substr(eq + 1), &value) || value < 0 ||
      value > INT32_MAX) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--dim '", spec,
        "': expected NAME=VALUE, VALUE an integer from 0 to 2^31-1 (e.g. "
        "seq_len=128, or past_sequence_length=0 for an empty KV cache)"));
  }
  if (!shapes->dims.emplace(spec.substr(0, eq), value).second) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dim names '", spec.substr(0, eq), "' twice"));
  }
  return absl::OkStatus();
}

}  // namespace

Console& CurrentConsole() {
  thread_local Console console;
  return console;
}

std::shared_mutex& OutputWriteLock() {
  static std::shared_mutex lock;
  return lock;
}

void AddModelFlags(CLI::App* sub, ModelOptions* o, bool writes_outputs,
                   std::vector<std::string>* models) {
  if (models != nullptr) {
    sub->add_option("model", *models,
                    "one or more .onnx models (external data beside each), or "
                    "folders: every *.onnx below them")
        ->required();
  } else {
    sub->add_option("model", o->model,
                    "the .onnx model (external data beside it)")
        ->required();
  }
  sub->add_option("--input-shape", o->input_shapes,
                  "fix a graph input's shape, NAME:D1,D2,... (repeatable; wins "
                  "over --batch-size for that input)")
      ->allow_extra_args(false);
  sub->add_option("--dim", o->dims,
                  "set every input dim with this symbolic name, NAME=VALUE "
                  "(repeatable; e.g. --dim seq_len=128; 0 for an empty KV "
                  "cache, --dim past_seq_len=0, not for the batch)")
      ->allow_extra_args(false);
  sub->add_option("--batch-size", o->batch_size,
                  "set the symbolic first dim of every input to B (B >= 1); "
                  "shard --total-ipus: also auto (1, 2, 4, ... 64) or "
                  "B1,B2,...: the micro-batch of the highest POD throughput");
  sub->add_option(
      "--device", o->device,
      "ipu1, ipu2 (default), ipu21, c600, or a DeviceProfile text-proto file "
      "(schema: share/autoshard/device.proto)");
  sub->add_option(
      "--available-memory-proportion", o->library.available_memory_proportion,
      "share of tile memory matmul/conv temporaries may use, in (0, 1] "
      "(default: the device's, 0.6)");
  sub->add_option_function<std::string>(
         "--precision",
         [o](const std::string& p) {
           o->library.precision =
               p == "fp16" ? Precision::kFp16 : Precision::kFp32;
         },
         "cost float tensors as fp32 (default) or fp16, and use that "
         "peak FLOP/s")
      ->transform(CLI::IsMember({"fp32", "fp16"}, CLI::ignore_case));
  sub->add_option(
         "--weights", o->library.weights,
         "constant (default, PopRT's inference default) or variable "
         "(updatable weights, or training: every reader of a weight must "
         "run on one IPU, so a last pipeline stage may return to IPU 0)")
      ->check(CLI::IsMember({"constant", "variable"}));
  sub->add_option(
         "--weights-location", o->library.weights_location,
         "where the weights live: auto (default: on-chip when the plan fits "
         "or the device has no Streaming Memory, else few weights' bytes "
         "in Streaming Memory, chosen greedily per IPU, that make every IPU "
         "fit), on-chip, or "
         "remote (every floating-point weight in the IPU-Machines' "
         "Streaming Memory, loaded every step; sharded over replicas with "
         "--total-ipus and --shard-over)")
      ->check(CLI::IsMember({"auto", "on-chip", "remote"}));
  sub->add_option("--retrieval-mode", o->library.retrieval_mode,
                  "how the runtime retrieves grouped variables, PopXL's "
                  "one_per_group (default) or all_replicas; written into the "
                  "plan and the launch file")
      ->check(CLI::IsMember({"one_per_group", "all_replicas"}));
  sub->add_flag(
      "--strict-names", o->library.strict_names,
      "refuse nodes with empty or repeated names (PopRT's rule) instead "
      "of naming them <op_type>_<index>");
  sub->add_flag(
      "--strict", o->library.strict,
      "refuse (exit 2) a model whose dims are not all its own or the "
      "options': a dim costed as 1, a data-dependent dim set to a bound, or "
      "a node whose dims no inference found (the report's shapes: line)");
  CLI::Option* quiet = sub->add_flag("-q,--quiet", o->quiet, kQuietHelp);
  sub->add_flag("-v,--verbose", o->verbose,
                "also print each step's time and each file written on stderr")
      ->excludes(quiet);
  sub->add_option("--report", o->report,
                  "text (default), or json: the report as JSON on stdout, "
                  "for piping")
      ->check(CLI::IsMember({"text", "json"}));
  AddPictureFlags(sub, o, /*graph=*/writes_outputs);
  if (!writes_outputs) return;
  sub->add_option("--plan", o->plan_path,
                  "also write the plan as JSON to this file");
  sub->add_option("--popart-options", o->popart_options_path,
                  "also write PopART session options for the weights' "
                  "locations (weightTensorLocationSettings, "
                  "tensorLocationSettingsOverride) as JSON to this file");
  sub->add_flag("--write-anyway", o->write_anyway,
                "write the model, the sharding config and the split folder "
                "even when the plan does not fit (else only the report, "
                "--plan and the pictures are written; exit code 3 either "
                "way)");
}

absl::StatusOr<Options> ToLibraryOptions(const ModelOptions& o) {
  Options options = o.library;
  if (!o.batch_size.empty() &&
      (!absl::SimpleAtoi(o.batch_size, &options.shapes.batch_size) ||
       options.shapes.batch_size < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--batch-size must be at least 1, got ", o.batch_size));
  }
  ASSIGN_OR_RETURN(options.device, LoadDeviceProfile(o.device));
  for (const std::string& spec : o.input_shapes) {
    RETURN_IF_ERROR(ParseInputShape(spec, &options.shapes));
  }
  if (!o.graph_path.empty()) RETURN_IF_ERROR(CheckGraphPath(o.graph_path));
  for (const std::string& spec : o.dims) {
    RETURN_IF_ERROR(ParseDim(spec, &options.shapes));
  }
  return options;
}

absl::StatusOr<Options> ValidatedOptions(const ModelOptions& o) {
  ASSIGN_OR_RETURN(Options options, ToLibraryOptions(o));
  RETURN_IF_ERROR(options.Validate());
  return options;
}

int ReportError(const absl::Status& status) {
  Console& console = CurrentConsole();
  if (console.progress != nullptr) console.progress->Done();
  // In a batch, say which model (unless the message starts with it).
  const bool named = console.label.empty() ||
                     absl::StartsWith(status.message(), console.label);
  *console.err << "autoshard: error: " << (named ? "" : console.label + ": ")
               << status.message() << "\n";
  if (console.error.empty()) console.error = std::string(status.message());
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kPermissionDenied:
      return kExitBadInput;
    default:
      return kExitInternal;
  }
}

void ReportWarning(const std::string& message) {
  Console& console = CurrentConsole();
  *console.err << "autoshard: warning: "
               << (console.label.empty() ? "" : console.label + ": ") << message
               << "\n";
}

absl::StatusOr<LoadedModel> LoadModelReported(const ModelOptions& options,
                                              bool stream_weights) {
  const auto start = std::chrono::steady_clock::now();
  Console& console = CurrentConsole();
  int64_t shown = -1;
  auto progress = [&](int64_t done, int64_t total) {
    if (console.progress == nullptr || done - shown < total / 100) return;
    shown = done;
    console.progress->Update(
        absl::StrCat("loading ", options.model, ": ",
                     HumanBytesText(static_cast<double>(done)), " of ",
                     HumanBytesText(static_cast<double>(total))));
  };
  absl::StatusOr<LoadedModel> loaded =
      LoadModel(options.model, stream_weights, progress);
  if (loaded.ok()) {
    ReportStep(options,
               absl::StrCat("loaded ", options.model, " (",
                            loaded->model.graph().node_size(), " nodes)"),
               start);
  }
  return loaded;
}

void ReportStep(const ModelOptions& options, const std::string& what,
                std::chrono::steady_clock::time_point start) {
  if (!options.verbose) return;
  Console& console = CurrentConsole();
  if (console.progress != nullptr) console.progress->Done();
  *console.err << "autoshard: "
               << (console.label.empty() ? "" : console.label + ": ") << what
               << " in "
               << HumanSeconds(std::chrono::duration<double>(
                                   std::chrono::steady_clock::now() - start)
                                   .count())
               << "\n";
}

// Also holds OutputWriteLock() shared, for batch mode's signal thread
// (cmd/batch.cc).
DeferTerminationSignals::DeferTerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&set, sig);
  pthread_sigmask(SIG_BLOCK, &set, &old_);
  OutputWriteLock().lock_shared();
}

DeferTerminationSignals::~DeferTerminationSignals() {
  OutputWriteLock().unlock_shared();
  pthread_sigmask(SIG_SETMASK, &old_, nullptr);
}

namespace {

// The files to write for `plan`: a plan that does not fit gets no model,
// sharding config or split folder to compile unless --write-anyway.
OutputFiles FilesToWrite(const ModelOptions& options, const Plan& plan,
                         const std::string& output,
                         const std::string& sharding_config_out,
                         const std::string& split_dir) {
  OutputFiles files;
  files.plan = options.plan_path;
  if (!options.popart_options_path.empty()) {
    files.extra.emplace_back(options.popart_options_path,
                             pod::PopartOptionsJson(plan.proto));
  }
  if (plan.proto.fits() || options.write_anyway) {
    files.model = output;
    files.sharding_config = sharding_config_out;
    files.split_dir = split_dir;
  }
  for (const std::string* picture : {&options.html_path, &options.graph_path})
    if (!picture->empty()) files.extra.emplace_back(*picture, "");
  return files;
}

// The report (text or JSON) and the warnings, after the outputs were
// written.
void PrintReport(const ModelOptions& options, const Plan& plan,
                 const WrittenOutputs& wrote) {
  Console& console = CurrentConsole();
  if (options.report == "json") {  // printed with -q too (kQuietHelp)
    // The plan without its per-node placements (--plan has them).
    proto::Plan summary = plan.proto;
    summary.clear_nodes();
    *console.out << ProtoJson(summary);
    if (options.verbose) {
      for (const auto& out : wrote.written)
        *console.err << "autoshard: wrote " << out << "\n";
    }
  } else if (!options.quiet) {
    *console.out << ReportText(plan.proto, /*all_ipus=*/options.verbose);
    for (const auto& out : wrote.written)
      *console.out << "wrote " << out << "\n";
  }
  if (!options.quiet) {
    for (const auto& w : wrote.warnings) ReportWarning(w);
  }
}

// A plan that does not fit: the error line (why, what would fit, what was
// written) and exit code 3.
int ReportNoFit(const ModelOptions& options, const proto::Plan& pp,
                bool wrote_model, bool model_asked) {
  Console& console = CurrentConsole();
  const std::string message = absl::StrCat(
      options.model, ": the plan does not fit ", pp.device(), ": ",
      pp.no_fit_reason().empty() ? pp.out_of_memory() : pp.no_fit_reason(),
      pp.would_fit_size() > 0
          ? absl::StrCat("; would fit: ", absl::StrJoin(pp.would_fit(), "; "))
          : "",
      wrote_model   ? " (outputs written; exit code 3)"
      : model_asked ? " (no model written: --write-anyway writes it; exit "
                      "code 3)"
                    : " (exit code 3)");
  *console.err << "autoshard: error: " << message << "\n";
  if (console.error.empty()) console.error = message;
  return kExitNoFit;
}

}  // namespace

int WriteOutputs(const ModelOptions& options, LoadedModel* loaded,
                 const std::string& output,
                 const std::string& sharding_config_out,
                 const std::vector<std::string>& inputs, const Plan& plan,
                 const std::string& split_dir) {
  Console& console = CurrentConsole();
  console.planned = true;
  console.num_nodes = plan.proto.summary().num_nodes();
  console.num_ipus = plan.proto.num_ipus();
  console.fits = plan.proto.fits();
  console.bottleneck_s = plan.proto.performance().bottleneck_s();
  console.assumed = AssumedText(plan.proto.assumptions());
  console.shapes = plan.proto.shapes().verdict();
  // An empty `output`: no annotated model asked for (shard without -o).
  OutputFiles files =
      FilesToWrite(options, plan, output, sharding_config_out, split_dir);
  const bool write_model = !files.model.empty();
  if (options.fix_input_shapes && write_model) {
    if (absl::Status s =
            pod::FixInputShapes({plan.proto.planned_inputs().begin(),
                                 plan.proto.planned_inputs().end()},
                                loaded->model.mutable_graph());
        !s.ok()) {
      return ReportError(s);
    }
  }
  std::vector<fs::path> input_paths(inputs.begin(), inputs.end());
  std::error_code ec;
  if (fs::is_regular_file(options.device, ec))
    input_paths.emplace_back(options.device);
  absl::StatusOr<PreparedOutputs> prepared = PrepareOutputs(
      plan, std::move(files), loaded, input_paths, options.model);
  if (!prepared.ok()) return ReportError(prepared.status());
  absl::StatusOr<Pictures> pictures =
      RenderPlanPictures(options, loaded->model, plan);
  if (!pictures.ok()) return ReportError(pictures.status());
  for (auto& [path, content] : prepared->files.extra) {
    if (path == options.html_path) content = pictures->html;
    if (path == options.graph_path) content = pictures->graph;
  }
  // Everything is computed; now write, each file atomically (Note [Outputs
  // are all or nothing]). In a batch, models with external data write one
  // at a time: two may link the same data file.
  if (console.progress != nullptr) {
    prepared->files.write_progress = [&console, &output, shown = int64_t{-1}](
                                         int64_t done, int64_t total) mutable {
      if (done - shown < total / 100 && done < total) return;  // 1% steps
      shown = done;
      console.progress->Update(absl::StrCat(
          "writing ", output, ": ", HumanBytesText(static_cast<double>(done)),
          " of ", HumanBytesText(static_cast<double>(total))));
    };
  }
  std::unique_lock<ProcessWriteLock> one_writer;
  if (console.write_lock != nullptr && !loaded->external_files.empty()) {
    one_writer = std::unique_lock<ProcessWriteLock>(*console.write_lock);
  }
  const auto write_start = std::chrono::steady_clock::now();
  absl::StatusOr<WrittenOutputs> wrote;
  {
    DeferTerminationSignals defer_signals;
    wrote = WritePreparedOutputs(*prepared);
  }
  if (console.progress != nullptr) console.progress->Done();
  if (!wrote.ok()) return ReportError(wrote.status());
  MarkOutputsWritten();  // an interrupt from now on says so
  if (write_model) console.output = output;
  ReportStep(options,
             absl::StrCat("wrote ", Plural(wrote->written.size(), "file")),
             write_start);
  PrintReport(options, plan, *wrote);
  if (output.empty() && plan.proto.fits() && !options.quiet &&
      options.report == "text") {
    *console.out << "no annotated model written (-o FILE writes it)\n";
  }
  if (!plan.proto.fits())
    return ReportNoFit(options, plan.proto, write_model, !output.empty());
  return kExitOk;
}

}  // namespace autoshard::cmd
