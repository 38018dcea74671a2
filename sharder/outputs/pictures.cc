#include "sharder/outputs/pictures.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "costmodel/model_analysis.h"
#include "graph/status_macros.h"
#include "sharder/outputs/html_report.h"

namespace autoshard {

absl::Status CheckGraphPath(absl::string_view path) {
  for (absl::string_view end : {".svg", ".png", ".pdf", ".dot"}) {
    if (absl::EndsWith(path, end)) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--graph ", path, ": the file must end with .svg, .png, .pdf or .dot"));
}

std::string InlineSvg(absl::string_view svg_file) {
  const size_t start = svg_file.find("<svg");
  return std::string(start == absl::string_view::npos ? svg_file
                                                      : svg_file.substr(start));
}

absl::StatusOr<Pictures> RenderPictures(const onnx::ModelProto& model,
                                        const Plan& full_plan,
                                        const proto::DeviceProfile& device,
                                        const PictureOptions& options) {
  Pictures out;
  const bool want_graph = !options.graph_path.empty();
  if (want_graph) RETURN_IF_ERROR(CheckGraphPath(options.graph_path));
  if (!want_graph && !options.html) return out;
  const proto::Plan& plan = full_plan.proto;
  const ModelAnalysis* analysis = full_plan.analysis.get();
  ASSIGN_OR_RETURN(
      PlanGraph graph,
      MakePlanGraph(model.graph(), plan,
                    analysis != nullptr ? &analysis->dag : nullptr));
  const std::string dot = PlanDot(graph, options.dot);
  const bool dot_file = absl::EndsWith(options.graph_path, ".dot");
  const bool svg_file = absl::EndsWith(options.graph_path, ".svg");
  if (dot_file) out.graph = dot;
  HtmlPageInputs page;
  page.device = analysis != nullptr ? analysis->device : device;
  page.copy_s = full_plan.copy_s;
  page.stage_compute_s = full_plan.stage_compute_s;
  page.stage_copy_s = full_plan.stage_copy_s;
  page.command_line = options.command_line;
  if (svg_file || options.html) {
    absl::StatusOr<std::string> svg = RenderDot(dot, GraphFormat::kSvg);
    if (!svg.ok()) {
      // Without Graphviz a page is still made; an SVG file cannot be.
      const absl::StatusCode code = svg.status().code();
      if (svg_file || (code != absl::StatusCode::kFailedPrecondition &&
                       code != absl::StatusCode::kDeadlineExceeded)) {
        return svg.status();
      }
      page.graph_note = std::string(svg.status().message());
    } else {
      if (svg_file) out.graph = *svg;
      page.graph_svg = InlineSvg(*svg);
    }
  }
  if (want_graph && !dot_file && !svg_file) {
    ASSIGN_OR_RETURN(out.graph,
                     RenderDot(dot, absl::EndsWith(options.graph_path, ".png")
                                        ? GraphFormat::kPng
                                        : GraphFormat::kPdf));
  }
  if (options.html) out.html = PlanHtml(plan, page);
  return out;
}

}  // namespace autoshard
