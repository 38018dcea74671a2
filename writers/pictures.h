// The pictures of a plan, rendered together before anything is written:
// `--html FILE` (writers/html_report.h) and
// `--graph FILE.svg|.png|.pdf|.dot`
// (writers/dot_graph.h). The page embeds the graph's SVG whenever
// Graphviz is installed, whether or not --graph was given.
#ifndef AUTOSHARD_WRITERS_PICTURES_H_
#define AUTOSHARD_WRITERS_PICTURES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "onnx/onnx_pb.h"
#include "proto/device.pb.h"
#include "proto/plan.pb.h"
#include "sharder/autoshard.h"
#include "writers/dot_graph.h"

namespace autoshard {

struct PictureOptions {
  bool html = false;       // render the page
  std::string graph_path;  // "" none; else ends .svg, .png, .pdf or .dot
  DotOptions dot;
  std::string command_line;  // shown on the page
};

struct Pictures {
  std::string html;   // the page, when asked
  std::string graph;  // the SVG, PNG or PDF bytes or DOT text, when asked
};

// InvalidArgument unless `path` ends with .svg, .png, .pdf or .dot (the
// message names it and the flag).
absl::Status CheckGraphPath(absl::string_view path);

// Renders what `options` asks for of `plan`, made for `model` (whose main
// graph gives the op types, and the edges unless the plan's analysis has
// the DAG) and judged with the plan's analysis's device, else with `device`
// (a plan made without PlanModel). The stage times' copies are the plan's
// (Plan::copy_s). Errors: CheckGraphPath's; FailedPrecondition for a
// .svg/.png/.pdf graph when Graphviz's dot is missing (a page alone then
// says, in place of the picture, how to install it); MakePlanGraph's and
// RenderDot's (a page alone also goes without the picture when Graphviz
// takes too long).
absl::StatusOr<Pictures> RenderPictures(const onnx::ModelProto& model,
                                        const Plan& plan,
                                        const proto::DeviceProfile& device,
                                        const PictureOptions& options);

// Graphviz's SVG file as an element to inline in HTML: what precedes <svg
// (the XML declaration, DOCTYPE, comments) removed.
std::string InlineSvg(absl::string_view svg_file);

}  // namespace autoshard

#endif  // AUTOSHARD_WRITERS_PICTURES_H_
