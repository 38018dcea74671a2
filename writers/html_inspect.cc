// InspectHtml (declared in writers/html_report.h).
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "writers/emit.h"
#include "writers/html_page.h"
#include "writers/html_report.h"
#include "writers/svg.h"

namespace autoshard {
namespace {

// The op types the FLOPs chart draws, costliest first; the table lists all.
constexpr int kMaxOpTypeBars = 20;

std::string Header(const proto::InspectReport& r) {
  return absl::StrCat(
      "<h1>autoshard inspect: ", XmlEscape(r.model()),
      "</h1>\n<p class=\"summary\">",
      html::Figure("num_nodes", r.num_nodes(), absl::StrCat(r.num_nodes())),
      " nodes, ", html::Flops("total_flops", r.total_flops()), ", ",
      html::Figure("total_macs", r.total_macs(),
                   absl::StrFormat("%.3g", r.total_macs())),
      " MACs, weights ",
      html::Bytes("total_weight_bytes", r.total_weight_bytes()), " (",
      html::Figure("parameters", r.parameters(), absl::StrCat(r.parameters())),
      " parameters)<br>fewest IPUs: ",
      // As the text report (InspectText) says it.
      r.min_ipus() > 0
          ? html::Figure("min_ipus", static_cast<int64_t>(r.min_ipus()),
                         absl::StrCat(r.min_ipus()))
          : std::string("none fits"),
      " (planned as shard --num-ipus auto plans: strategy ",
      XmlEscape(r.min_ipus_strategy()), ")",
      "</p>\n<p class=\"note\">Memory is autoshard's tile-memory model of the "
      "device (",
      XmlEscape(r.device()), ", ", XmlEscape(r.precision()),
      "), not the compiler's figures.</p>\n");
}

std::string OpTypeChart(const proto::InspectReport& r) {
  BarChart chart;
  chart.id = "op-type-chart";
  chart.title =
      absl::StrCat("FLOPs by op type (the ",
                   std::min(r.op_types_size(), kMaxOpTypeBars), " costliest)");
  chart.format = HumanFlopsText;
  chart.series = {{"FLOPs", "#4e79a7"}};
  for (int i = 0; i < r.op_types_size() && i < kMaxOpTypeBars; ++i) {
    const proto::OpTypeSummary& op = r.op_types(i);
    BarRow& row = chart.rows.emplace_back();
    row.label = op.op_type();
    row.values = {op.flops()};
    row.note = absl::StrCat(HumanFlopsText(op.flops()), ", ", op.count(),
                            op.count() == 1 ? " node" : " nodes");
  }
  return DrawBarChart(chart);
}

std::string OpTypeTable(const proto::InspectReport& r) {
  std::vector<std::vector<std::string>> rows;
  for (int i = 0; i < r.op_types_size(); ++i) {
    const proto::OpTypeSummary& op = r.op_types(i);
    const std::string p = absl::StrCat("op_types.", i, ".");
    rows.push_back(
        {XmlEscape(op.op_type()),
         html::Figure(p + "count", op.count(), absl::StrCat(op.count())),
         html::Flops(p + "flops", op.flops()),
         html::Bytes(p + "weight_bytes", op.weight_bytes()),
         op.has_flops_rule() ? "yes" : "no (fallback)"});
  }
  return html::Table("op-type-table",
                     {"op type", "nodes", "FLOPs", "weights", "FLOPs rule"},
                     rows);
}

std::string MemoryTable(const proto::IpuMemory& m) {
  const std::string p = "single_ipu_memory.";
  return html::Table(
      "memory-table", {"kind", "bytes"},
      {{"weights", html::Bytes(p + "weight_bytes", m.weight_bytes())},
       {"code", html::Bytes(p + "code_bytes", m.code_bytes())},
       {"exchange", html::Bytes(p + "exchange_bytes", m.exchange_bytes())},
       {"live activations",
        html::Bytes(p + "activation_bytes", m.activation_bytes())},
       {"temporaries", html::Bytes(p + "temporary_bytes", m.temporary_bytes())},
       {"total", html::Bytes(p + "total_bytes", m.total_bytes())},
       {"fullest tile",
        html::Bytes(p + "max_tile_bytes", m.max_tile_bytes())}});
}

}  // namespace

std::string InspectHtml(const proto::InspectReport& report,
                        const HtmlPageInputs& inputs) {
  const std::vector<proto::IpuMemory> memory = {report.single_ipu_memory()};
  const std::vector<std::string> labels = {"one IPU"};
  const std::string body = absl::StrCat(
      Header(report),
      html::MemorySection("The whole model on one IPU", memory, labels,
                          inputs.device,
                          MemoryTable(report.single_ipu_memory())),
      html::Section("op-types", "FLOPs by op type",
                    OpTypeChart(report) + OpTypeTable(report)),
      html::WarningSection(report.warnings()),
      html::OptionsSection({{"batch size", absl::StrCat(report.batch_size())},
                            {"precision", XmlEscape(report.precision())}},
                           inputs.device, inputs.command_line));
  return html::Page(absl::StrCat("autoshard inspect: ", report.model()), body);
}

}  // namespace autoshard
