#include <chrono>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "cmd/commands.h"
#include "sharder/inspect.h"
#include "sharder/outputs/emit.h"

namespace autoshard::cmd {

CLI::App* SetupInspect(CLI::App& app, InspectOptions* o) {
  CLI::App* sub = app.add_subcommand("inspect",
                                     "print a model's FLOPs, MACs, weights, "
                                     "memory on one IPU, the fewest IPUs "
                                     "it needs and a per-op-type table");
  sub->footer(
      "Examples:\n"
      "  autoshard inspect model.onnx --batch-size 1\n"
      "  autoshard inspect model.onnx --json --device ipu21 --precision fp16\n"
      "JSON schema: proto/inspect.proto (InspectReport), protobuf's JSON "
      "mapping.\n" +
      std::string(kExitCodesHelp));
  AddModelFlags(sub, &o->model, /*writes_outputs=*/false);
  sub->add_flag("--json", o->json,
                "print the report as JSON (proto/inspect.proto); the same "
                "as --report json");
  return sub;
}

int RunInspect(const InspectOptions& o) {
  auto options = ToLibraryOptions(o.model);
  if (!options.ok()) return ReportError(options.status());
  auto loaded = LoadModelReported(o.model);
  if (!loaded.ok()) return ReportError(loaded.status());
  auto start = std::chrono::steady_clock::now();
  auto report = InspectModel(loaded->model, *options);
  if (!report.ok()) {
    return ReportError(absl::Status(
        report.status().code(),
        absl::StrCat(o.model.model, ": ", report.status().message())));
  }
  ReportStep(o.model, "inspected", start);
  report->set_model(o.model.model);
  if (absl::Status s = WriteInspectHtml(o.model, *loaded, *report); !s.ok())
    return ReportError(s);
  Console& console = CurrentConsole();
  if (o.json || o.model.report == "json") {
    *console.out << ProtoJson(*report);
  } else {
    *console.out << InspectText(*report);
  }
  if (!o.model.quiet) {
    for (const auto& w : report->warnings()) ReportWarning(w);
  }
  return kExitOk;
}

}  // namespace autoshard::cmd
