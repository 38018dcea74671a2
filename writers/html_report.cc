#include "writers/html_report.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/plural.h"
#include "writers/assumed_text.h"
#include "writers/emit.h"
#include "writers/html_page.h"
#include "writers/svg.h"

namespace autoshard {
namespace {

using html::Bytes;
using html::Figure;
using html::Flops;
using html::Seconds;

std::string IpuPath(int i, absl::string_view field) {
  return absl::StrCat("ipus.", i, ".", field);
}

// Seconds IPU `ipu` spends copying cut tensors, as the performance model
// counted them in its stage time (HtmlPageInputs::copy_s, from the plan),
// at most that stage time.
double CopySeconds(const proto::IpuCost& ipu, const HtmlPageInputs& inputs) {
  const size_t d = static_cast<size_t>(ipu.ipu());
  const double copy = d < inputs.copy_s.size() ? inputs.copy_s[d] : 0;
  return std::min(copy, ipu.stage_time_s());
}

// ", 5 stages on 4 IPUs (stage 4 on IPU 0)" when stages outnumber IPUs, as
// the text report's "stages:" line; else empty.
std::string StagesText(const proto::Plan& plan) {
  const proto::StageLayout& st = plan.stages();
  if (st.num_stages() <= plan.num_ipus()) return "";
  std::vector<std::string> back;
  for (int s = 0; s < st.stage_ipus_size(); ++s) {
    if (st.stage_ipus(s) != s)
      back.push_back(absl::StrCat("stage ", s, " on IPU ", st.stage_ipus(s)));
  }
  return absl::StrCat(
      ", ",
      Figure("stages.num_stages", static_cast<int64_t>(st.num_stages()),
             absl::StrCat(st.num_stages())),
      " stages on ", plan.num_ipus(), " IPUs (",
      XmlEscape(absl::StrJoin(back, ", ")), ")");
}

std::string Header(const proto::Plan& plan) {
  const proto::Performance& perf = plan.performance();
  return absl::StrCat(
      "<h1>autoshard: ", XmlEscape(plan.model()),
      "</h1>\n<p class=\"summary\">",
      Figure("summary.num_nodes", plan.summary().num_nodes(),
             absl::StrCat(plan.summary().num_nodes())),
      " nodes on ",
      Figure("num_ipus", static_cast<int64_t>(plan.num_ipus()),
             absl::StrCat(plan.num_ipus())),
      " IPUs", StagesText(plan), " (", XmlEscape(plan.device()), ", strategy ",
      XmlEscape(plan.strategy()), "): ",
      plan.fits()
          ? absl::StrCat("<span class=\"fits\">fits",
                         XmlEscape(FitsCaveat(plan.shapes())), "</span>")
          : absl::StrCat(
                "<span class=\"nofit\">does not fit: ",
                XmlEscape(plan.no_fit_reason().empty() ? plan.out_of_memory()
                                                       : plan.no_fit_reason()),
                "</span>"),
      "<br>bottleneck ",
      Seconds("performance.bottleneck_s", perf.bottleneck_s()), ", throughput ",
      Figure("performance.throughput_per_s", perf.throughput_per_s(),
             absl::StrFormat("%.1f", perf.throughput_per_s())),
      " samples/s, latency ",
      Seconds("performance.latency_s", perf.latency_s()),
      "<br>no split is faster than ",
      Seconds("performance.certified_bound_s", perf.certified_bound_s()),
      " (certified by ", XmlEscape(perf.bound_method()), "; gap ",
      Figure("performance.certified_gap_percent", perf.certified_gap_percent(),
             absl::StrFormat("%.1f%%", perf.certified_gap_percent())),
      "; the cheap lower bound ",
      Seconds("performance.lower_bound_s", perf.lower_bound_s()), ", gap ",
      Figure("performance.gap_percent", perf.gap_percent(),
             absl::StrFormat("%.1f%%", perf.gap_percent())),
      ")<br>shapes: <span class=\"shapes\" data-verdict=\"",
      XmlEscape(plan.shapes().verdict()), "\">",
      XmlEscape(ShapesText(plan.shapes(), plan.assumptions())),
      "</span></p>\n<p class=\"note\">Memory and times are autoshard's "
      "tile-memory "
      "and performance models of the device, not the compiler's "
      "figures.</p>\n");
}

std::string StageChart(const proto::Plan& plan, const HtmlPageInputs& inputs) {
  BarChart chart;
  chart.id = "stage-chart";
  chart.title =
      "Stage time per IPU, against the bottleneck and the best proven bound";
  chart.format = HumanSeconds;
  chart.series = {{"compute", "#4e79a7"}, {"copies", "#bab0ac"}};
  for (const proto::IpuCost& ipu : plan.ipus()) {
    const double copy = CopySeconds(ipu, inputs);
    BarRow& row = chart.rows.emplace_back();
    row.label = absl::StrCat("IPU ", ipu.ipu());
    row.values = {ipu.stage_time_s() - copy, copy};
    row.note = HumanSeconds(ipu.stage_time_s());
    row.attributes = {
        {"data-stage-time-s", absl::StrFormat("%.17g", ipu.stage_time_s())}};
  }
  const proto::Performance& perf = plan.performance();
  chart.lines = {
      {perf.bottleneck_s(),
       absl::StrCat("bottleneck ", HumanSeconds(perf.bottleneck_s())),
       "#c0392b", ""},
      {perf.certified_bound_s(),
       absl::StrCat("bound ", HumanSeconds(perf.certified_bound_s())),
       "#1a7f37", "4 3"}};
  return DrawBarChart(chart);
}

// One pipeline stage as the timeline draws it.
struct TimelineStage {
  int stage = 0;
  int lane = 0;  // the row of its IPU (the plan's ipus order)
  int ipu = 0;
  double compute_s = 0, copy_s = 0;
};

// The plan's stages: per stage from HtmlPageInputs::stage_compute_s and
// stage_copy_s when the plan's stages outnumber its IPUs and those fit
// plan.stages(), else one stage per IPU (its stage time less its copies,
// then the copies).
std::vector<TimelineStage> StagesOf(const proto::Plan& plan,
                                    const HtmlPageInputs& inputs) {
  std::vector<TimelineStage> out;
  const proto::StageLayout& layout = plan.stages();
  const size_t n = static_cast<size_t>(layout.stage_ipus_size());
  if (layout.num_stages() > plan.ipus_size() && n > 0 &&
      inputs.stage_compute_s.size() == n && inputs.stage_copy_s.size() == n) {
    for (size_t s = 0; s < n; ++s) {
      int lane = -1;
      for (int i = 0; i < plan.ipus_size(); ++i)
        if (plan.ipus(i).ipu() == layout.stage_ipus(static_cast<int>(s)))
          lane = i;
      if (lane < 0) continue;  // a stage with no nodes
      out.push_back({static_cast<int>(s), lane, plan.ipus(lane).ipu(),
                     inputs.stage_compute_s[s], inputs.stage_copy_s[s]});
    }
    return out;
  }
  for (int i = 0; i < plan.ipus_size(); ++i) {
    const proto::IpuCost& ipu = plan.ipus(i);
    const double copy = CopySeconds(ipu, inputs);
    out.push_back({ipu.ipu(), i, ipu.ipu(), ipu.stage_time_s() - copy, copy});
  }
  return out;
}

// kTimelineMicroBatches micro-batches through a synchronous pipeline: every
// step lasts the bottleneck, and micro-batch m is in stage s during step
// m + s (PopART's pipeline: the slowest IPU sets the pace). An IPU that runs
// several stages (a last stage back on IPU 0, Note [A stage revisits an
// IPU]) runs them in turn within each step, in stage order, so its row
// shows each of them, e.g. stage 0 of micro-batch m then stage 4 of
// micro-batch m - 4: the performance model charges the IPU both per
// micro-batch.
std::string PipelineChart(const proto::Plan& plan,
                          const HtmlPageInputs& inputs) {
  const std::vector<TimelineStage> stages = StagesOf(plan, inputs);
  // The pipeline's depth is the highest stage index + 1, not the stages
  // drawn: a stage with no nodes has no box but still takes its step.
  int num_stages = 0;
  for (const TimelineStage& st : stages)
    num_stages = std::max(num_stages, st.stage + 1);
  Timeline t;
  t.id = "timeline-chart";
  t.title = absl::StrCat("Pipeline: ", kTimelineMicroBatches,
                         " micro-batches, one step = the bottleneck");
  if (num_stages > plan.ipus_size()) {
    absl::StrAppend(&t.title, "; ", num_stages, " stages on ", plan.ipus_size(),
                    " IPUs");
  }
  t.format = HumanSeconds;
  t.legend = {{"copies", "#555"}};
  const double step = plan.performance().bottleneck_s();
  t.end = step * (kTimelineMicroBatches + num_stages - 1);
  // Per lane: its stages, and where in a step each starts.
  std::vector<std::vector<int>> stages_of_lane(plan.ipus_size());
  std::vector<double> offset_s(stages.size(), 0);
  std::vector<double> used_s(plan.ipus_size(), 0);
  for (size_t k = 0; k < stages.size(); ++k) {
    const TimelineStage& st = stages[k];
    stages_of_lane[st.lane].push_back(st.stage);
    offset_s[k] = used_s[st.lane];
    used_s[st.lane] += st.compute_s + st.copy_s;
  }
  for (int i = 0; i < plan.ipus_size(); ++i) {
    std::string lane = absl::StrCat("IPU ", plan.ipus(i).ipu());
    if (stages_of_lane[i].size() > 1) {
      absl::StrAppend(&lane, " (stages ",
                      absl::StrJoin(stages_of_lane[i], ", "), ")");
    }
    t.lanes.push_back(std::move(lane));
  }
  for (size_t k = 0; k < stages.size(); ++k) {
    const TimelineStage& st = stages[k];
    const bool shared = stages_of_lane[st.lane].size() > 1;
    for (int m = 0; m < kTimelineMicroBatches; ++m) {
      const double start = step * (m + st.stage) + offset_s[k];
      const double compute_end = start + st.compute_s;
      const std::string what =
          shared ? absl::StrCat("micro-batch ", m, ", stage ", st.stage,
                                " on IPU ", st.ipu)
                 : absl::StrCat("micro-batch ", m, " on IPU ", st.ipu);
      t.boxes.push_back(
          {st.lane,
           start,
           compute_end,
           IpuColour(st.stage),
           shared ? absl::StrCat("s", st.stage, " m", m) : absl::StrCat("m", m),
           absl::StrCat(what, ": compute ", HumanSeconds(st.compute_s)),
           {{"data-ipu", absl::StrCat(st.ipu)},
            {"data-stage", absl::StrCat(st.stage)},
            {"data-micro-batch", absl::StrCat(m)}}});
      if (st.copy_s > 0) {
        t.boxes.push_back(
            {st.lane,
             compute_end,
             compute_end + st.copy_s,
             "#555",
             "",
             absl::StrCat(what, ": copies ", HumanSeconds(st.copy_s)),
             {{"data-copy", absl::StrCat(st.ipu)}}});
      }
    }
  }
  return DrawTimeline(t);
}

std::string IpuTable(const proto::Plan& plan) {
  std::vector<std::vector<std::string>> rows;
  for (int i = 0; i < plan.ipus_size(); ++i) {
    const proto::IpuCost& ipu = plan.ipus(i);
    const proto::IpuMemory& m = ipu.memory();
    rows.push_back(
        {absl::StrCat("IPU ", ipu.ipu()),
         Figure(IpuPath(i, "num_nodes"), ipu.num_nodes(),
                absl::StrCat(ipu.num_nodes())),
         Bytes(IpuPath(i, "memory.weight_bytes"), m.weight_bytes()),
         Bytes(IpuPath(i, "memory.code_bytes"), m.code_bytes()),
         Bytes(IpuPath(i, "memory.exchange_bytes"), m.exchange_bytes()),
         Bytes(IpuPath(i, "memory.activation_bytes"), m.activation_bytes()),
         Bytes(IpuPath(i, "memory.temporary_bytes"), m.temporary_bytes()),
         Bytes(IpuPath(i, "memory.total_bytes"), m.total_bytes()),
         Bytes(IpuPath(i, "memory.max_tile_bytes"), m.max_tile_bytes()),
         m.fits() ? "yes" : "<b>NO</b>",
         Bytes(IpuPath(i, "cut_tensor_in_bytes"), ipu.cut_tensor_in_bytes()),
         Bytes(IpuPath(i, "cut_tensor_out_bytes"), ipu.cut_tensor_out_bytes()),
         Flops(IpuPath(i, "flops"), ipu.flops()),
         Seconds(IpuPath(i, "stage_time_s"), ipu.stage_time_s())});
  }
  return html::Table("ipu-table",
                     {"IPU", "nodes", "weights", "code", "exchange",
                      "activations", "temporary", "total", "max tile", "fits",
                      "cut in", "cut out", "compute", "stage time"},
                     rows);
}

std::string CutTensorTable(const proto::Plan& plan) {
  std::vector<std::vector<std::string>> rows;
  int64_t rest_bytes = 0;
  for (int i = 0; i < plan.cut_tensors_size(); ++i) {
    const proto::CutTensor& t = plan.cut_tensors(i);
    if (i >= kMaxCutTensorRows) {
      rest_bytes += t.bytes();
      continue;
    }
    rows.push_back(
        {XmlEscape(t.tensor()), XmlEscape(t.producer()),
         absl::StrCat(t.from_ipu()), absl::StrJoin(t.reader_ipus(), ", "),
         Bytes(absl::StrCat("cut_tensors.", i, ".bytes"), t.bytes())});
  }
  std::string out = absl::StrCat(
      "<p>", plan.cut_tensors_size(),
      " tensors cross IPUs; each is copied stage by stage to its "
      "readers.</p>\n",
      html::Table("cut-table",
                  {"tensor", "producer", "from IPU", "read on IPUs", "bytes"},
                  rows));
  if (plan.cut_tensors_size() > kMaxCutTensorRows) {
    absl::StrAppend(&out, "<p class=\"note\">and ",
                    plan.cut_tensors_size() - kMaxCutTensorRows,
                    " smaller ones (", HumanBytesText(rest_bytes),
                    "); the plan file lists them all.</p>\n");
  }
  return out;
}

std::string StrategyTables(const proto::Plan& plan) {
  std::string out;
  if (plan.candidates_size() > 0) {
    std::vector<std::vector<std::string>> rows;
    for (int i = 0; i < plan.candidates_size(); ++i) {
      const proto::StrategyResult& c = plan.candidates(i);
      const std::string p = absl::StrCat("candidates.", i, ".");
      rows.push_back({XmlEscape(c.strategy()), c.fits() ? "yes" : "no",
                      Seconds(p + "bottleneck_s", c.bottleneck_s()),
                      Bytes(p + "max_tile_bytes", c.max_tile_bytes()),
                      absl::StrFormat("%.2f", c.available_memory_proportion()),
                      HumanSeconds(c.seconds()),  // not "0.000 s"
                      c.chosen() ? "chosen" : ""});
    }
    absl::StrAppend(
        &out, html::Table("strategy-table",
                          {"strategy", "fits", "bottleneck", "fullest tile",
                           "memory proportion", "time", ""},
                          rows));
  }
  if (plan.has_optimal() && plan.optimal().orders_size() > 0) {
    std::vector<std::vector<std::string>> rows;
    for (int i = 0; i < plan.optimal().orders_size(); ++i) {
      const proto::OrderResult& o = plan.optimal().orders(i);
      rows.push_back(
          {XmlEscape(o.order()), absl::StrCat(o.units()),
           o.fits() ? "yes" : "no",
           Seconds(absl::StrCat("optimal.orders.", i, ".bottleneck_s"),
                   o.bottleneck_s())});
    }
    absl::StrAppend(
        &out, "<p>optimal: topological orders sliced</p>\n",
        html::Table("order-table", {"order", "units", "fits", "bottleneck"},
                    rows));
  }
  if (plan.has_search()) {
    const proto::SearchSummary& s = plan.search();
    absl::StrAppend(&out, "<p>search: ", Plural(s.candidates(), "candidate"),
                    " over ", Plural(s.subgraphs(), "subgraph"),
                    ", stopped: ", XmlEscape(s.stop_reason()), "</p>\n");
  }
  if (plan.num_ipus_tried_size() > 0) {
    absl::StrAppend(&out, "<p>--num-ipus auto tried ",
                    absl::StrJoin(plan.num_ipus_tried(), ", "), " IPUs</p>\n");
  }
  return out.empty() ? "<p>one strategy, no alternatives compared</p>\n" : out;
}

std::string GraphSection(const HtmlPageInputs& in) {
  if (in.graph_svg.empty()) {
    return in.graph_note.empty()
               ? ""
               : html::Section("graph", "The graph by IPU",
                               "<p>" + XmlEscape(in.graph_note) + "</p>\n");
  }
  return html::Section(
      "graph", "The graph by IPU",
      absl::StrCat("<p class=\"note\">One cluster per IPU, in pipeline "
                   "order (IPU 0 leftmost); each cut tensor is a pair of red "
                   "notes, \"to IPU e\" where it leaves and \"from IPU d\" "
                   "where it arrives, with its name and bytes. Zoom with the "
                   "buttons or ctrl + wheel; drag "
                   "to pan.</p>\n<div class=\"zoom\"><button "
                   "data-zoom=\"in\">zoom in</button><button "
                   "data-zoom=\"out\">zoom out</button><button "
                   "data-zoom=\"1\">actual size</button><button "
                   "data-zoom=\"fit\">fit</button></div>\n<div "
                   "class=\"graph\">",
                   in.graph_svg, "</div>\n"));
}

}  // namespace

std::string PlanHtml(const proto::Plan& plan, const HtmlPageInputs& inputs) {
  std::vector<proto::IpuMemory> memory;
  std::vector<std::string> labels;
  for (const proto::IpuCost& ipu : plan.ipus()) {
    memory.push_back(ipu.memory());
    labels.push_back(absl::StrCat("IPU ", ipu.ipu()));
  }
  const std::string body = absl::StrCat(
      Header(plan),
      html::MemorySection("Memory", memory, labels, inputs.device),
      html::Section("time", "Time",
                    StageChart(plan, inputs) + PipelineChart(plan, inputs)),
      html::Section("ipus", "Per IPU", IpuTable(plan)), GraphSection(inputs),
      html::Section("cut-tensors", "Cut tensors", CutTensorTable(plan)),
      html::Section("strategies", "Strategies tried", StrategyTables(plan)),
      html::WarningSection(plan.warnings()),
      html::OptionsSection(
          {{"strategy", XmlEscape(plan.strategy())},
           {"IPUs", absl::StrCat(plan.num_ipus())},
           {"batch size", absl::StrCat(std::max(plan.batch_size(), 1))},
           {"precision", XmlEscape(plan.precision())},
           {"available memory proportion",
            absl::StrFormat("%.2f", plan.available_memory_proportion())}},
          inputs.device, inputs.command_line));
  return html::Page(absl::StrCat("autoshard: ", plan.model()), body);
}

}  // namespace autoshard
