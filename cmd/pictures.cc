// The CLI's side of --html, --graph and --graph-detail (shard, apply,
// inspect): flags, and writing what writers/pictures.h renders.
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "base/output_guard.h"
#include "base/status_macros.h"
#include "cmd/commands.h"
#include "costmodel/device_profile.h"
#include "graph/model_io.h"
#include "writers/html_report.h"

namespace autoshard::cmd {

void AddPictureFlags(CLI::App* sub, ModelOptions* o, bool graph) {
  sub->add_option(
      "--html", o->html_path,
      graph ? "also write one self-contained HTML page: charts of memory by "
              "kind per IPU, stage times and the pipeline, the graph (when "
              "Graphviz is installed), cut tensors, strategies, options"
            : "also write one self-contained HTML page: the model's memory "
              "on one IPU and FLOPs by op type, as charts");
  if (!graph) return;
  sub->add_option("--graph", o->graph_path,
                  "also write the graph coloured by IPU, one cluster per IPU "
                  "in pipeline order, cut edges named by tensor and bytes: "
                  "FILE.svg, FILE.png or FILE.pdf (laid out by Graphviz's "
                  "dot) or FILE.dot");
  sub->add_option("--graph-detail", o->graph_detail,
                  "auto (default: every node up to 300 nodes, else runs of "
                  "nodes with their counts), nodes, or runs")
      ->check(CLI::IsMember({"auto", "nodes", "runs"}));
}

absl::StatusOr<Pictures> RenderPlanPictures(const ModelOptions& o,
                                            const onnx::ModelProto& model,
                                            const Plan& plan) {
  PictureOptions options;
  options.html = !o.html_path.empty();
  options.graph_path = o.graph_path;
  ASSIGN_OR_RETURN(options.dot.detail, ParseGraphDetail(o.graph_detail));
  options.command_line = o.command_line;
  if (!options.html && options.graph_path.empty()) return Pictures{};
  // The device the plan was judged with is in its analysis; a plan made
  // otherwise is judged with the flags' device.
  proto::DeviceProfile device;
  if (plan.analysis == nullptr) {
    ASSIGN_OR_RETURN(device, LoadDeviceProfile(o.device));
  }
  absl::StatusOr<Pictures> pictures =
      RenderPictures(model, plan, device, options);
  if (!pictures.ok()) {
    return absl::Status(
        pictures.status().code(),
        absl::StrCat(o.model, ": pictures: ", pictures.status().message()));
  }
  return pictures;
}

absl::Status WriteInspectHtml(const ModelOptions& o, const LoadedModel& loaded,
                              const proto::InspectReport& report) {
  if (o.html_path.empty()) return absl::OkStatus();
  std::vector<std::filesystem::path> inputs = {loaded.path};
  for (const auto& rel : loaded.external_files)
    inputs.push_back(loaded.path.parent_path() / rel);
  std::error_code ec;
  if (std::filesystem::is_regular_file(o.device, ec))
    inputs.emplace_back(o.device);
  RETURN_IF_ERROR(CheckOutputPaths({o.html_path}, inputs));
  HtmlPageInputs page;
  ASSIGN_OR_RETURN(page.device, LoadDeviceProfile(o.device));
  page.command_line = o.command_line;
  DeferTerminationSignals defer_signals;
  return WriteFileAtomically(o.html_path, InspectHtml(report, page));
}

}  // namespace autoshard::cmd
