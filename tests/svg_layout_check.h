// The layout check of a rendered chart (tests/svg_layout_test.cpp, and the charts commands
// write): every text inside the canvas, no two texts overlapping, no "-0" tick, enough ticks.
// Texts are measured with the charts' own width estimate (text_width), which is rounded up from
// Helvetica's and Arial's advance widths.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "headless_chromium.h"
#include "report/svg_plot.h"

namespace hwt::test {

struct TextBox {
  std::string text;
  double x0, y0, x1, y1;         // in the frame turned back by `angle` about the origin
  double angle;                  // degrees, as in rotate(angle cx cy)
  std::string anchor;            // text-anchor
  std::array<double, 4> canvas;  // the box in the canvas: x0, y0, x1, y1 (axis-aligned hull)
};

inline std::string unescape(std::string s) {
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&amp;", "&"}})
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
      s.replace(at, from.size(), to);
  return s;
}

inline double attribute(const std::string& attrs, const std::string& name, double otherwise) {
  const std::regex re("(^|\\s)" + name + "=\"([-0-9.e]+)\"");
  std::smatch m;
  return std::regex_search(attrs, m, re) ? std::stod(m[2]) : otherwise;
}

struct Svg {
  double width = 0, height = 0;
  std::vector<TextBox> texts;
};

inline Svg parse(const std::string& svg) {
  Svg out;
  std::smatch m;
  EXPECT_TRUE(std::regex_search(svg, m, std::regex("<svg[^>]*")));
  out.width = attribute(m.str(), "width", 0);
  out.height = attribute(m.str(), "height", 0);
  const std::regex text_re("<text([^>]*)>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text_re);
       it != std::sregex_iterator(); ++it) {
    const std::string attrs = (*it)[1], text = unescape((*it)[2]);
    if (text.empty()) continue;
    const double size = attribute(attrs, "font-size", 12), x = attribute(attrs, "x", 0),
                 y = attribute(attrs, "y", 0), w = text_width(text, size);
    std::smatch a;
    const std::string anchor =
        std::regex_search(attrs, a, std::regex("text-anchor=\"(\\w+)\"")) ? a[1].str() : "start";
    double angle = 0, cx = 0, cy = 0;
    if (std::regex_search(attrs, a, std::regex("rotate\\(([-0-9.]+) ([-0-9.]+) ([-0-9.]+)\\)"))) {
      angle = std::stod(a[1]);
      cx = std::stod(a[2]);
      cy = std::stod(a[3]);
    }
    const double left = anchor == "middle" ? x - w / 2 : anchor == "end" ? x - w : x;
    // Ascent and descent of the font: 0.75 and 0.21 of its size.
    const std::array<std::pair<double, double>, 4> corners = {std::pair{left, y - 0.75 * size},
                                                              {left + w, y - 0.75 * size},
                                                              {left, y + 0.21 * size},
                                                              {left + w, y + 0.21 * size}};
    const double t = angle * std::numbers::pi / 180, c = std::cos(t), s = std::sin(t);
    TextBox box{text, 1e300, 1e300, -1e300, -1e300, angle, anchor, {1e300, 1e300, -1e300, -1e300}};
    for (const auto& [px, py] : corners) {
      // Into the canvas: turned by `angle` about (cx, cy).
      const double qx = cx + c * (px - cx) - s * (py - cy), qy = cy + s * (px - cx) + c * (py - cy);
      box.canvas = {std::min(box.canvas[0], qx), std::min(box.canvas[1], qy),
                    std::max(box.canvas[2], qx), std::max(box.canvas[3], qy)};
      // Back by `angle` about the origin: texts turned alike are axis-aligned there.
      const double rx = c * qx + s * qy, ry = -s * qx + c * qy;
      box.x0 = std::min(box.x0, rx);
      box.y0 = std::min(box.y0, ry);
      box.x1 = std::max(box.x1, rx);
      box.y1 = std::max(box.y1, ry);
    }
    out.texts.push_back(box);
  }
  return out;
}

// Less than a pixel of contact is rounding, not an overlap.
constexpr double kSlack = 0.75;

inline bool overlap(const TextBox& a, const TextBox& b) {
  if (a.angle == b.angle)
    return std::min(a.x1, b.x1) - std::max(a.x0, b.x0) > kSlack &&
           std::min(a.y1, b.y1) - std::max(a.y0, b.y0) > kSlack;
  return std::min(a.canvas[2], b.canvas[2]) - std::max(a.canvas[0], b.canvas[0]) > kSlack &&
         std::min(a.canvas[3], b.canvas[3]) - std::max(a.canvas[1], b.canvas[1]) > kSlack;
}

// The texts that are numbers anchored as `anchor`: the x ("middle") or y ("end") tick labels.
inline size_t tick_labels(const Svg& s, const std::string& anchor) {
  return std::count_if(s.texts.begin(), s.texts.end(), [&](const TextBox& t) {
    return t.anchor == anchor && std::regex_match(t.text, std::regex("-?[0-9.]+(e[-+][0-9]+)?"));
  });
}

// `min_x_ticks` and `min_y_ticks`: the tick labels the chart must show at least.
inline void expect_clean_layout(const std::string& svg, const std::string& what,
                                size_t min_x_ticks = 2, size_t min_y_ticks = 2) {
  const Svg s = parse(svg);
  EXPECT_GE(tick_labels(s, "middle"), min_x_ticks) << what << ": too few x tick labels";
  EXPECT_GE(tick_labels(s, "end"), min_y_ticks) << what << ": too few y tick labels";
  ASSERT_GT(s.width, 0) << what;
  ASSERT_FALSE(s.texts.empty()) << what;
  for (const TextBox& t : s.texts) {
    EXPECT_GE(t.canvas[0], -kSlack) << what << ": '" << t.text << "' leaves the canvas on the left";
    EXPECT_GE(t.canvas[1], -kSlack) << what << ": '" << t.text << "' leaves it at the top";
    EXPECT_LE(t.canvas[2], s.width + kSlack) << what << ": '" << t.text << "' leaves it right";
    EXPECT_LE(t.canvas[3], s.height + kSlack) << what << ": '" << t.text << "' leaves it below";
    EXPECT_NE(t.text, "-0") << what;
  }
  for (size_t i = 0; i < s.texts.size(); ++i)
    for (size_t j = i + 1; j < s.texts.size(); ++j)
      EXPECT_FALSE(overlap(s.texts[i], s.texts[j]))
          << what << ": '" << s.texts[i].text << "' overlaps '" << s.texts[j].text << "'";
}

// The chart as a browser draws it: `svg` rendered by headless Chromium to a PNG of its own size,
// into docs/img/NAME.png with HWT_UPDATE_SCREENSHOTS=1 (the committed screenshots), else into
// `dir`. Skipped without chromium (scripts/setup.sh installs it); a PNG of a blank page would
// be under 2 kB.
inline void expect_screenshot(const std::string& svg, const std::string& name,
                              const std::filesystem::path& dir) {
  if (!have_chromium()) return;
  const std::filesystem::path file = dir / (name + ".svg");
  {
    std::ofstream out(file);
    out << svg;
  }
  const std::filesystem::path png = screenshot_path(name + ".png", dir);
  const Svg s = parse(svg);
  const std::string cmd =
      kHeadlessChromium + "--window-size=" + std::to_string(static_cast<int>(std::ceil(s.width))) +
      "," + std::to_string(static_cast<int>(std::ceil(s.height))) +
      " --screenshot=" + png.string() + " file://" + file.string() + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << name;
  EXPECT_GT(std::filesystem::file_size(png), 4'000u) << name << ": a blank page?";
}

}  // namespace hwt::test
