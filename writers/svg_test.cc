#include "writers/svg.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace autoshard {
namespace {

using ::testing::HasSubstr;

TEST(XmlEscapeTest, EscapesTheFiveCharacters) {
  EXPECT_EQ(XmlEscape("<a & 'b'>\""), "&lt;a &amp; &#39;b&#39;&gt;&quot;");
}

TEST(SvgWriterTest, WritesShapesWithEscapedValues) {
  SvgWriter svg(100, 50, "c", "a <chart>");
  svg.Rect(1.5, 2, 10, 4.25, "#fff", "x < y", {{"data-row", "0"}});
  svg.Text(3, 4, "R&D");
  const std::string out = svg.Finish();
  EXPECT_THAT(out, HasSubstr("id=\"c\" role=\"img\" aria-label=\"a "
                             "&lt;chart&gt;\" width=\"100\" height=\"50\""));
  EXPECT_THAT(out, HasSubstr("<rect x=\"1.5\" y=\"2\" width=\"10\" "
                             "height=\"4.25\" fill=\"#fff\" data-row=\"0\">"
                             "<title>x &lt; y</title></rect>"));
  EXPECT_THAT(out, HasSubstr(">R&amp;D</text>"));
}

TEST(DrawBarChartTest, SegmentsStackInProportionToTheAxis) {
  BarChart chart;
  chart.id = "m";
  chart.series = {{"a", "#111111"}, {"b", "#222222"}};
  chart.rows = {{"IPU 0", {30, 10}, "", {}}, {"IPU 1", {20, 0}, "", {}}};
  chart.lines = {{50, "cap", "#f00", ""}};
  // The axis is the line's 50 (longest bar 40). Row 0: a is 30 / 50 x 520 =
  // 312 px from x = 150; b starts at 150 + 312 = 462, 10 / 50 x 520 = 104 px.
  EXPECT_EQ(BarAxisMax(chart), 50);
  const std::string out = DrawBarChart(chart);
  EXPECT_THAT(out, HasSubstr("x=\"150\" y=\"55\" width=\"312\""));
  EXPECT_THAT(out, HasSubstr("x=\"462\" y=\"55\" width=\"104\""));
  // The line at 50: x = 150 + 520 = 670.
  EXPECT_THAT(out, HasSubstr("<line x1=\"670\""));
  // Without the line the longest bar (40) ends the axis: 30 -> 390 px.
  chart.lines.clear();
  EXPECT_THAT(DrawBarChart(chart), HasSubstr("width=\"390\""));
}

TEST(DrawTimelineTest, BoxesSitOnTheTimeAxis) {
  Timeline t;
  t.id = "t";
  t.lanes = {"IPU 0", "IPU 1"};
  t.end = 4;
  t.boxes.push_back({1, 1, 2, "#333", "m0", "", {}});
  // x = 150 + 1 / 4 x 750 = 337.5, width 1 / 4 x 750 = 187.5; lane 1 is
  // 22 px below lane 0 (y = 34 + 22 + 3 = 59).
  EXPECT_THAT(DrawTimeline(t),
              HasSubstr("<rect x=\"337.5\" y=\"59\" width=\"187.5\""));
}

TEST(IpuColourTest, RepeatsAfterTen) {
  EXPECT_EQ(IpuColour(0), "#4e79a7");
  EXPECT_EQ(IpuColour(10), IpuColour(0));
  EXPECT_NE(IpuColour(1), IpuColour(0));
}

}  // namespace
}  // namespace autoshard
