#include "writers/svg.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace autoshard {
namespace {

// A coordinate with at most two decimals ("12.5", "3").
std::string Num(double v) {
  if (!std::isfinite(v)) v = 0;
  std::string s = absl::StrFormat("%.2f", v);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string Attributes(const SvgAttributes& attributes) {
  std::string out;
  for (const auto& [name, value] : attributes) {
    absl::StrAppend(&out, " ", name, "=\"", XmlEscape(value), "\"");
  }
  return out;
}

std::string Format(std::string (*format)(double), double v) {
  return format != nullptr ? format(v) : Num(v);
}

// Legend entries in one line under the title, from x = kBarLabelWidth.
void DrawLegend(const std::vector<std::pair<std::string, std::string>>& entries,
                double y, SvgWriter* svg) {
  double x = kBarLabelWidth;
  for (const auto& [name, colour] : entries) {
    svg->Rect(x, y - 9, 10, 10, colour);
    svg->Text(x + 14, y, name, "start", 11);
    x += 24 + 6.5 * static_cast<double>(name.size());
  }
}

}  // namespace

std::string IpuColour(int ipu) {
  static constexpr const char* kPalette[] = {
      "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  return kPalette[(ipu % 10 + 10) % 10];
}

std::string XmlEscape(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

SvgWriter::SvgWriter(double width, double height, absl::string_view id,
                     absl::string_view label)
    : width_(width), height_(height), id_(id), label_(label) {}

void SvgWriter::Rect(double x, double y, double width, double height,
                     absl::string_view fill, absl::string_view tooltip,
                     const SvgAttributes& attributes) {
  absl::StrAppend(&body_, "<rect x=\"", Num(x), "\" y=\"", Num(y),
                  "\" width=\"", Num(std::max(width, 0.0)), "\" height=\"",
                  Num(std::max(height, 0.0)), "\" fill=\"", XmlEscape(fill),
                  "\"", Attributes(attributes));
  if (tooltip.empty()) {
    absl::StrAppend(&body_, "/>\n");
  } else {
    absl::StrAppend(&body_, "><title>", XmlEscape(tooltip),
                    "</title></rect>\n");
  }
}

void SvgWriter::Line(double x1, double y1, double x2, double y2,
                     absl::string_view stroke, double stroke_width,
                     absl::string_view dash, const SvgAttributes& attributes) {
  absl::StrAppend(&body_, "<line x1=\"", Num(x1), "\" y1=\"", Num(y1),
                  "\" x2=\"", Num(x2), "\" y2=\"", Num(y2), "\" stroke=\"",
                  XmlEscape(stroke), "\" stroke-width=\"", Num(stroke_width),
                  "\"");
  if (!dash.empty()) {
    absl::StrAppend(&body_, " stroke-dasharray=\"", XmlEscape(dash), "\"");
  }
  absl::StrAppend(&body_, Attributes(attributes), "/>\n");
}

void SvgWriter::Text(double x, double y, absl::string_view text,
                     absl::string_view anchor, double size,
                     const SvgAttributes& attributes) {
  absl::StrAppend(&body_, "<text x=\"", Num(x), "\" y=\"", Num(y),
                  "\" text-anchor=\"", XmlEscape(anchor), "\" font-size=\"",
                  Num(size), "\"", Attributes(attributes), ">", XmlEscape(text),
                  "</text>\n");
}

std::string SvgWriter::Finish() const {
  return absl::StrCat("<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"",
                      XmlEscape(id_), "\" role=\"img\" aria-label=\"",
                      XmlEscape(label_), "\" width=\"", Num(width_),
                      "\" height=\"", Num(height_), "\" viewBox=\"0 0 ",
                      Num(width_), " ", Num(height_),
                      "\" font-family=\"sans-serif\">\n", body_, "</svg>\n");
}

double BarAxisMax(const BarChart& chart) {
  double axis = chart.axis_max;
  for (const BarRow& row : chart.rows) {
    double sum = 0;
    for (double v : row.values) sum += std::max(v, 0.0);
    axis = std::max(axis, sum);
  }
  for (const ReferenceLine& line : chart.lines)
    axis = std::max(axis, line.value);
  return axis > 0 ? axis : 1;
}

std::string DrawBarChart(const BarChart& chart) {
  const double axis = BarAxisMax(chart);
  const double rows_height =
      kBarRowHeight * static_cast<double>(chart.rows.size());
  const double legend = chart.series.size() > 1 ? 18 : 0;
  // Reference lines' labels stack above the rows, one line each.
  const double labels =
      13 * static_cast<double>(std::max<size_t>(chart.lines.size(), 1) - 1);
  const double top = kBarTopMargin + legend + labels;
  SvgWriter svg(kBarLabelWidth + kBarPlotWidth + kBarNoteWidth,
                top + rows_height + 24, chart.id, chart.title);
  svg.Text(0, 14, chart.title, "start", 14, {{"font-weight", "bold"}});
  if (legend > 0) {
    std::vector<std::pair<std::string, std::string>> entries;
    for (const BarSeries& s : chart.series)
      entries.emplace_back(s.name, s.colour);
    DrawLegend(entries, 14 + legend, &svg);
  }
  auto x_of = [&](double v) {
    return kBarLabelWidth + v / axis * kBarPlotWidth;
  };
  for (size_t i = 0; i < chart.rows.size(); ++i) {
    const BarRow& row = chart.rows[i];
    const double y = top + kBarRowHeight * static_cast<double>(i);
    svg.Text(kBarLabelWidth - 6, y + 15, row.label, "end", 12, row.attributes);
    double sum = 0;
    for (size_t j = 0; j < row.values.size() && j < chart.series.size(); ++j) {
      const double v = std::max(row.values[j], 0.0);
      svg.Rect(
          x_of(sum), y + 3, v / axis * kBarPlotWidth, kBarRowHeight - 6,
          chart.series[j].colour,
          absl::StrCat(row.label, ": ", chart.series[j].name, " ",
                       Format(chart.format, v)),
          {{"data-row", absl::StrCat(i)}, {"data-series", absl::StrCat(j)}});
      sum += v;
    }
    if (!row.note.empty()) {
      svg.Text(kBarLabelWidth + kBarPlotWidth + 8, y + 15, row.note, "start",
               11);
    }
  }
  const double bottom = top + rows_height;
  svg.Line(kBarLabelWidth, bottom, kBarLabelWidth + kBarPlotWidth, bottom,
           "#555");
  svg.Text(kBarLabelWidth, bottom + 16, "0", "start", 11);
  svg.Text(kBarLabelWidth + kBarPlotWidth, bottom + 16,
           Format(chart.format, axis), "end", 11);
  for (size_t i = 0; i < chart.lines.size(); ++i) {
    const ReferenceLine& line = chart.lines[i];
    const double x = x_of(line.value);
    const double label_y = top - 8 - 13 * static_cast<double>(i);
    svg.Line(x, label_y + 4, x, bottom, line.colour, 2, line.dash,
             {{"data-line", line.label}});
    svg.Text(x, label_y, line.label,
             x > kBarLabelWidth + kBarPlotWidth / 2 ? "end" : "start", 11,
             {{"fill", line.colour}});
  }
  return svg.Finish();
}

std::string DrawTimeline(const Timeline& timeline) {
  const double width = kBarPlotWidth + kBarNoteWidth;
  const double end = timeline.end > 0 ? timeline.end : 1;
  const double top = kBarTopMargin + (timeline.legend.empty() ? 0 : 18);
  const double lanes_height =
      kBarRowHeight * static_cast<double>(timeline.lanes.size());
  SvgWriter svg(kBarLabelWidth + width, top + lanes_height + 24, timeline.id,
                timeline.title);
  svg.Text(0, 14, timeline.title, "start", 14, {{"font-weight", "bold"}});
  if (!timeline.legend.empty()) DrawLegend(timeline.legend, 32, &svg);
  auto x_of = [&](double t) { return kBarLabelWidth + t / end * width; };
  for (size_t i = 0; i < timeline.lanes.size(); ++i) {
    const double y = top + kBarRowHeight * static_cast<double>(i);
    svg.Rect(kBarLabelWidth, y + 1, width, kBarRowHeight - 2,
             i % 2 == 0 ? "#f4f4f4" : "#fafafa");
    svg.Text(kBarLabelWidth - 6, y + 15, timeline.lanes[i], "end", 12);
  }
  for (const TimelineBox& box : timeline.boxes) {
    const double y = top + kBarRowHeight * box.lane;
    const double x = x_of(box.start);
    const double w = (box.end - box.start) / end * width;
    svg.Rect(x, y + 3, w, kBarRowHeight - 6, box.colour, box.tooltip,
             box.attributes);
    if (!box.label.empty() &&
        w >= 7.0 * static_cast<double>(box.label.size())) {
      svg.Text(x + w / 2, y + 15, box.label, "middle", 10, {{"fill", "#fff"}});
    }
  }
  const double bottom = top + lanes_height;
  svg.Line(kBarLabelWidth, bottom, kBarLabelWidth + width, bottom, "#555");
  for (int t = 0; t <= 4; ++t) {
    const double time = end * t / 4;
    svg.Line(x_of(time), bottom, x_of(time), bottom + 4, "#555");
    svg.Text(x_of(time), bottom + 16, Format(timeline.format, time),
             t == 0   ? "start"
             : t == 4 ? "end"
                      : "middle",
             11);
  }
  return svg.Finish();
}

}  // namespace autoshard
