// Minimal SVG charts (line and scatter series on linear or log axes, grouped bars, shaded
// tables), enough for the reports' throughput, loss, Pareto and comparison plots without a
// plotting dependency. Layout is measured: margins grow to hold the tick labels and the legend,
// ticks thin out until their labels do not touch, and every text stays inside the canvas (which
// grows below the plot when a legend or slanted category names need the room).
#pragma once

#include <string>
#include <vector>

namespace hwt {

struct PlotSeries {
  std::string label;
  std::vector<double> x, y;
  bool line = true;     // connect points in order
  bool markers = true;  // draw a dot at each point
  std::string color;    // empty: next from the palette
};

struct PlotSpec {
  std::string title, x_label, y_label;
  bool log_x = false, log_y = false;
  int width = 720, height = 440;
  std::vector<PlotSeries> series;
};

// Renders the chart as a standalone SVG document.
std::string render_svg(const PlotSpec& spec);

// Grouped bars: one group per category, one bar per series in each group, from zero.
struct BarSpec {
  std::string title, y_label;
  std::vector<std::string> categories;
  struct Series {
    std::string label;
    std::vector<double> values;  // one per category
  };
  std::vector<Series> series;
  int width = 720, height = 440;
};

std::string render_bars_svg(const BarSpec& spec);

// A table of short texts, each cell shaded by a value in [0, 1] (0 white, 1 the darkest blue):
// a rank table, a heat map.
struct TableSpec {
  std::string title;
  std::vector<std::string> columns, rows;      // headers
  std::vector<std::vector<std::string>> text;  // [row][column]
  std::vector<std::vector<double>> shade;      // [row][column], in [0, 1]
};

std::string render_table_svg(const TableSpec& spec);

// The width in pixels that `text` takes in the charts' sans-serif font at `font_size`: a
// per-character estimate from Helvetica's and Arial's advance widths, rounded up so that real
// renderings are no wider. Layout uses it, and tests check overlaps with it.
double text_width(const std::string& text, double font_size);

}  // namespace hwt
