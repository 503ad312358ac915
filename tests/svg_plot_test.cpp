#include <gtest/gtest.h>

#include <cmath>

#include "report/svg_plot.h"

namespace hwt {

TEST(SvgPlot, RendersSeriesLegendAndEscapesText) {
  PlotSpec p;
  p.title = "a < b & c";
  p.x_label = "hidden";
  p.y_label = "TFLOP/s";
  p.series.push_back({"measured", {1, 2, 3}, {10, 30, 20}, true, true, ""});
  p.series.push_back({"predicted", {1, 2, 3}, {12, 28, 21}, false, true, "#000000"});
  const std::string svg = render_svg(p);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("a &lt; b &amp; c"), std::string::npos);
  EXPECT_NE(svg.find(">measured<"), std::string::npos);
  EXPECT_NE(svg.find("#000000"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  // One polyline (the first series) and six markers.
  EXPECT_EQ(svg.find("<polyline"), svg.rfind("<polyline"));
  size_t circles = 0;
  for (size_t at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1))
    ++circles;
  EXPECT_EQ(circles, 6u);
}

size_t count(const std::string& svg, const std::string& what) {
  size_t n = 0;
  for (size_t at = svg.find(what); at != std::string::npos; at = svg.find(what, at + 1)) ++n;
  return n;
}

TEST(SvgPlot, BarsForEveryFiniteValueFromZeroEitherWay) {
  BarSpec b;
  b.title = "a < b";
  b.categories = {"x", "y"};
  b.series = {{"up", {1.0, 2.0}}, {"down", {-0.5, std::nan("")}}};
  const std::string svg = render_bars_svg(b);
  // Background, frame, two legend swatches and three bars (the NaN has none).
  EXPECT_EQ(count(svg, "<rect"), 7u);
  EXPECT_NE(svg.find("a &lt; b"), std::string::npos);
  EXPECT_NE(svg.find(">x<"), std::string::npos);
  EXPECT_NE(svg.find(">down<"), std::string::npos);
}

TEST(SvgPlot, TableCellsWithTheirTextAndShade) {
  TableSpec t;
  t.title = "ranks";
  t.columns = {"a", "b"};
  t.rows = {"run <1>", "run 2"};
  t.text = {{"#1", "#2"}, {"#2", "#1"}};
  t.shade = {{1.0, 0.0}, {0.0, 1.0}};
  const std::string svg = render_table_svg(t);
  EXPECT_EQ(count(svg, "<rect"), 5u);  // background and four cells
  EXPECT_NE(svg.find("run &lt;1&gt;"), std::string::npos);
  EXPECT_EQ(count(svg, "fill=\"rgb(31,78,153)\""), 2u);  // shade 1: the darkest blue
  EXPECT_EQ(count(svg, "fill=\"rgb(255,255,255)\""), 2u);
  EXPECT_EQ(count(svg, "fill=\"white\">#1<"), 2u);  // readable on the dark cells
}

TEST(SvgPlot, ZeroTickIsNotNegativeZero) {
  BarSpec b;
  b.categories = {"x"};
  b.series = {{"a", {0.8}}, {"b", {-0.09}}};  // scores: the lowest tick at or above -0.09 is -0.0
  const std::string svg = render_bars_svg(b);
  EXPECT_NE(svg.find(">0<"), std::string::npos);
  EXPECT_EQ(svg.find(">-0<"), std::string::npos);
}

TEST(SvgPlot, LogAxesSkipNonPositiveValues) {
  PlotSpec p;
  p.log_x = p.log_y = true;
  p.series.push_back({"s", {0, 1, 10, 100}, {5, 1, 10, 1000}, true, true, ""});
  const std::string svg = render_svg(p);
  size_t circles = 0;
  for (size_t at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1))
    ++circles;
  EXPECT_EQ(circles, 3u);
}

}  // namespace hwt
