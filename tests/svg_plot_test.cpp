#include <gtest/gtest.h>

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
