// `autoshard calibrate`: fits a profile's memory constants to a real
// compiler's answers (sharder/calibrate.h) and writes the calibrated
// --device file.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cmd/commands.h"
#include "costmodel/remote_load_fit.h"
#include "google/protobuf/text_format.h"
#include "proto/calibration.pb.h"
#include "sharder/calibrate.h"

namespace autoshard::cmd {

CLI::App* SetupCalibrate(CLI::App& app, CalibrateOptions* o) {
  CLI::App* sub = app.add_subcommand(
      "calibrate",
      "fit the device profile's memory constants to a compiler's answers and "
      "write a calibrated --device file");
  sub->footer(
      "Each model is compiled whole on one IPU and as raw splits onto each "
      "--num-ipus count; every 'Out of memory on tile T: M bytes' and "
      "'fullest tile T: M bytes' line the command prints is a figure to "
      "fit, T a global tile (IPU x tiles per IPU + tile on the IPU, as "
      "Poplar counts; calibration.md in share/autoshard/). Each "
      "--remote-load (or remote_load fact of --facts) is one measured "
      "Streaming Memory load; they fit streaming_memory_bytes_per_s (an "
      "estimate in the built-in profiles), with or without compiles.\n"
      "Examples:\n"
      "  autoshard calibrate model.onnx --compile-cmd 'compile.sh {model}' "
      "-o my_ipu.textproto\n"
      "  autoshard shard model.onnx --device my_ipu.textproto --num-ipus "
      "auto\n"
      "  autoshard calibrate --remote-load 268435456,0.0125 -o my_ipu.textproto"
      "\n");
  AddModelFlags(sub, &o->model, /*writes_outputs=*/false, &o->models);
  // Models and a compiler, or remote loads only (RunCalibrate checks).
  sub->get_option("model")->required(false);
  sub->add_option("--compile-cmd", o->compile_cmd,
                  "the compiler, run by /bin/sh with {model} replaced by each "
                  "candidate's path");
  sub->add_option("--remote-load", o->remote_loads,
                  "BYTES,SECONDS: one measured unsharded remote load onto one "
                  "IPU (e.g. a PopXL ops.remote_load, profiled); repeatable; "
                  "fits the Streaming Memory bandwidth");
  sub->add_option("--facts", o->facts,
                  "a CalibrationFacts text proto; its facts of kind "
                  "remote_load (figure: seconds, memory { category: "
                  "\"loaded\" bytes: B }) for --device's profile are remote "
                  "loads too");
  sub->add_option("--num-ipus", o->num_ipus,
                  "IPU counts of the raw splits compiled besides the whole "
                  "model (default 2)")
      ->check(CLI::Range(2, 1024));
  sub->add_option("--jobs", o->jobs, "compiles at once")
      ->check(CLI::Range(1, 256));
  sub->add_option("-o,--output", o->output,
                  "the calibrated DeviceProfile (text proto)")
      ->required();
  return sub;
}

namespace {

// The remote loads of --remote-load and --facts for `device`.
absl::StatusOr<std::vector<RemoteLoadFact>> RemoteLoads(
    const CalibrateOptions& o, const std::string& device) {
  std::vector<RemoteLoadFact> loads;
  for (const std::string& text : o.remote_loads) {
    absl::StatusOr<RemoteLoadFact> f = ParseRemoteLoad(text);
    if (!f.ok()) return f.status();
    loads.push_back(*f);
  }
  if (o.facts.empty()) return loads;
  std::ifstream in(o.facts);
  std::stringstream text;
  text << in.rdbuf();
  proto::CalibrationFacts facts;
  if (!in ||
      !google::protobuf::TextFormat::ParseFromString(text.str(), &facts)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--facts ", o.facts,
                     ": cannot read it as a CalibrationFacts text proto "
                     "(proto/calibration.proto)"));
  }
  absl::StatusOr<std::vector<RemoteLoadFact>> more =
      RemoteLoadFactsOf(facts, device);
  if (!more.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--facts ", o.facts, ": ", more.status().message()));
  }
  loads.insert(loads.end(), more->begin(), more->end());
  if (loads.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--facts ", o.facts, ": no fact of kind remote_load for '",
                     device, "'"));
  }
  return loads;
}

// Writes `profile` to o.output with a header line.
absl::Status WriteProfile(const CalibrateOptions& o,
                          const proto::DeviceProfile& profile) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(profile, &text);
  text = absl::StrCat("# Written by autoshard calibrate; use as --device ",
                      o.output, "\n", text);
  return WriteFileAtomically(o.output, text);
}

}  // namespace

int RunCalibrate(const CalibrateOptions& o) {
  auto checked = ValidatedOptions(o.model);
  if (!checked.ok()) return ReportError(checked.status());
  auto loads = RemoteLoads(o, checked->device.name());
  if (!loads.ok()) return ReportError(loads.status());
  if (o.compile_cmd.empty() || o.models.empty()) {
    if (loads->empty() || !o.compile_cmd.empty() || !o.models.empty()) {
      return ReportError(absl::InvalidArgumentError(
          "calibrate needs models and --compile-cmd (memory constants), or "
          "--remote-load / --facts (the Streaming Memory bandwidth), or both"));
    }
    proto::DeviceProfile profile = checked->device;
    if (absl::Status s = CalibrateStreamingBandwidth(*loads, &profile); !s.ok())
      return ReportError(s);
    profile.set_name(absl::StrCat(profile.name(), "-calibrated"));
    if (absl::Status s = WriteProfile(o, profile); !s.ok())
      return ReportError(s);
    if (!o.model.quiet) {
      std::printf(
          "fitted: streaming_memory_bytes_per_s %.6g (%.4g GB/s) to "
          "%zu remote loads; wrote %s\n",
          profile.streaming_memory_bytes_per_s(),
          profile.streaming_memory_bytes_per_s() / 1e9, loads->size(),
          o.output.c_str());
    }
    return kExitOk;
  }
  std::vector<CalibrationModel> models;
  for (const std::string& path : o.models) {
    ModelOptions one = o.model;
    one.model = path;
    auto loaded = LoadModelReported(one);
    if (!loaded.ok()) return ReportError(loaded.status());
    models.push_back({path, std::move(loaded->model),
                      loaded->path.parent_path(),
                      std::move(loaded->external_files)});
  }
  auto options = ValidatedOptions(o.model);
  if (!options.ok()) return ReportError(options.status());
  options->compile_cmd = o.compile_cmd;
  options->jobs = o.jobs;
  auto result = CalibrateMemory(models, *options, o.num_ipus);
  if (!result.ok()) return ReportError(result.status());
  if (!loads->empty()) {
    if (absl::Status s = CalibrateStreamingBandwidth(*loads, &result->profile);
        !s.ok())
      return ReportError(s);
  }
  if (absl::Status s = WriteProfile(o, result->profile); !s.ok())
    return ReportError(s);
  if (!o.model.quiet) {
    std::printf("%-40s %5s %4s %14s %14s %8s\n", "model", "IPUs", "IPU",
                "compiler", "calibrated", "error");
    for (const auto& m : result->observations) {
      std::printf("%-40s %5d %4d %14lld %14lld %+7.1f%%\n", m.model.c_str(),
                  m.num_ipus, m.ipu, static_cast<long long>(m.bytes),
                  static_cast<long long>(m.predicted),
                  100.0 * static_cast<double>(m.predicted - m.bytes) /
                      static_cast<double>(m.bytes));
    }
    std::printf(
        "fitted: code and codelet bytes x %.3f, tile_fixed_bytes %lld, from "
        "%d compiles; wrote %s\n",
        result->code_scale, static_cast<long long>(result->tile_fixed_bytes),
        result->compiles, o.output.c_str());
    if (!loads->empty()) {
      std::printf(
          "fitted: streaming_memory_bytes_per_s %.6g to %zu remote "
          "loads\n",
          result->profile.streaming_memory_bytes_per_s(), loads->size());
    }
  }
  return kExitOk;
}

}  // namespace autoshard::cmd
