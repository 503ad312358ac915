#include "report/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace hwt {
namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                    "#9467bd", "#8c564b", "#e377c2", "#17becf"};

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '&':
        o += "&amp;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  double map(double v) const {  // to [0, 1]
    const double a = log ? std::log10(lo) : lo, b = log ? std::log10(hi) : hi;
    const double t = log ? std::log10(v) : v;
    return b > a ? (t - a) / (b - a) : 0.5;
  }
  // About five round tick values inside [lo, hi].
  std::vector<double> ticks() const {
    std::vector<double> t;
    if (log) {
      for (double d = std::pow(10, std::floor(std::log10(lo))); d <= hi * 1.0001; d *= 10)
        if (d >= lo * 0.9999) t.push_back(d);
      if (t.size() >= 2) return t;
      t.clear();
    }
    const double span = hi - lo;
    const double raw = span / 5, mag = std::pow(10, std::floor(std::log10(raw)));
    const double step = raw / mag < 2 ? 2 * mag : raw / mag < 5 ? 5 * mag : 10 * mag;
    for (double v = std::ceil(lo / step) * step; v <= hi + 1e-9 * span; v += step) t.push_back(v);
    return t;
  }
};

Axis fit(const std::vector<PlotSeries>& series, bool x, bool log) {
  Axis a;
  a.log = log;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& s : series)
    for (double v : x ? s.x : s.y)
      if (std::isfinite(v) && (!log || v > 0)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!std::isfinite(lo)) lo = log ? 1 : 0, hi = log ? 10 : 1;
  if (hi == lo) hi = lo + (log ? lo : 1.0);
  if (!log) {
    const double pad = 0.05 * (hi - lo);
    lo -= pad;
    hi += pad;
  }
  a.lo = lo;
  a.hi = hi;
  return a;
}

std::string tick_label(double v) {
  if (v != 0 && (std::abs(v) >= 1e5 || std::abs(v) < 1e-3)) return fmt::format("{:.1e}", v);
  return fmt::format("{:.6g}", v + 0.0);  // + 0.0: a tick at -0.0 reads "0", not "-0"
}

std::string document_head(int width, int height, double title_x, const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n<text x=\"{}\" y=\"22\" font-size=\"15\" "
      "text-anchor=\"middle\">{}</text>\n",
      width, height, title_x, escape(title));
}

// Horizontal grid lines with their labels at the y ticks, and the plot frame.
std::string y_grid_and_frame(const Axis& ay, double left, double top, double w, double h) {
  std::string s;
  for (double t : ay.ticks()) {
    const double y = top + (1 - ay.map(t)) * h;
    s += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#eee\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        left, y, left + w, left - 6, y + 4, tick_label(t));
  }
  return s + fmt::format(
                 "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
                 "stroke=\"#444\"/>\n",
                 left, top, w, h);
}

std::string y_label(const std::string& label, double y) {
  return fmt::format(
      "<text x=\"16\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 16 "
      "{0})\">{1}</text>\n",
      y, escape(label));
}

std::string legend_entry(double x, double y, const std::string& color, const std::string& label) {
  return fmt::format(
      "<rect x=\"{}\" y=\"{:.1f}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" "
      "y=\"{:.1f}\">{}</text>\n",
      x, y - 10, color, x + 18, y, escape(label));
}

}  // namespace

std::string render_svg(const PlotSpec& p) {
  const double left = 70, right = 170, top = 40, bottom = 55;
  const double w = p.width - left - right, h = p.height - top - bottom;
  const Axis ax = fit(p.series, true, p.log_x), ay = fit(p.series, false, p.log_y);
  auto X = [&](double v) { return left + ax.map(v) * w; };
  auto Y = [&](double v) { return top + (1 - ay.map(v)) * h; };

  std::string s = document_head(p.width, p.height, left + w / 2, p.title);
  for (double t : ax.ticks())
    s += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        X(t), top, top + h, top + h + 16, tick_label(t));
  s += y_grid_and_frame(ay, left, top, w, h);
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + w / 2,
                   p.height - 12, escape(p.x_label));
  s += y_label(p.y_label, top + h / 2);

  size_t next_color = 0;
  for (size_t i = 0; i < p.series.size(); ++i) {
    const PlotSeries& ser = p.series[i];
    const std::string color = ser.color.empty() ? kPalette[next_color++ % 8] : ser.color;
    std::string pts;
    for (size_t k = 0; k < ser.x.size() && k < ser.y.size(); ++k) {
      if (!std::isfinite(ser.x[k]) || !std::isfinite(ser.y[k])) continue;
      if ((p.log_x && ser.x[k] <= 0) || (p.log_y && ser.y[k] <= 0)) continue;
      pts += fmt::format("{:.1f},{:.1f} ", X(ser.x[k]), Y(ser.y[k]));
      if (ser.markers)
        s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"/>\n",
                         X(ser.x[k]), Y(ser.y[k]), color);
    }
    if (ser.line && !pts.empty())
      s += fmt::format(
          "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"/>\n", pts,
          color);
    s += legend_entry(left + w + 12, top + 10 + 18 * static_cast<double>(i), color, ser.label);
  }
  return s + "</svg>\n";
}

std::string render_bars_svg(const BarSpec& p) {
  const double left = 70, right = 170, top = 40, bottom = 55;
  const double w = p.width - left - right, h = p.height - top - bottom;
  Axis ay;  // from zero (or below, for negative bars) to the tallest bar
  ay.hi = 0;
  for (const BarSpec::Series& ser : p.series)
    for (double v : ser.values)
      if (std::isfinite(v)) ay.lo = std::min(ay.lo, 1.05 * v), ay.hi = std::max(ay.hi, 1.05 * v);
  if (ay.hi == ay.lo) ay.hi = ay.lo + 1;
  auto Y = [&](double v) { return top + (1 - ay.map(v)) * h; };
  std::string s = document_head(p.width, p.height, left + w / 2, p.title);
  s += y_grid_and_frame(ay, left, top, w, h);
  s += y_label(p.y_label, top + h / 2);
  const double group = w / static_cast<double>(std::max<size_t>(1, p.categories.size()));
  const double bar = 0.8 * group / static_cast<double>(std::max<size_t>(1, p.series.size()));
  for (size_t c = 0; c < p.categories.size(); ++c)
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     left + group * (static_cast<double>(c) + 0.5), top + h + 16,
                     escape(p.categories[c]));
  for (size_t i = 0; i < p.series.size(); ++i) {
    const std::string color = kPalette[i % 8];
    for (size_t c = 0; c < p.categories.size() && c < p.series[i].values.size(); ++c) {
      const double v = p.series[i].values[c];
      if (!std::isfinite(v)) continue;
      const double x =
          left + group * static_cast<double>(c) + 0.1 * group + bar * static_cast<double>(i);
      s += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"/>\n", x,
          Y(std::max(v, 0.0)), bar, std::abs(Y(0) - Y(v)), color);
    }
    s += legend_entry(left + w + 12, top + 10 + 18 * static_cast<double>(i), color,
                      p.series[i].label);
  }
  return s + "</svg>\n";
}

std::string render_table_svg(const TableSpec& p) {
  const double row_head = 160, cell_w = 96, cell_h = 24, top = 60;
  const double width = row_head + cell_w * static_cast<double>(p.columns.size()) + 20;
  const double height = top + cell_h * static_cast<double>(p.rows.size()) + 20;
  std::string s =
      document_head(static_cast<int>(width), static_cast<int>(height), width / 2, p.title);
  for (size_t c = 0; c < p.columns.size(); ++c)
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
                     row_head + cell_w * (static_cast<double>(c) + 0.5), top - 8,
                     escape(p.columns[c]));
  for (size_t r = 0; r < p.rows.size(); ++r) {
    const double y = top + cell_h * static_cast<double>(r);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
                     row_head - 8, y + 16, escape(p.rows[r]));
    for (size_t c = 0; c < p.columns.size(); ++c) {
      const double v =
          r < p.shade.size() && c < p.shade[r].size() ? std::clamp(p.shade[r][c], 0.0, 1.0) : 0.0;
      // White to #1f4e99 (the palette's blue, darker), text white on the dark half.
      const auto mix = [v](int to) { return static_cast<int>(std::lround(255 + (to - 255) * v)); };
      const double x = row_head + cell_w * static_cast<double>(c);
      s += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
          "fill=\"rgb({},{},{})\" stroke=\"#ccc\"/>\n",
          x, y, cell_w, cell_h, mix(0x1f), mix(0x4e), mix(0x99));
      const std::string text =
          r < p.text.size() && c < p.text[r].size() ? p.text[r][c] : std::string();
      s += fmt::format(
          "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"{}\">{}</text>\n",
          x + cell_w / 2, y + 16, v > 0.5 ? "white" : "black", escape(text));
    }
  }
  return s + "</svg>\n";
}

}  // namespace hwt
