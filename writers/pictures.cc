#include "writers/pictures.h"

#include <algorithm>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "costmodel/model_analysis.h"
#include "costmodel/problem.h"
#include "writers/html_report.h"

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

namespace {

// HtmlPageInputs::stage_compute_s and stage_copy_s of a plan that revisits
// an IPU, as EvaluatePlacement charges them (Note [A stage revisits an
// IPU], costmodel/plan_evaluation.h): stage s's nodes' times, and its copies
// in and out (ComputeStageCutBytes); what else an IPU's time holds (remote
// weight loads, in Plan::copy_s) goes with its first stage's copies, so an
// IPU's stages add up to its stage time.
void SetStageSeconds(const DeviceModel& model, const Plan& plan,
                     HtmlPageInputs* page) {
  const Placement& a = plan.placement;
  const std::vector<int32_t> ipu_of_stage = a.IpuOfStage();
  const size_t stages = ipu_of_stage.size();
  page->stage_compute_s.assign(stages, 0);
  page->stage_copy_s.assign(stages, 0);
  const CutBytes cut =
      ComputeStageCutBytes(model.problem(), a.pipeline_stage, ipu_of_stage);
  for (size_t node = 0; node < a.pipeline_stage.size(); ++node)
    page->stage_compute_s[a.pipeline_stage[node]] +=
        model.NodeTime(static_cast<int32_t>(node));
  std::vector<double> rest_s = plan.copy_s;  // per IPU
  for (size_t s = 0; s < stages; ++s) {
    page->stage_copy_s[s] =
        model.CopySeconds(static_cast<double>(cut.in_bytes[s])) +
        model.CopySeconds(static_cast<double>(cut.out_bytes[s]));
    const int32_t d = ipu_of_stage[s];
    if (d >= 0 && static_cast<size_t>(d) < rest_s.size())
      rest_s[d] -= page->stage_copy_s[s];
  }
  std::vector<bool> seen(rest_s.size(), false);
  for (size_t s = 0; s < stages; ++s) {
    const int32_t d = ipu_of_stage[s];
    if (d < 0 || static_cast<size_t>(d) >= rest_s.size() || seen[d]) continue;
    seen[d] = true;
    page->stage_copy_s[s] += std::max(0.0, rest_s[d]);
  }
}

}  // namespace

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
  if (analysis != nullptr && full_plan.placement.RevisitsAnIpu()) {
    SetStageSeconds(analysis->device_models().At(
                        plan.available_memory_proportion() > 0
                            ? plan.available_memory_proportion()
                            : analysis->device.available_memory_proportion()),
                    full_plan, &page);
  }
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
