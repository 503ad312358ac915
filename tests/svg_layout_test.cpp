// The charts' layout (issue 35): every text of every chart kind stays inside the canvas and no
// two texts overlap, for data made to crowd them: long legend labels, many series, ranges tiny,
// huge, negative and many decades wide, long and many category names, wide table headers.
// The check itself is tests/svg_layout_check.h. HWT_UPDATE_SCREENSHOTS=1 writes each kind's
// screenshot to docs/img/chart_*.png.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cli_util.h"
#include "report/svg_plot.h"
#include "svg_layout_check.h"
#include "train/run_files.h"

namespace hwt {
namespace {

using test::expect_clean_layout;
using test::parse;

PlotSeries series(const std::string& label, std::vector<double> x, std::vector<double> y) {
  return {label, std::move(x), std::move(y), true, true, ""};
}

std::vector<double> range(double from, double to, int n, bool geometric = false) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / (n - 1);
    v.push_back(geometric ? from * std::pow(to / from, t) : from + t * (to - from));
  }
  return v;
}

TEST(SvgLayout, LineChartsKeepTextsApartAndInside) {
  PlotSpec p;
  p.title = "codesign: accuracy vs latency";
  p.x_label = "training-step latency per sequence (s)";
  p.y_label = "validation accuracy (%)";
  p.log_x = true;
  p.series = {series("Pareto front", range(2e-5, 3e-5, 6, true), range(80, 91, 6)),
              series("chosen: h256-l4-a4-f1024 on AccelTran-Server", {2.2e-5}, {88}),
              series("baseline: h768-l12-a12-f3072 on AccelTran-Server", {2.9e-5}, {90})};
  expect_clean_layout(render_svg(p), "narrow log range with long legend labels");
  test::TempDir shots("svg_layout");
  test::expect_screenshot(render_svg(p), "chart_line_legend", shots.path());

  p.series = {series("wide", range(1e-6, 1e7, 40, true), range(-0.002, 0.004, 40))};
  expect_clean_layout(render_svg(p), "thirteen decades, tiny negative values");

  p.log_x = false;
  p.log_y = true;
  p.series = {series("huge", range(1e8, 9e9, 30), range(1, 1e12, 30, true))};
  expect_clean_layout(render_svg(p), "huge linear x, log y");

  p.log_y = false;
  p.series.clear();
  for (int i = 0; i < 30; ++i)
    p.series.push_back(series("series " + std::to_string(i), range(0, 1, 5), range(i, i + 1, 5)));
  expect_clean_layout(render_svg(p), "thirty series");
  test::expect_screenshot(render_svg(p), "chart_line_thirty_series", shots.path());

  p.series = {series("one point", {3}, {-7})};
  p.x_label = std::string(200, 'x');
  p.title = std::string(120, 'T');
  expect_clean_layout(render_svg(p), "one point, overlong titles", 1, 1);
}

TEST(SvgLayout, LongLegendLabelsMoveBelowThePlotUncut) {
  PlotSpec p;
  const std::string label = "baseline: h768-l12-a12-f3072 on AccelTran-Server";
  p.series = {series(label, {1, 2}, {1, 2})};
  const std::string svg = render_svg(p);
  EXPECT_NE(svg.find(">" + label + "<"), std::string::npos) << "cut although it fits below";
  EXPECT_GT(parse(svg).height, p.height) << "the canvas grows to hold the legend below";
}

TEST(SvgLayout, BarChartsSlantLongCategoryNames) {
  BarSpec b;
  b.title = "step time by run";
  b.y_label = "seconds per step (s)";
  for (int i = 0; i < 12; ++i)
    b.categories.push_back("run-2026-12-05-hidden-768-" + std::to_string(i));
  b.series = {{"measured", range(0.001, 0.02, 12)}, {"estimated", range(0.002, 0.018, 12)}};
  const std::string svg = render_bars_svg(b);
  EXPECT_NE(svg.find("rotate(-40"), std::string::npos);
  expect_clean_layout(svg, "twelve long categories", 0);
  // Cut in the middle, the names keep the ends that tell them apart.
  std::set<std::string> shown;
  for (const test::TextBox& t : parse(svg).texts)
    if (t.angle == -40) shown.insert(t.text);
  EXPECT_EQ(shown.size(), 12u);
  EXPECT_TRUE(shown.count("run-2026-12-…idden-768-11")) << *shown.begin();
  test::TempDir shots("svg_layout");
  test::expect_screenshot(svg, "chart_bars", shots.path());

  b.categories = {"a", "b"};
  b.series = {{"negative and positive", {-3e6, 5e6}}};
  expect_clean_layout(render_bars_svg(b), "short categories, large values", 0);
}

TEST(SvgLayout, TablesWidenForTheirTexts) {
  TableSpec t;
  t.title = "ranks";
  t.columns = {"time to accuracy (h)", "cost (USD)", "energy per sample (J)"};
  t.rows = {"a run with a very long name indeed", "short"};
  t.text = {{"#1 (1.25 h)", "#2", "#1 (0.113 J)"}, {"#2 (2.5 h)", "#1", "#2 (0.2 J)"}};
  t.shade = {{1, 0, 1}, {0, 1, 0}};
  expect_clean_layout(render_table_svg(t), "wide headers and row names", 0, 0);
  test::TempDir shots("svg_layout");
  test::expect_screenshot(render_table_svg(t), "chart_table", shots.path());
}

TEST(SvgLayout, RunPlotsOfATrainingRun) {
  test::TempDir dir("svg_layout");
  RunCurves c;
  c.train_step = range(10, 100000, 200);
  c.train_loss = range(11.2, 2.9, 200);
  c.valid_step = range(1000, 100000, 20);
  c.valid_loss = range(9, 3.1, 20);
  c.gpu_step = c.train_step;
  c.gpu_power_w = range(300, 650, 200);
  c.gpu_util_pct = range(40, 99, 200);
  write_run_plots(dir.path().string(), c);
  expect_clean_layout(test::slurp(dir.path() / "loss.svg"), "loss.svg");
  expect_clean_layout(test::slurp(dir.path() / "power.svg"), "power.svg");
  test::expect_screenshot(test::slurp(dir.path() / "loss.svg"), "chart_loss", dir.path());
  test::expect_screenshot(test::slurp(dir.path() / "power.svg"), "chart_power", dir.path());
}

}  // namespace
}  // namespace hwt
