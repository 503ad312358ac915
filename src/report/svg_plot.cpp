#include "report/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <utility>

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

// Advance widths in em of Helvetica/Arial glyph classes (public font metrics), rounded up.
double char_em(unsigned char c) {
  if (c >= 0x80) return 0.8;  // a byte of a multi-byte character: counted once, below
  switch (c) {
    case 'i':
    case 'j':
    case 'l':
    case '.':
    case ',':
    case ':':
    case ';':
    case '\'':
    case '|':
    case '!':
      return 0.28;
    case 'f':
    case 't':
    case 'r':
    case 'I':
    case '(':
    case ')':
    case '[':
    case ']':
    case '/':
    case '-':
    case ' ':
      return 0.34;
    case 'm':
    case 'w':
    case 'M':
    case 'W':
    case '%':
    case '@':
      return 0.95;
    default:
      return (c >= 'A' && c <= 'Z') || c == '&' ? 0.78 : 0.58;
  }
}

// An x or y axis of a chart: the value range and where its ticks go.
struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  double map(double v) const {  // to [0, 1]
    const double a = log ? std::log10(lo) : lo, b = log ? std::log10(hi) : hi;
    const double t = log ? std::log10(v) : v;
    return b > a ? (t - a) / (b - a) : 0.5;
  }
  // The densest round ticks inside [lo, hi] that `fits` accepts: powers of ten on a log axis
  // spanning two of them (every decade, else every second, …), else multiples of 1, 2 or 5 times
  // a power of ten. Empty when none fits.
  std::vector<double> ticks(const std::function<bool(const std::vector<double>&)>& fits) const {
    if (log) {
      const int first = static_cast<int>(std::ceil(std::log10(lo) - 1e-9));
      const int last = static_cast<int>(std::floor(std::log10(hi) + 1e-9));
      if (last - first < 2) {  // within about two decades: 1, 2 and 5 times each power of ten
        std::vector<double> t;
        for (int d = first - 1; d <= last; ++d)
          for (double m : {1.0, 2.0, 5.0}) {
            const double v = m * std::pow(10.0, d);
            if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) t.push_back(v);
          }
        if (t.size() >= 2 && fits(t)) return t;
      }
      if (last > first)
        for (int every = 1; every <= last - first; ++every) {
          std::vector<double> t;
          for (int d = first; d <= last; d += every) t.push_back(std::pow(10.0, d));
          if (fits(t)) return t;
        }
      if (last > first) return {};
    }
    const double span = hi - lo;
    for (double mag = std::pow(10, std::floor(std::log10(span / 20))); mag <= span * 10; mag *= 10)
      for (double m : {1.0, 2.0, 5.0}) {
        const double step = m * mag;
        std::vector<double> t;
        for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + 1e-9 * span; v += step)
          t.push_back(std::abs(v) < 1e-9 * step ? 0.0 : v);
        if (t.size() <= 12 && fits(t)) return t;
      }
    return {};
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
  if (hi == lo) hi = lo + (log ? lo : std::max(1.0, std::abs(lo)));
  // 5% of the range beyond the data on each side (a log axis: of its decades), so that no
  // point sits on the frame.
  if (log) {
    const double pad = std::pow(hi / lo, 0.05);
    lo /= pad;
    hi *= pad;
  } else {
    const double pad = 0.05 * (hi - lo);
    lo -= pad;
    hi += pad;
  }
  a.lo = lo;
  a.hi = hi;
  return a;
}

// An axis's ticks are all written alike: in exponent form when one of them needs it (a million
// or more, or below 0.001), else plainly.
bool exponent_form(const std::vector<double>& ticks) {
  for (double v : ticks)
    if (v != 0 && (std::abs(v) >= 1e6 || std::abs(v) < 1e-3)) return true;
  return false;
}

std::string tick_label(double v, bool exponent) {
  if (exponent && v != 0) return fmt::format("{:.1e}", v);
  return fmt::format("{:.6g}", v + 0.0);  // + 0.0: a tick at -0.0 reads "0", not "-0"
}

constexpr double kFont = 12, kTitleFont = 15, kLineHeight = 18, kGap = 8;

// `text` cut to at most `width` pixels by putting "…" in place of its middle: both ends stay,
// and names that share a long beginning stay apart ("run-2026-…-768-11").
std::string fit_text(const std::string& text, double width, double font_size = kFont) {
  if (text_width(text, font_size) <= width) return text;
  std::vector<std::string> chars;  // UTF-8 code points
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 || chars.empty()) chars.emplace_back();
    chars.back() += text[i];
  }
  size_t head = (chars.size() + 1) / 2, tail = chars.size() - head;
  while (head + tail > 0) {
    (head > tail ? head : tail) -= 1;
    std::string cut;
    for (size_t i = 0; i < head; ++i) cut += chars[i];
    cut += "…";
    for (size_t i = chars.size() - tail; i < chars.size(); ++i) cut += chars[i];
    if (text_width(cut, font_size) <= width) return cut;
  }
  return "…";
}

double widest(const std::vector<std::string>& texts) {
  double w = 0;
  for (const std::string& t : texts) w = std::max(w, text_width(t, kFont));
  return w;
}

// Y ticks at least a text line apart; their labels' width.
std::vector<double> y_ticks(const Axis& ay, double h) {
  return ay.ticks([&](const std::vector<double>& t) {
    for (size_t i = 1; i < t.size(); ++i)
      if (std::abs(ay.map(t[i]) - ay.map(t[i - 1])) * h < kLineHeight) return false;
    return true;
  });
}

double y_tick_width(const std::vector<double>& ticks) {
  std::vector<std::string> labels;
  for (double t : ticks) labels.push_back(tick_label(t, exponent_form(ticks)));
  return widest(labels);
}

// X ticks whose centred labels keep a gap between them and stay inside [0, canvas_w].
std::vector<double> x_ticks(const Axis& ax, double left, double w, double canvas_w) {
  return ax.ticks([&](const std::vector<double>& t) {
    double prev_right = 0;
    for (double v : t) {
      const double half = text_width(tick_label(v, exponent_form(t)), kFont) / 2;
      const double x = left + ax.map(v) * w;
      if (x - half < prev_right + kGap || x + half > canvas_w) return false;
      prev_right = x + half;
    }
    return true;
  });
}

// The widest text centred at `x` that stays `kGap` inside a canvas `canvas_w` wide.
double centred_room(double x, double canvas_w) {
  return 2 * (std::min(x, canvas_w - x) - kGap);
}

// The title is cut to the room it has around `title_x`.
std::string document_head(int width, int height, double title_x, const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n<text x=\"{}\" y=\"22\" font-size=\"15\" "
      "text-anchor=\"middle\">{}</text>\n",
      width, height, title_x, escape(fit_text(title, centred_room(title_x, width), kTitleFont)));
}

// Horizontal grid lines with their labels at the y ticks, and the plot frame.
std::string y_grid_and_frame(const Axis& ay, const std::vector<double>& ticks, double left,
                             double top, double w, double h) {
  std::string s;
  for (double t : ticks) {
    const double y = top + (1 - ay.map(t)) * h;
    s += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#eee\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        left, y, left + w, left - 6, y + 4, tick_label(t, exponent_form(ticks)));
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

// Where the legend goes: right of the plot when its widest label takes at most 30% of the
// canvas and its entries fit in `column_h`, else below the plot (the canvas grows), labels cut
// to the canvas width.
struct Legend {
  bool below = false;
  double width = 0;  // of the column on the right
  std::vector<std::string> labels;
  Legend(std::vector<std::string> names, double canvas_w, double column_h)
      : labels(std::move(names)) {
    const double entry = 18 + widest(labels);
    below = entry > 0.3 * canvas_w || kLineHeight * static_cast<double>(labels.size()) > column_h;
    if (below)
      for (std::string& l : labels) l = fit_text(l, canvas_w - 2 * kGap - 18);
    else
      width = entry + 2 * kGap;
  }
  // Right of the plot: the legend column, or room for half an x tick label ("-1.5e-05").
  double right_margin() const { return std::max(below ? 0.0 : width, 40.0); }
  double height_below() const {
    return below ? kLineHeight * static_cast<double>(labels.size()) + kGap : 0;
  }
  // Entry i's position: the right column from `top`, or the rows below from `bottom`.
  std::pair<double, double> at(size_t i, double plot_right, double top, double bottom) const {
    const double row = kLineHeight * static_cast<double>(i);
    return below ? std::pair{kGap, bottom + 14 + row} : std::pair{plot_right + 12, top + 10 + row};
  }
};

// Each of `series` bars in a group `group` wide (80% of it, the rest a gap between groups).
double bar_width(double group, size_t series) {
  return 0.8 * group / static_cast<double>(std::max<size_t>(1, series));
}

std::vector<std::string> labels_of(const std::vector<PlotSeries>& series) {
  std::vector<std::string> l;
  for (const PlotSeries& s : series) l.push_back(s.label);
  return l;
}

}  // namespace

std::string render_svg(const PlotSpec& p) {
  const double top = 40, bottom = 55, canvas_w = p.width;
  const double h = p.height - top - bottom;
  const Legend legend(labels_of(p.series), canvas_w, h);
  const Axis ax = fit(p.series, true, p.log_x), ay = fit(p.series, false, p.log_y);
  const std::vector<double> yt = y_ticks(ay, h);
  // The rotated y title (28 px), the tick labels and their gap to the frame.
  const double left = std::max(50.0, 28 + y_tick_width(yt) + 6 + kGap);
  const double right = legend.right_margin();
  const double w = canvas_w - left - right;
  const std::vector<double> xt = x_ticks(ax, left, w, canvas_w);
  const double height = p.height + legend.height_below();
  auto X = [&](double v) { return left + ax.map(v) * w; };
  auto Y = [&](double v) { return top + (1 - ay.map(v)) * h; };

  std::string s =
      document_head(p.width, static_cast<int>(std::ceil(height)), left + w / 2, p.title);
  for (double t : xt)
    s += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        X(t), top, top + h, top + h + 16, tick_label(t, exponent_form(xt)));
  s += y_grid_and_frame(ay, yt, left, top, w, h);
  s +=
      fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + w / 2,
                  p.height - 12, escape(fit_text(p.x_label, centred_room(left + w / 2, canvas_w))));
  s += y_label(fit_text(p.y_label, h), top + h / 2);

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
    const auto [lx, ly] = legend.at(i, left + w, top, p.height);
    s += legend_entry(lx, ly, color, legend.labels[i]);
  }
  return s + "</svg>\n";
}

std::string render_bars_svg(const BarSpec& p) {
  const double top = 40, canvas_w = p.width;
  std::vector<std::string> names;
  for (const BarSpec::Series& ser : p.series) names.push_back(ser.label);
  const double h = p.height - top - 55;
  const Legend legend(names, canvas_w, h);
  Axis ay;  // from zero (or below, for negative bars) to the tallest bar
  ay.hi = 0;
  for (const BarSpec::Series& ser : p.series)
    for (double v : ser.values)
      if (std::isfinite(v)) ay.lo = std::min(ay.lo, 1.05 * v), ay.hi = std::max(ay.hi, 1.05 * v);
  if (ay.hi == ay.lo) ay.hi = ay.lo + 1;
  const std::vector<double> yt = y_ticks(ay, h);
  // Category names wider than their group are slanted (40°) and cut to 160 px; the canvas grows
  // below the plot to hold them, and the left margin holds the first one's reach to the left.
  constexpr double kSlantDegrees = 40, kSlantMax = 160;
  const double slant_cos = std::cos(kSlantDegrees * std::numbers::pi / 180);
  const double slant_sin = std::sin(kSlantDegrees * std::numbers::pi / 180);
  const double categories = static_cast<double>(std::max<size_t>(1, p.categories.size()));
  const double right = legend.right_margin();
  double left = std::max(50.0, 28 + y_tick_width(yt) + 6 + kGap);
  const bool slant = widest(p.categories) + kGap > (canvas_w - left - right) / categories;
  const double slant_w = slant ? std::min(widest(p.categories), kSlantMax) : 0;
  left = std::max(left, slant_w * slant_cos + kGap);
  const double w = canvas_w - left - right, group = w / categories;
  const double slant_drop = slant_w * slant_sin;
  const double plot_bottom = top + h, legend_top = plot_bottom + 24 + slant_drop;
  const double height = legend_top + (legend.below ? legend.height_below() : 0) + 12;
  auto Y = [&](double v) { return top + (1 - ay.map(v)) * h; };
  std::string s =
      document_head(p.width, static_cast<int>(std::ceil(height)), left + w / 2, p.title);
  s += y_grid_and_frame(ay, yt, left, top, w, h);
  s += y_label(fit_text(p.y_label, h), top + h / 2);
  for (size_t c = 0; c < p.categories.size(); ++c) {
    const double x = left + group * (static_cast<double>(c) + 0.5);
    if (slant)
      s += fmt::format(
          "<text x=\"{0:.1f}\" y=\"{1}\" text-anchor=\"end\" transform=\"rotate(-{2} {0:.1f} "
          "{1})\">{3}</text>\n",
          x, plot_bottom + 14, kSlantDegrees, escape(fit_text(p.categories[c], kSlantMax)));
    else
      s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x,
                       plot_bottom + 16, escape(p.categories[c]));
  }
  for (size_t i = 0; i < p.series.size(); ++i) {
    const std::string color = kPalette[i % 8];
    for (size_t c = 0; c < p.categories.size() && c < p.series[i].values.size(); ++c) {
      const double v = p.series[i].values[c];
      if (!std::isfinite(v)) continue;
      const double x = left + group * static_cast<double>(c) + 0.1 * group +
                       bar_width(group, p.series.size()) * static_cast<double>(i);
      s += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"/>\n", x,
          Y(std::max(v, 0.0)), bar_width(group, p.series.size()), std::abs(Y(0) - Y(v)), color);
    }
    const auto [lx, ly] = legend.at(i, left + w, top, legend_top - 14);
    s += legend_entry(lx, ly, color, legend.labels[i]);
  }
  return s + "</svg>\n";
}

std::string render_table_svg(const TableSpec& p) {
  // Each column as wide as its header and texts (96 px at least), the row heads as their widest.
  std::vector<double> col_w(p.columns.size()), col_x(p.columns.size() + 1);
  for (size_t c = 0; c < p.columns.size(); ++c) {
    col_w[c] = std::max(96.0, text_width(p.columns[c], kFont) + 2 * kGap);
    for (const auto& row : p.text)
      if (c < row.size()) col_w[c] = std::max(col_w[c], text_width(row[c], kFont) + 2 * kGap);
  }
  const double row_head = std::max(80.0, widest(p.rows) + 2 * kGap), cell_h = 24, top = 60;
  col_x[0] = row_head;
  for (size_t c = 0; c < p.columns.size(); ++c) col_x[c + 1] = col_x[c] + col_w[c];
  const double width = std::max(col_x.back() + 20, text_width(p.title, kTitleFont) + 2 * kGap);
  const double height = top + cell_h * static_cast<double>(p.rows.size()) + 20;
  std::string s = document_head(static_cast<int>(std::ceil(width)), static_cast<int>(height),
                                width / 2, p.title);
  for (size_t c = 0; c < p.columns.size(); ++c)
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
                     col_x[c] + col_w[c] / 2, top - 8, escape(p.columns[c]));
  for (size_t r = 0; r < p.rows.size(); ++r) {
    const double y = top + cell_h * static_cast<double>(r);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
                     row_head - kGap, y + 16, escape(p.rows[r]));
    for (size_t c = 0; c < p.columns.size(); ++c) {
      const double v =
          r < p.shade.size() && c < p.shade[r].size() ? std::clamp(p.shade[r][c], 0.0, 1.0) : 0.0;
      // White to #1f4e99 (the palette's blue, darker), text white on the dark half.
      const auto mix = [v](int to) { return static_cast<int>(std::lround(255 + (to - 255) * v)); };
      s += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
          "fill=\"rgb({},{},{})\" stroke=\"#ccc\"/>\n",
          col_x[c], y, col_w[c], cell_h, mix(0x1f), mix(0x4e), mix(0x99));
      const std::string text =
          r < p.text.size() && c < p.text[r].size() ? p.text[r][c] : std::string();
      s += fmt::format(
          "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"{}\">{}</text>\n",
          col_x[c] + col_w[c] / 2, y + 16, v > 0.5 ? "white" : "black", escape(text));
    }
  }
  return s + "</svg>\n";
}

double text_width(const std::string& text, double font_size) {
  double em = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0) == 0x80) continue;  // continuation bytes: the character counted at its lead
    em += char_em(c);
  }
  return em * font_size;
}

}  // namespace hwt
