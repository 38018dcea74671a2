// A small SVG writer and the three chart shapes the HTML report draws with it
// (writers/html_report.h): horizontal stacked bars against reference
// lines, horizontal bars, and a timeline of boxes in lanes. Output is one
// inline <svg> element as text, sized in CSS pixels, with every text and
// attribute value XML-escaped; no script, font or external reference.
//
// Geometry is plain linear scaling, so a test can check it by hand: a value v
// on an axis from 0 to `axis_max` drawn `width` pixels wide is v / axis_max x
// width pixels long.
#ifndef AUTOSHARD_WRITERS_SVG_H_
#define AUTOSHARD_WRITERS_SVG_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace autoshard {

// `text` with &, <, >, " and ' replaced by entities (for text and attribute
// values alike).
std::string XmlEscape(absl::string_view text);

// The colour of IPU `ipu` in every picture (the HTML page's charts and the
// graph): Tableau 10's palette, repeating after 10 IPUs.
std::string IpuColour(int ipu);

// Extra attributes of one shape: name, value (escaped when written).
using SvgAttributes = std::vector<std::pair<std::string, std::string>>;

// One <svg> element built shape by shape. Coordinates are pixels from the
// top left corner.
class SvgWriter {
 public:
  // `id` and `label` (the aria-label) identify the chart on the page.
  SvgWriter(double width, double height, absl::string_view id,
            absl::string_view label);

  // A rectangle filled with `fill` (a CSS colour); `tooltip` becomes its
  // <title> (shown on hover) when not empty.
  void Rect(double x, double y, double width, double height,
            absl::string_view fill, absl::string_view tooltip = "",
            const SvgAttributes& attributes = {});
  // A line; `dash` is a stroke-dasharray ("" for solid).
  void Line(double x1, double y1, double x2, double y2,
            absl::string_view stroke, double stroke_width = 1,
            absl::string_view dash = "", const SvgAttributes& attributes = {});
  // Text whose baseline starts (anchor "start"), centres ("middle") or ends
  // ("end") at (x, y); `size` in pixels.
  void Text(double x, double y, absl::string_view text,
            absl::string_view anchor = "start", double size = 12,
            const SvgAttributes& attributes = {});

  // The <svg> element.
  std::string Finish() const;

 private:
  double width_, height_;
  std::string id_, label_, body_;
};

// One series of a stacked bar chart (a memory kind, say).
struct BarSeries {
  std::string name;
  std::string colour;  // CSS colour
};

// A vertical line across every row at `value` (a capacity, a bound).
struct ReferenceLine {
  double value = 0;
  std::string label;  // drawn at the top of the line
  std::string colour;
  std::string dash;  // "" solid, "4 3" dashed
};

// One row of a bar chart: a label and, per series, a value (>= 0; the
// segments are drawn left to right in series order).
struct BarRow {
  std::string label;
  std::vector<double> values;
  std::string note;  // text after the bar (e.g. the total), may be empty
  // data-* attributes of the row's group, for tests and scripts.
  SvgAttributes attributes;
};

struct BarChart {
  std::string id, title;
  std::vector<BarSeries> series;  // one series: a plain bar chart
  std::vector<BarRow> rows;
  std::vector<ReferenceLine> lines;
  // The axis runs from 0 to max(axis_max, the longest bar, every line);
  // 0 leaves it to the data.
  double axis_max = 0;
  // Formats a value for tooltips and the axis's end label.
  std::string (*format)(double) = nullptr;
};

// Layout constants of DrawBarChart, so tests can compute positions.
inline constexpr double kBarLabelWidth = 150;  // row labels, left
inline constexpr double kBarPlotWidth = 520;   // the axis, 0 .. axis max
inline constexpr double kBarNoteWidth = 230;   // notes, right
inline constexpr double kBarRowHeight = 22;
inline constexpr double kBarTopMargin = 34;  // title and line labels

// The axis maximum DrawBarChart uses for `chart`.
double BarAxisMax(const BarChart& chart);

// Horizontal (stacked) bars, one row each, with a legend when there are
// several series. Segment j of row i is a <rect> with data-row="i" and
// data-series="j", x = kBarLabelWidth + (sum of earlier segments) / axis max
// x kBarPlotWidth, width = value / axis max x kBarPlotWidth.
std::string DrawBarChart(const BarChart& chart);

// A box in a timeline: lane (row) `lane`, from `start` to `end` (seconds).
struct TimelineBox {
  int lane = 0;
  double start = 0, end = 0;
  std::string colour, label, tooltip;
  SvgAttributes attributes;
};

struct Timeline {
  std::string id, title;
  std::vector<std::string> lanes;  // lane labels, top to bottom
  std::vector<TimelineBox> boxes;
  double end = 0;  // the time axis runs from 0 to end (> 0)
  std::string (*format)(double) = nullptr;  // the axis's tick labels
  std::vector<std::pair<std::string, std::string>> legend;  // name, colour
};

// Boxes in lanes over a time axis with 5 ticks; x = kBarLabelWidth + t / end
// x (kBarPlotWidth + kBarNoteWidth).
std::string DrawTimeline(const Timeline& timeline);

}  // namespace autoshard

#endif  // AUTOSHARD_WRITERS_SVG_H_
