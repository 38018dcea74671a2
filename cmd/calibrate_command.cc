// `autoshard calibrate`: fits a profile's memory constants to a real
// compiler's answers (sharder/calibrate.h) and writes the calibrated
// --device file.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cmd/commands.h"
#include "google/protobuf/text_format.h"
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
      "Poplar counts; calibration.md in share/autoshard/).\n"
      "Examples:\n"
      "  autoshard calibrate model.onnx --compile-cmd 'compile.sh {model}' "
      "-o my_ipu.textproto\n"
      "  autoshard shard model.onnx --device my_ipu.textproto --num-ipus "
      "auto\n");
  AddModelFlags(sub, &o->model, /*writes_outputs=*/false, &o->models);
  sub->add_option("--compile-cmd", o->compile_cmd,
                  "the compiler, run by /bin/sh with {model} replaced by each "
                  "candidate's path")
      ->required();
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

int RunCalibrate(const CalibrateOptions& o) {
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
  std::string text;
  google::protobuf::TextFormat::PrintToString(result->profile, &text);
  text = absl::StrCat("# Written by autoshard calibrate; use as --device ",
                      o.output, "\n", text);
  if (absl::Status s = WriteFileAtomically(o.output, text); !s.ok())
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
  }
  return kExitOk;
}

}  // namespace autoshard::cmd
