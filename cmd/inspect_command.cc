#include <chrono>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "base/output_guard.h"
#include "cmd/commands.h"
#include "cmd/model_command.h"
#include "graph/model_io.h"
#include "sharder/inspect.h"
#include "writers/emit.h"

namespace autoshard::cmd {

CLI::App* SetupInspect(CLI::App& app, InspectOptions* o) {
  CLI::App* sub = app.add_subcommand("inspect",
                                     "print a model's inputs and outputs, "
                                     "FLOPs, MACs, weights, memory on one "
                                     "IPU, the fewest IPUs it needs (as "
                                     "shard --num-ipus auto plans) and a "
                                     "per-op-type table");
  sub->footer(
      "Examples:\n"
      "  autoshard inspect model.onnx --batch-size 1\n"
      "  autoshard inspect model.onnx --json --device ipu21 --precision fp16\n"
      "  autoshard inspect model.onnx --nodes-csv nodes.csv\n"
      "Exit code 3: no IPU count up to 256 fits.\n"
      "JSON schema: share/autoshard/inspect.proto (InspectReport), protobuf's "
      "JSON mapping.\n");
  AddModelFlags(sub, &o->model, /*writes_outputs=*/false);
  sub->add_flag(
      "--json", o->json,
      "print the report as JSON (share/autoshard/inspect.proto); the same "
      "as --report json");
  sub->add_option("--nodes", o->nodes,
                  "also print a per-node table (name, op, FLOPs, %, weights, "
                  "output shape, IPU when annotated): text (the default), or "
                  "csv on stdout instead of the report")
      ->expected(0, 1)
      ->default_str("text")
      ->check(CLI::IsMember({"text", "csv"}));
  sub->add_option("--nodes-csv", o->nodes_csv,
                  "write the per-node table as CSV to this file");
  return sub;
}

namespace {

// inspect's outputs (--html, --nodes-csv) and its report on stdout; the exit
// code.
int ReportInspection(const InspectOptions& o, const LoadedModel& loaded,
                     proto::InspectReport& report) {
  report.set_model(o.model.model);
  if (absl::Status s = WriteInspectHtml(o.model, loaded, report); !s.ok())
    return ReportError(s);
  if (!o.nodes_csv.empty()) {
    absl::Status s = CheckOutputPaths({o.nodes_csv}, {o.model.model});
    if (s.ok()) s = WriteFileAtomically(o.nodes_csv, NodesCsv(report));
    if (!s.ok()) return ReportError(s);
  }
  Console& console = CurrentConsole();
  if (o.nodes.empty()) report.clear_nodes();
  if (o.nodes == "csv") {
    *console.out << NodesCsv(report);
  } else if (o.json || o.model.report == "json") {
    *console.out << ProtoJson(report);
  } else if (!o.model.quiet) {
    *console.out << InspectText(report);
    if (o.nodes == "text") *console.out << NodesText(report);
  }
  if (!o.model.quiet) {
    for (const auto& w : report.warnings()) ReportWarning(w);
  }
  return report.min_ipus() > 0 ? kExitOk : kExitNoFit;
}

}  // namespace

int RunInspect(const InspectOptions& o) {
  ModelCommand<proto::InspectReport> inspect;
  inspect.run = [](const LoadedModel& loaded, Options& options) {
    return InspectModel(loaded.model, options);
  };
  inspect.step = [](const proto::InspectReport&) { return "inspected"; };
  inspect.report = [&o](LoadedModel& loaded, proto::InspectReport& report) {
    return ReportInspection(o, loaded, report);
  };
  return RunModelCommand(o.model, inspect);
}

}  // namespace autoshard::cmd
