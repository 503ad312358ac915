// A self-contained HTML page (styles inline, charts as inline SVG, no script and nothing fetched
// when it is viewed), built section by section: what `hwt report` writes.
#pragma once

#include <string>
#include <vector>

namespace hwt {

// Text made safe inside HTML elements and attribute values.
std::string html_escape(const std::string& text);

class HtmlPage {
 public:
  explicit HtmlPage(std::string title);

  void heading(const std::string& text, int level = 2);
  void paragraph(const std::string& text, const std::string& css_class = {});
  // A table of texts; `headers` may be empty. Cells are escaped.
  void table(const std::vector<std::string>& headers,
             const std::vector<std::vector<std::string>>& rows);
  // A chart as rendered by report/svg_plot.h (trusted markup, inserted as it is).
  void chart(const std::string& svg);
  // A collapsed block whose body is the table (key, value) pairs.
  void details_table(const std::string& summary,
                     const std::vector<std::pair<std::string, std::string>>& pairs);
  // Opens and closes a <section> (a run, the comparison).
  void begin_section(const std::string& id);
  void end_section();

  std::string render() const;

 private:
  std::string title_, body_;
};

}  // namespace hwt
