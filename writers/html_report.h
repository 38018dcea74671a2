// `--html FILE`: one self-contained HTML page that shows a plan (shard,
// apply) or an inspect report as pictures. Everything is inline: CSS, the SVG
// charts (writers/svg.h), the graph picture, and a few lines of
// script that sort the tables; no network, font or external file, so it
// works from file://.
//
// A plan's page: per IPU memory by kind (weights, code, exchange, live
// activations, temporaries: the tile-memory model, DESIGN.md §3.3) against
// the IPU's capacity (tiles x bytes per tile), the fullest tile against one
// tile's capacity with its margin, the stage time (compute and copies)
// against the bottleneck and the lower bound (§3.4), a pipeline timeline of a
// few micro-batches, the graph picture when there is one, the cut tensors
// with their bytes, the strategies tried, the warnings and the options.
//
// Every figure taken from the plan is in an element with
// data-field="PATH" (the plan JSON's field path, e.g. "ipus.1.memory.
// weight_bytes") and data-value="V" (the exact value), its text the value
// formatted as the text report formats it; tests/html/check_page.js reads
// them back.
#ifndef AUTOSHARD_WRITERS_HTML_REPORT_H_
#define AUTOSHARD_WRITERS_HTML_REPORT_H_

#include <string>
#include <vector>

#include "proto/device.pb.h"
#include "proto/inspect.pb.h"
#include "proto/plan.pb.h"

namespace autoshard {

// What the page shows besides the plan or report.
struct HtmlPageInputs {
  // The profile the plan was judged with (capacities, link bandwidth).
  proto::DeviceProfile device;
  // Per IPU: the seconds of its stage time that are cut-tensor copies, as
  // the performance model counted them (Plan::copy_s); an IPU without an
  // entry shows none.
  std::vector<double> copy_s;
  // Per pipeline stage when stages outnumber IPUs (RenderPictures sets them
  // from the plan's analysis; plan.stages() maps each stage to its IPU):
  // the seconds of its IPU's stage time that are the stage's compute, and
  // its copies (the IPU's remote weight loads with its first stage's); the
  // timeline draws each stage on its IPU's row, an IPU running its stages
  // in turn every step. Empty: one stage per IPU, drawn from copy_s.
  std::vector<double> stage_compute_s;
  std::vector<double> stage_copy_s;
  // Graphviz's SVG of the graph (writers/dot_graph.h), inlined as
  // it is; empty for none, and then `graph_note` says why (may be empty).
  std::string graph_svg;
  std::string graph_note;
  std::string command_line;  // how autoshard was run, shown with the options
};

// The micro-batches the pipeline timeline draws.
inline constexpr int kTimelineMicroBatches = 4;
// The cut tensors listed, largest first; the rest are counted.
inline constexpr int kMaxCutTensorRows = 200;

// The page of a plan.
std::string PlanHtml(const proto::Plan& plan, const HtmlPageInputs& inputs);

// The page of `autoshard inspect`: totals, the whole model's memory on one
// IPU against its capacity, the fewest IPUs, FLOPs by op type, warnings and
// options.
std::string InspectHtml(const proto::InspectReport& report,
                        const HtmlPageInputs& inputs);

}  // namespace autoshard

#endif  // AUTOSHARD_WRITERS_HTML_REPORT_H_
