#include "report/html_page.h"

#include <fmt/format.h>

namespace hwt {
namespace {

// Readable on screen and in print: one column of text, charts at their own width, tables with
// right-aligned numbers.
constexpr const char* kStyle = R"(body{font-family:sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#222}h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:3px 8px;
text-align:left}th{background:#f4f4f4}td:not(:first-child){text-align:right}
details{margin:.5em 0}summary{cursor:pointer}.chart{margin:1em 0}.note{color:#555}
.chart svg{max-width:100%;height:auto})";

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
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

HtmlPage::HtmlPage(std::string title) : title_(std::move(title)) {}

void HtmlPage::heading(const std::string& text, int level) {
  body_ += fmt::format("<h{0}>{1}</h{0}>\n", level, html_escape(text));
}

void HtmlPage::paragraph(const std::string& text, const std::string& css_class) {
  body_ += css_class.empty()
               ? fmt::format("<p>{}</p>\n", html_escape(text))
               : fmt::format("<p class=\"{}\">{}</p>\n", html_escape(css_class), html_escape(text));
}

void HtmlPage::table(const std::vector<std::string>& headers,
                     const std::vector<std::vector<std::string>>& rows) {
  body_ += "<table>\n";
  if (!headers.empty()) {
    body_ += "<tr>";
    for (const std::string& h : headers) body_ += "<th>" + html_escape(h) + "</th>";
    body_ += "</tr>\n";
  }
  for (const auto& row : rows) {
    body_ += "<tr>";
    for (const std::string& cell : row) body_ += "<td>" + html_escape(cell) + "</td>";
    body_ += "</tr>\n";
  }
  body_ += "</table>\n";
}

void HtmlPage::chart(const std::string& svg) {
  // The XML declaration-free SVG documents of svg_plot.h embed as they are.
  body_ += "<div class=\"chart\">\n" + svg + "</div>\n";
}

void HtmlPage::details_table(const std::string& summary,
                             const std::vector<std::pair<std::string, std::string>>& pairs) {
  body_ += "<details><summary>" + html_escape(summary) + "</summary>\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& [k, v] : pairs) rows.push_back({k, v});
  table({}, rows);
  body_ += "</details>\n";
}

void HtmlPage::begin_section(const std::string& id) {
  body_ += "<section id=\"" + html_escape(id) + "\">\n";
}

void HtmlPage::end_section() {
  body_ += "</section>\n";
}

std::string HtmlPage::render() const {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n"
      "<style>{}</style>\n</head>\n<body>\n<h1>{}</h1>\n{}</body>\n</html>\n",
      html_escape(title_), kStyle, html_escape(title_), body_);
}

}  // namespace hwt
