// The text report on stdout (ReportText, declared in sharder/emit.h).
//
// Note [The report's units and width]: one rule for every figure (issue 16):
// bytes in decimal kB/MB (HumanBytesText; the JSON has the byte counts),
// FLOPs with an SI prefix, times with the SI prefix that suits each figure
// (HumanSeconds; seconds in JSON and CSV). Every line is at most
// kReportColumns wide: figures that would not fit (memory by kind, each
// order the optimal strategy tried) go to -v (`all_ipus`) or --html, and
// any line still longer is wrapped at a space with a two-space indent.
#include "writers/report_text.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/plural.h"
#include "graph/shapes.h"
#include "pod/ipu_rows.h"
#include "pod/pod_report.h"
#include "pod/weights_report.h"
#include "writers/assumed_text.h"
#include "writers/emit.h"

namespace autoshard {
namespace {

// A fullest tile's bytes; INT64_MAX stands for a compiler failure that named
// no tile.
std::string TileBytes(int64_t bytes) {
  return bytes == INT64_MAX ? std::string("unknown (no tile named)")
                            : HumanBytesText(static_cast<double>(bytes));
}

// Bytes per tile: the plan's, or (plans written before it had the field)
// the fullest tile plus its margin.
int64_t BytesPerTile(const proto::Plan& plan) {
  if (plan.bytes_per_tile() > 0) return plan.bytes_per_tile();
  if (plan.ipus_size() == 0) return 0;
  const proto::IpuMemory& m = plan.ipus(0).memory();
  return m.max_tile_bytes() + m.tile_margin_bytes();
}

// "84.4%": `bytes` as a share of one tile.
std::string TileUsed(const proto::Plan& plan, int64_t bytes) {
  const int64_t tile = BytesPerTile(plan);
  if (tile <= 0 || bytes == INT64_MAX) return "?";
  return absl::StrFormat(
      "%.1f%%", 100.0 * static_cast<double>(bytes) / static_cast<double>(tile));
}

// The IPU and the tile on it of a memory's fullest tile, from the global
// index (folded rows keep the global one of their fullest IPU).
struct TileAt {
  int64_t ipu = 0;
  int64_t tile = 0;
};
TileAt FullestTileAt(const proto::Plan& plan, int ipu,
                     const proto::IpuMemory& m) {
  if (plan.tiles_per_ipu() <= 0) return {ipu, m.max_tile_on_ipu()};
  return {m.max_tile() / plan.tiles_per_ipu(),
          m.max_tile() % plan.tiles_per_ipu()};
}

// A row's label: its IPU number, or "host" (with its index when there are
// several) for a problem file's host device (Note [Host stages in a plan],
// sharder/solve_host.cc).
std::string RowLabel(const proto::Plan& plan, int row) {
  const proto::IpuCost& cost = plan.ipus(row);
  if (!cost.host()) return absl::StrCat(cost.ipu());
  return plan.num_host_devices() > 1 ? absl::StrCat("host ", cost.host_device())
                                     : std::string("host");
}

// The per-IPU table: nodes, weights, total memory, the fullest tile (bytes,
// index on the IPU, % of a tile used), fits, FLOPs, stage time and the
// cut-tensor bytes sent to later IPUs. Rows fold at POD scale
// (pod/ipu_rows.h).
// Σ bytes the IPUs send (the rows' "sent" column, the all row's figure): a
// tensor relayed through IPUs between its producer and reader counts once
// per IPU that sends it.
int64_t SentBytes(const proto::Plan& plan) {
  int64_t sent = 0;
  for (const auto& ipu : plan.ipus())
    sent = SaturatingAdd(sent, ipu.cut_tensor_out_bytes());
  return sent;
}

void AppendIpuTable(const proto::Plan& plan, bool all_ipus, std::string* out) {
  // constexpr, so that clang checks the format against the arguments.
  static constexpr char row[] =
      "%-7s %6s %9s %9s %9s %5s %7s %4s %13s %10s %9s\n";
  absl::StrAppendFormat(out, row, "IPU", "nodes", "weights", "total",
                        "max tile", "tile", "used", "fits", "compute",
                        "stage time", "sent");
  const std::vector<pod::IpuRun> runs = pod::IpuRows(plan, all_ipus);
  for (const pod::IpuRun& run : runs) {
    const proto::IpuCost ipu = pod::FoldIpus(plan, run);
    const proto::IpuMemory& m = ipu.memory();
    int64_t sent = 0;
    for (int d = run.first; d <= run.last; ++d)
      sent = SaturatingAdd(sent, plan.ipus(d).cut_tensor_out_bytes());
    const TileAt at = FullestTileAt(plan, run.first, m);
    absl::StrAppendFormat(
        out, row,
        run.first == run.last ? RowLabel(plan, run.first)
                              : absl::StrCat(plan.ipus(run.first).ipu(), "-",
                                             plan.ipus(run.last).ipu()),
        absl::StrCat(ipu.num_nodes()), HumanBytesText(m.weight_bytes()),
        HumanBytesText(m.total_bytes()), TileBytes(m.max_tile_bytes()),
        run.first == run.last ? absl::StrCat(at.tile)
                              : absl::StrCat(at.ipu, ":", at.tile),
        TileUsed(plan, m.max_tile_bytes()), m.fits() ? "yes" : "NO",
        HumanFlopsText(ipu.flops()), HumanSeconds(ipu.stage_time_s()),
        HumanBytesText(sent));
  }
  int64_t nodes = 0, weights = 0, total = 0;
  double flops = 0;
  for (const auto& ipu : plan.ipus()) {
    nodes += ipu.num_nodes();
    flops += ipu.flops();
    weights = SaturatingAdd(weights, ipu.memory().weight_bytes());
    total = SaturatingAdd(total, ipu.memory().total_bytes());
  }
  absl::StrAppendFormat(out, row, "all", absl::StrCat(nodes),
                        HumanBytesText(weights), HumanBytesText(total), "", "",
                        "", plan.fits() ? "yes" : "NO", HumanFlopsText(flops),
                        "", HumanBytesText(SentBytes(plan)));
  if (runs.size() < static_cast<size_t>(plan.ipus_size())) {
    absl::StrAppend(out,
                    "(a row of several IPUs: their sums, fullest tile as "
                    "IPU:tile, slowest stage; -v: every IPU)\n");
  }
}

// -v: memory by kind per IPU under the tile-memory model.
void AppendMemoryByKind(const proto::Plan& plan, std::string* out) {
  static constexpr char row[] = "%-7s %10s %10s %10s %11s %10s %10s %10s\n";
  absl::StrAppend(out, "memory by kind (tile-memory model):\n");
  absl::StrAppendFormat(out, row, "IPU", "weights", "code", "exchange",
                        "activations", "temporary", "total", "margin");
  for (int i = 0; i < plan.ipus_size(); ++i) {
    const proto::IpuCost& ipu = plan.ipus(i);
    if (ipu.host()) continue;  // no tile memory
    const proto::IpuMemory& m = ipu.memory();
    absl::StrAppendFormat(
        out, row, RowLabel(plan, i), HumanBytesText(m.weight_bytes()),
        HumanBytesText(m.code_bytes()), HumanBytesText(m.exchange_bytes()),
        HumanBytesText(m.activation_bytes()),
        HumanBytesText(m.temporary_bytes()), HumanBytesText(m.total_bytes()),
        absl::StrCat(m.tile_margin_bytes() < 0 ? "-" : "",
                     HumanBytesText(std::abs(m.tile_margin_bytes()))));
  }
}

// "fits: all 4 IPUs" ("fits: its 1 IPU" for one) or "19 of 32 IPUs
// overflow (0-7, 9-10)", then the fullest tile as "IPU 5 tile 589".
void AppendFitLines(const proto::Plan& plan, std::string* out) {
  const std::string over = pod::OverflowSummary(plan);
  if (over.empty()) {
    const int ipus = plan.ipus_size() - plan.num_host_devices();
    absl::StrAppend(out, ipus == 1 ? "fits: its " : "fits: all ",
                    Plural(ipus, "IPU"), FitsCaveat(plan.shapes()), "\n");
  } else {
    absl::StrAppend(out, over);
  }
  int fullest = -1;
  for (int d = 0; d < plan.ipus_size(); ++d) {
    if (plan.ipus(d).host()) continue;  // no tiles
    if (fullest < 0 || plan.ipus(d).memory().max_tile_bytes() >
                           plan.ipus(fullest).memory().max_tile_bytes())
      fullest = d;
  }
  if (fullest < 0) return;
  const proto::IpuMemory& m = plan.ipus(fullest).memory();
  const TileAt at = FullestTileAt(plan, plan.ipus(fullest).ipu(), m);
  absl::StrAppend(out, "fullest tile: IPU ", at.ipu, " tile ", at.tile, ", ",
                  TileBytes(m.max_tile_bytes()), " of ",
                  HumanBytesText(BytesPerTile(plan)), " (",
                  TileUsed(plan, m.max_tile_bytes()), " used)\n");
  if (plan.within_model_uncertainty()) {
    absl::StrAppend(
        out,
        "an IPU's fullest tile is within the model's error band "
        "of capacity; confirm: run this command again with --compile-cmd "
        "'CMD {model}' (it compiles this split, then the next "
        "candidates until one compiles)\n");
  }
}

// Why the plan does not fit (pod/no_fit.h), the compiler-style
// line, and what would fit.
void AppendNoFitLines(const proto::Plan& plan, std::string* out) {
  if (plan.no_fit_reason().empty()) {
    absl::StrAppend(out, "does not fit: ", plan.out_of_memory(), "\n");
  } else {
    absl::StrAppend(out, "does not fit: ", plan.no_fit_reason(), "\n",
                    "  fullest tile: ", plan.out_of_memory(), "\n");
  }
  if (plan.would_fit_size() > 0) {
    absl::StrAppend(out, "would fit: ", absl::StrJoin(plan.would_fit(), "; "),
                    "\n");
  }
}

// The cut tensors: how many, their bytes, the largest.
void AppendCutLine(const proto::Plan& plan, std::string* out) {
  if (plan.cut_tensors_size() == 0) return;
  int64_t bytes = 0;
  for (const auto& t : plan.cut_tensors())
    bytes = SaturatingAdd(bytes, t.bytes());
  // A problem file's host device (Note [Host stages in a plan]): the
  // tensors it sends or receives, counted apart.
  int host = 0;
  int64_t host_bytes = 0;
  for (const auto& t : plan.cut_tensors()) {
    if (!t.from_host() && !t.to_host()) continue;
    ++host;
    host_bytes = SaturatingAdd(host_bytes, t.bytes());
  }
  const std::string host_text =
      host == 0
          ? ""
          : absl::StrCat("; ", host, " of them (", HumanBytesText(host_bytes),
                         ") to or from the host");
  // The rows' "sent" column adds more when a tensor read beyond the next
  // IPU passes through those between (Note [Slicing DP]): say so.
  const int64_t sent = SentBytes(plan);
  const std::string sent_text =
      sent > bytes ? absl::StrCat("; ", HumanBytesText(sent),
                                  " sent, some relayed through the IPUs "
                                  "between")
                   : "";
  const proto::CutTensor& largest = plan.cut_tensors(0);
  absl::StrAppend(out, "cut tensors: ", plan.cut_tensors_size(), " (",
                  HumanBytesText(bytes), ", one copy each", sent_text,
                  host_text, "); largest ", HumanBytesText(largest.bytes()),
                  largest.from_host()
                      ? " from the host"
                      : absl::StrCat(" from IPU ", largest.from_ipu()),
                  ": ", largest.tensor(), "\n");
}

// The strategy auto chose ("" when the plan is not auto's).
std::string ChosenStrategy(const proto::Plan& plan) {
  for (const auto& c : plan.candidates())
    if (c.chosen()) return c.strategy();
  return "";
}

// What the search and optimal strategies did; each line says when its split
// is not the one the table shows.
void AppendStrategyLines(const proto::Plan& plan, bool all_ipus,
                         std::string* out) {
  const std::string chosen = ChosenStrategy(plan);
  const auto not_shown = [&](const std::string& strategy) {
    return chosen.empty() || chosen == strategy
               ? std::string()
               : absl::StrCat(" (not the split shown: auto chose ", chosen,
                              ")");
  };
  if (plan.has_search()) {
    const proto::SearchSummary& search = plan.search();
    absl::StrAppend(
        out, "search", not_shown("search"), ": ",
        Plural(search.candidates(), "candidate"), " over ",
        Plural(search.subgraphs(), "subgraph"), " in ",
        HumanSeconds(search.seconds()), ", stopped: ", search.stop_reason(),
        "; its fullest tile ", TileBytes(search.max_tile_bytes()),
        " (raw split's: ", TileBytes(search.raw_max_tile_bytes()), ")",
        search.optimal_perf() && search.fits()
            ? "; best bottleneck of the fitting splits"
            : "",
        "\n");
    if (search.lowered_memory_proportion() &&
        (chosen.empty() || chosen == "search")) {
      absl::StrAppendFormat(
          out,
          "fits only with available memory proportion %.1f: compile with "
          "availableMemoryProportion set to %.1f\n",
          search.available_memory_proportion(),
          search.available_memory_proportion());
    }
  }
  if (plan.has_optimal() && !plan.optimal().order().empty()) {
    const proto::OptimalSummary& o = plan.optimal();
    absl::StrAppend(
        out, "optimal", not_shown("optimal"), ": ",
        o.fits()       ? "the fastest fitting"
        : o.complete() ? "no slicing fits; the fastest"
                       : "no fitting slicing found within its budget; the "
                         "fastest",
        " slicing of ", o.order(), ": bottleneck ",
        HumanSeconds(o.bottleneck_s()), "; ", o.fit_evaluations(),
        " tile-memory evaluations in ", HumanSeconds(o.seconds()),
        o.complete() ? ""
                     : " (stopped by --max-search-seconds or its budget of "
                       "evaluations: not proven optimal)",
        "\n");
    if (all_ipus) {
      std::vector<std::string> orders;
      for (const auto& t : o.orders()) {
        orders.push_back(absl::StrCat(
            t.order(), " (", t.units(), " units) ",
            t.fits() ? HumanSeconds(t.bottleneck_s()) : "none fits"));
      }
      absl::StrAppend(out, "optimal orders: ", absl::StrJoin(orders, ", "),
                      "\n");
    }
  }
  if (plan.candidates_size() > 0) {
    std::vector<std::string> parts;
    for (const auto& c : plan.candidates()) {
      parts.push_back(absl::StrCat(
          c.strategy(), " ", HumanSeconds(c.bottleneck_s()),
          c.fits() ? ""
                   : absl::StrCat(" (does not fit: fullest tile ",
                                  TileBytes(c.max_tile_bytes()), ")")));
    }
    // Note [Splits that do not fit] (solver/strategies/auto_strategy.h):
    // say why a split that does not fit beat one with a smaller fullest
    // tile.
    std::string why;
    for (const auto& c : plan.candidates()) {
      if (!c.chosen() || c.fits()) continue;
      for (const auto& other : plan.candidates()) {
        if (!other.fits() && other.max_tile_bytes() < c.max_tile_bytes() &&
            other.bottleneck_s() > c.bottleneck_s()) {
          why =
              " (the fastest of the splits whose fullest tile is within the "
              "model's memory error band of the smallest)";
        }
      }
    }
    absl::StrAppend(out, "auto: bottlenecks ", absl::StrJoin(parts, ", "),
                    "; chose ", chosen, why, "\n");
  }
  for (const std::string& why : plan.gave_up())
    absl::StrAppend(out, "auto: ", why, "\n");
}

// Stages that outnumber the IPUs, and the choice for a weight read far
// apart (proto::StageLayout; Note [Last stage on IPU 0]).
void AppendStageLines(const proto::Plan& plan, std::string* out) {
  if (!plan.has_stages()) return;
  const proto::StageLayout& st = plan.stages();
  if (st.num_stages() > plan.num_ipus()) {
    std::vector<std::string> back;
    for (int s = 0; s < st.stage_ipus_size(); ++s) {
      if (st.stage_ipus(s) != s)
        back.push_back(absl::StrCat("stage ", s, " on IPU ", st.stage_ipus(s)));
    }
    absl::StrAppend(out, "stages: ", st.num_stages(), " stages on ",
                    plan.num_ipus(), " IPUs (", absl::StrJoin(back, ", "),
                    "); an IPU runs each of its stages every micro-batch\n");
  }
  if (st.shared_weight().empty()) return;
  const std::string weight = absl::StrCat(
      "'", st.shared_weight(), "' (",
      HumanBytesText(static_cast<double>(st.shared_weight_bytes())), ")");
  const bool revisit = st.choice() == "revisit";
  std::string versus;
  if (st.other_bottleneck_s() > 0) {
    const int64_t saved = st.weight_bytes_saved();
    versus = absl::StrCat(saved >= 0 ? "saves " : "spends ",
                          HumanBytesText(static_cast<double>(std::abs(saved))),
                          " of weights against the fastest split ",
                          revisit ? "that keeps stage k on IPU k"
                                  : "whose last stage returns "
                                    "to IPU 0",
                          " (bottleneck ",
                          HumanSeconds(plan.performance().bottleneck_s()),
                          " vs ", HumanSeconds(st.other_bottleneck_s()), ")");
  } else {
    versus = revisit ? "no split that keeps stage k on IPU k is allowed or fits"
                     : "no split whose last stage returns to IPU 0 was found "
                       "that fits";
  }
  absl::StrAppend(out, "shared weight ", weight, ", read far apart (--weights ",
                  st.weights(), "): ",
                  revisit
                      ? "the last stage returns to IPU 0, which holds it once"
                      : "stored on two IPUs",
                  st.other_bottleneck_s() > 0 ? "; this " : "; ", versus, "\n");
}

// The pipeline's figures and the best proven bound (the certified one, at
// least the cheap one); -v (`all`) adds the cheap bound.
void AppendPipelineLines(const proto::Plan& plan, bool all, std::string* out) {
  const proto::Performance& perf = plan.performance();
  absl::StrAppendFormat(
      out, "pipeline: bottleneck %s, throughput %.1f samples/s, latency %s\n",
      HumanSeconds(perf.bottleneck_s()), perf.throughput_per_s(),
      HumanSeconds(perf.latency_s()));
  // throughput = batch / (bottleneck + the profile's step_fixed_s): say the
  // fixed part, else 1 / bottleneck reads as the throughput (a newcomer).
  const int64_t batch = std::max<int64_t>(plan.batch_size(), 1);
  if (perf.throughput_per_s() > 0) {
    const double fixed_s =
        batch / perf.throughput_per_s() - perf.bottleneck_s();
    if (fixed_s > 1e-12) {
      absl::StrAppendFormat(out,
                            "  throughput: %s a step, a step the bottleneck + "
                            "%s fixed (host sync, stream set-up)\n",
                            Plural(batch, "sample"), HumanSeconds(fixed_s));
    }
  }
  // Host devices (issue 31): a problem file's stages on the host.
  for (int stage = 0; stage < plan.ipus_size(); ++stage) {
    const proto::IpuCost& cost = plan.ipus(stage);
    if (!cost.host()) continue;
    absl::StrAppendFormat(out,
                          "host: stage %d runs on %s: %d nodes, %s "
                          "(copies to and from it are the IPUs')\n",
                          stage, RowLabel(plan, stage), cost.num_nodes(),
                          HumanSeconds(cost.stage_time_s()));
  }
  absl::StrAppendFormat(
      out, "bound: no split is faster than %s (certified by %s; gap %.1f%%)\n",
      HumanSeconds(perf.certified_bound_s()), perf.bound_method(),
      perf.certified_gap_percent());
  if (all) {
    absl::StrAppendFormat(out,
                          "  the cheap lower bound (Σ time / IPUs, the "
                          "costliest node, pigeonhole): %s (gap %.1f%%)\n",
                          HumanSeconds(perf.lower_bound_s()),
                          perf.gap_percent());
  }
}

}  // namespace

std::string WrapReportLines(const std::string& text, size_t columns) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::string rest(line);
    std::string indent;
    while (rest.size() > columns) {
      // The last space that keeps the line within `columns`, past the
      // indent (a word longer than a line stays whole).
      size_t cut = rest.rfind(' ', columns);
      if (cut == std::string::npos || cut <= indent.size()) break;
      out += rest.substr(0, cut) + "\n";
      indent = "  ";
      rest = indent + rest.substr(cut + 1);
    }
    out += rest + "\n";
  }
  out.pop_back();  // StrSplit gave one piece more than the newlines
  return out;
}

std::string ReportText(const proto::Plan& plan, bool all_ipus) {
  std::string out;
  const auto& s = plan.summary();
  absl::StrAppend(&out, "model: ", plan.model(), "\n");
  absl::StrAppendFormat(
      &out,
      "nodes: %d   IPUs: %s   strategy: %s   precision: %s   batch: %d   "
      "device: %s\n",
      s.num_nodes(),
      plan.stages().num_stages() > plan.num_ipus()
          ? absl::StrCat(plan.num_ipus(), " (", plan.stages().num_stages(),
                         " stages on ", plan.num_ipus(), " IPUs)")
          : absl::StrCat(
                plan.num_ipus(),
                plan.num_host_devices() > 0
                    ? absl::StrCat(" + ", plan.num_host_devices(), " host")
                    : ""),
      plan.strategy(), plan.precision(), std::max(plan.batch_size(), 1),
      plan.device());
  absl::StrAppend(
      &out, "shapes: ", ShapesText(plan.shapes(), plan.assumptions()), "\n");
  const int64_t tile = BytesPerTile(plan);
  absl::StrAppend(&out, "IPU capacity: ",
                  plan.tiles_per_ipu() > 0
                      ? absl::StrCat(HumanBytesText(static_cast<double>(tile) *
                                                    plan.tiles_per_ipu()),
                                     " = ", plan.tiles_per_ipu(), " tiles x ")
                      : "tiles of ",
                  HumanBytesText(tile),
                  absl::StrFormat("; available memory proportion %.2f\n",
                                  plan.available_memory_proportion()));
  AppendIpuTable(plan, all_ipus, &out);
  AppendFitLines(plan, &out);
  AppendCutLine(plan, &out);
  if (all_ipus) AppendMemoryByKind(plan, &out);
  absl::StrAppend(&out, "calibration: ", plan.calibration(), "\n");
  if (plan.calibration_outside_size() > 0) {
    absl::StrAppend(&out, "outside what the calibration checked: ",
                    absl::StrJoin(plan.calibration_outside(), "; "), "\n");
  }
  AppendPipelineLines(plan, all_ipus, &out);
  AppendStageLines(plan, &out);
  absl::StrAppend(&out,
                  "model weights: ", HumanBytesText(s.total_weight_bytes()),
                  "; a weight read on two IPUs is stored on both\n");
  AppendStrategyLines(plan, all_ipus, &out);
  if (plan.num_ipus_tried_size() > 0) {
    absl::StrAppend(&out, "--num-ipus auto: IPU counts tried: ",
                    absl::StrJoin(plan.num_ipus_tried(), ", "), "\n");
  }
  if (plan.num_ipus_skipped_size() > 0) {
    absl::StrAppend(&out,
                    "--num-ipus auto: skipped, as they never fit (the weights, "
                    "or a node, alone exceed their memory): ",
                    absl::StrJoin(plan.num_ipus_skipped(), ", "), "\n");
  }
  absl::StrAppend(&out, pod::PodReportText(plan));
  absl::StrAppend(&out, pod::WeightLocationsText(plan));
  if (!plan.poprt_flags().empty()) {
    absl::StrAppend(&out,
                    "PopRT flags for the planned problem: ", plan.poprt_flags(),
                    "\n");
  }
  if (!plan.fits()) AppendNoFitLines(plan, &out);
  absl::StrAppend(
      &out,
      "(memory and times: autoshard's models of the device, not the "
      "compiler's figures)\n");
  // The bound's seconds are apart from planning_s (loading to plan); the
  // CLI's "planned ... in" on stderr (-v) counts both.
  const double bound_s = plan.performance().bound_seconds();
  absl::StrAppend(&out, "sharding points: ", plan.sharding_points_size(),
                  "   planned in ", HumanSeconds(s.planning_s()),
                  bound_s > 0 ? absl::StrCat(", the certified bound in ",
                                             HumanSeconds(bound_s), " more")
                              : "",
                  "\n");
  return WrapReportLines(out, kReportColumns);
}

}  // namespace autoshard
