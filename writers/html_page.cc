#include "writers/html_page.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "writers/emit.h"
#include "writers/svg.h"

namespace autoshard::html {
namespace {

constexpr char kStyle[] = R"(
body{font-family:sans-serif;margin:24px;color:#222;max-width:1180px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;
border-bottom:1px solid #ddd;padding-bottom:4px}
.summary{font-size:14px;line-height:1.6}.note{color:#666;font-size:12px}
.fits{color:#1a7f37;font-weight:bold}.nofit{color:#c0392b;font-weight:bold}
table{border-collapse:collapse;font-size:12px;margin:6px 0}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:right}
th{background:#f2f2f2;cursor:pointer}td:first-child,th:first-child{text-align:left}
#cut-table td:nth-child(2){text-align:left}.graph{overflow:auto;max-height:900px;border:1px solid #ddd}
.graph svg{max-width:100%;height:auto}.graph{cursor:grab}
.zoom button{font-size:12px;margin:0 4px 4px 0}
ul.warnings li{font-size:13px;margin:2px 0}code{font-size:12px}
)";

// Sorts a table by the clicked column (numbers by data-value when the cells
// carry one), zooms and pans the graph, and marks the page as scripted.
constexpr char kScript[] = R"(
(function () {
  function key(cell) {
    var f = cell.querySelector('[data-value]');
    var v = f ? parseFloat(f.getAttribute('data-value')) : NaN;
    return isNaN(v) ? cell.textContent : v;
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    table.querySelectorAll('th').forEach(function (th, column) {
      th.addEventListener('click', function () {
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var down = th.getAttribute('data-down') !== 'yes';
        th.setAttribute('data-down', down ? 'yes' : 'no');
        rows.sort(function (a, b) {
          var x = key(a.cells[column]), y = key(b.cells[column]);
          var c = x < y ? -1 : x > y ? 1 : 0;
          return down ? -c : c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  // The graph's zoom: "fit" (the page's width), or a scale of the picture's
  // own size; buttons and ctrl+wheel zoom, dragging pans (the box scrolls).
  document.querySelectorAll('.graph').forEach(function (box) {
    var svg = box.querySelector('svg');
    if (!svg) return;
    var natural = svg.width && svg.width.baseVal ? svg.width.baseVal.value : 0;
    function zoom(scale) {
      if (scale === 'fit' || !natural) {
        svg.style.maxWidth = '';
        svg.style.width = '';
        box.setAttribute('data-zoom', 'fit');
        return;
      }
      scale = Math.min(8, Math.max(0.1, scale));
      svg.style.maxWidth = 'none';
      svg.style.width = (natural * scale) + 'px';
      box.setAttribute('data-zoom', String(scale));
    }
    function current() {
      var z = box.getAttribute('data-zoom');
      return z === 'fit' ? svg.getBoundingClientRect().width / natural : +z;
    }
    var bar = box.previousElementSibling;
    if (bar && bar.classList.contains('zoom')) {
      bar.querySelectorAll('button').forEach(function (b) {
        b.addEventListener('click', function () {
          var how = b.getAttribute('data-zoom');
          zoom(how === 'in' ? current() * 1.5 : how === 'out' ?
               current() / 1.5 : how === 'fit' ? 'fit' : 1);
        });
      });
    }
    box.addEventListener('wheel', function (e) {
      if (!e.ctrlKey && !e.metaKey) return;
      e.preventDefault();
      zoom(current() * (e.deltaY < 0 ? 1.25 : 0.8));
    }, {passive: false});
    var drag = null;
    box.addEventListener('mousedown', function (e) {
      drag = {x: e.clientX, y: e.clientY, left: box.scrollLeft,
              top: box.scrollTop};
    });
    window.addEventListener('mouseup', function () { drag = null; });
    box.addEventListener('mousemove', function (e) {
      if (!drag) return;
      box.scrollLeft = drag.left - (e.clientX - drag.x);
      box.scrollTop = drag.top - (e.clientY - drag.y);
    });
    zoom('fit');
  });
  document.documentElement.setAttribute('data-ready', 'yes');
})();
)";

std::string Percent(double v) { return absl::StrFormat("%.1f%%", v); }

}  // namespace

std::string Page(absl::string_view title, absl::string_view body) {
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>",
      XmlEscape(title), "</title>\n<style>", kStyle,
      "</style>\n</head>\n<body>\n", body, "<script>", kScript,
      "</script>\n</body>\n</html>\n");
}

std::string Figure(absl::string_view path, int64_t value,
                   absl::string_view text) {
  return absl::StrCat("<span data-field=\"", XmlEscape(path),
                      "\" data-value=\"", value, "\">", XmlEscape(text),
                      "</span>");
}

std::string Figure(absl::string_view path, double value,
                   absl::string_view text) {
  return absl::StrCat("<span data-field=\"", XmlEscape(path),
                      "\" data-value=\"", absl::StrFormat("%.17g", value),
                      "\">", XmlEscape(text), "</span>");
}

std::string Bytes(absl::string_view path, int64_t bytes) {
  return Figure(path, bytes, HumanBytesText(static_cast<double>(bytes)));
}

std::string Flops(absl::string_view path, double flops) {
  return Figure(path, flops, HumanFlopsText(flops));
}

std::string Seconds(absl::string_view path, double seconds) {
  return Figure(path, seconds, HumanSeconds(seconds));
}

std::string Table(absl::string_view id, const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows) {
  std::string out = absl::StrCat("<table class=\"sortable\" id=\"",
                                 XmlEscape(id), "\"><thead><tr>");
  for (const auto& h : header)
    absl::StrAppend(&out, "<th>", XmlEscape(h), "</th>");
  absl::StrAppend(&out, "</tr></thead><tbody>\n");
  for (const auto& row : rows) {
    absl::StrAppend(&out, "<tr>");
    for (const auto& cell : row) absl::StrAppend(&out, "<td>", cell, "</td>");
    absl::StrAppend(&out, "</tr>\n");
  }
  absl::StrAppend(&out, "</tbody></table>\n");
  return out;
}

std::string Section(absl::string_view id, absl::string_view title,
                    absl::string_view content) {
  return absl::StrCat("<section id=\"", XmlEscape(id), "\"><h2>",
                      XmlEscape(title), "</h2>\n", content, "</section>\n");
}

std::string MemoryChart(const std::vector<proto::IpuMemory>& memory,
                        const std::vector<std::string>& labels,
                        const proto::DeviceProfile& device) {
  const double capacity = static_cast<double>(device.tiles_per_ipu()) *
                          static_cast<double>(device.bytes_per_tile());
  BarChart chart;
  chart.id = "memory-chart";
  chart.format = HumanBytesText;
  for (size_t k = 0; k < std::size(kMemoryKinds); ++k)
    chart.series.push_back({kMemoryKinds[k], kMemoryColours[k]});
  double largest = 0;
  for (size_t i = 0; i < memory.size(); ++i) {
    const proto::IpuMemory& m = memory[i];
    BarRow& row = chart.rows.emplace_back();
    row.label = labels[i];
    row.values = {static_cast<double>(m.weight_bytes()),
                  static_cast<double>(m.code_bytes()),
                  static_cast<double>(m.exchange_bytes()),
                  static_cast<double>(m.activation_bytes()),
                  static_cast<double>(m.temporary_bytes())};
    row.note =
        absl::StrCat(HumanBytesText(static_cast<double>(m.total_bytes())), " (",
                     Percent(m.total_bytes() / capacity * 100), " of the IPU)");
    row.attributes = {{"data-total", absl::StrCat(m.total_bytes())}};
    largest = std::max(largest, static_cast<double>(m.total_bytes()));
  }
  const std::string capacity_text = absl::StrCat(
      "IPU capacity ", HumanBytesText(capacity), " (", device.tiles_per_ipu(),
      " tiles x ", HumanBytesText(static_cast<double>(device.bytes_per_tile())),
      ")");
  if (largest < capacity / 10) {
    chart.axis_max = largest * 1.1;
    chart.title = absl::StrCat("Memory per IPU by kind; ", capacity_text,
                               " is off the scale");
  } else {
    chart.title = "Memory per IPU by kind, against the IPU's capacity";
    chart.lines.push_back({capacity, capacity_text, "#c0392b", "6 3"});
  }
  return DrawBarChart(chart);
}

std::string TileChart(const std::vector<proto::IpuMemory>& memory,
                      const std::vector<std::string>& labels,
                      const proto::DeviceProfile& device) {
  const double tile = static_cast<double>(device.bytes_per_tile());
  BarChart chart;
  chart.id = "tile-chart";
  chart.title = "The fullest tile of each IPU, against one tile's memory";
  chart.format = HumanBytesText;
  chart.series.push_back({"fullest tile", "#6a51a3"});
  for (size_t i = 0; i < memory.size(); ++i) {
    const proto::IpuMemory& m = memory[i];
    BarRow& row = chart.rows.emplace_back();
    row.label = labels[i];
    row.values = {static_cast<double>(m.max_tile_bytes())};
    const double margin = tile - static_cast<double>(m.max_tile_bytes());
    // The tile's index on its IPU, as the text report's "IPU 5 tile 589";
    // the global one (Poplar's "Out of memory on tile 7949") beside it.
    const int64_t on_ipu = device.tiles_per_ipu() > 0
                               ? m.max_tile() % device.tiles_per_ipu()
                               : m.max_tile();
    row.note = absl::StrCat(
        "tile ", on_ipu,
        on_ipu == m.max_tile()
            ? ""
            : absl::StrCat(" (global tile ", m.max_tile(), ")"),
        ": ",
        margin >= 0 ? absl::StrCat("margin ", HumanBytesText(margin), " (",
                                   Percent(margin / tile * 100), ")")
                    : absl::StrCat("OVER by ", HumanBytesText(-margin)));
    row.attributes = {
        {"data-max-tile-bytes", absl::StrCat(m.max_tile_bytes())}};
  }
  chart.lines.push_back({tile,
                         absl::StrCat("tile memory ", HumanBytesText(tile)),
                         "#c0392b", "6 3"});
  return DrawBarChart(chart);
}

std::string MemorySection(absl::string_view title,
                          const std::vector<proto::IpuMemory>& memory,
                          const std::vector<std::string>& labels,
                          const proto::DeviceProfile& device,
                          absl::string_view extra) {
  return Section("memory", title,
                 absl::StrCat(MemoryChart(memory, labels, device),
                              TileChart(memory, labels, device), extra));
}

std::string OptionsSection(std::vector<std::vector<std::string>> rows,
                           const proto::DeviceProfile& device,
                           absl::string_view command_line) {
  rows.push_back({"device", XmlEscape(device.name())});
  rows.push_back({"tiles per IPU", absl::StrCat(device.tiles_per_ipu())});
  rows.push_back({"bytes per tile", absl::StrCat(device.bytes_per_tile())});
  rows.push_back(
      {"peak FP16", HumanFlopsText(device.peak_fp16_flops_per_s()) + "/s"});
  rows.push_back(
      {"peak FP32", HumanFlopsText(device.peak_fp32_flops_per_s()) + "/s"});
  rows.push_back(
      {"inter-IPU link", HumanBytesText(device.link_bytes_per_s()) + "/s"});
  if (!command_line.empty()) {
    rows.push_back({"command", absl::StrCat("<code>", XmlEscape(command_line),
                                            "</code>")});
  }
  return Section("options", "Options",
                 Table("options-table", {"option", "value"}, rows));
}

std::string WarningSection(
    const google::protobuf::RepeatedPtrField<std::string>& warnings) {
  std::string list = "<p>none</p>\n";
  if (!warnings.empty()) {
    list = "<ul class=\"warnings\">\n";
    for (const auto& w : warnings)
      absl::StrAppend(&list, "<li>", XmlEscape(w), "</li>\n");
    list += "</ul>\n";
  }
  return Section("warnings", "Warnings", list);
}

}  // namespace autoshard::html
