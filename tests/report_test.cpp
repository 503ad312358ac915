// hwt report (issue 35): one self-contained HTML page about finished runs. Rendered in headless
// Chromium where it is installed (scripts/setup.sh installs it): the page loads without script
// errors and every chart has a non-empty box. HWT_UPDATE_SCREENSHOTS=1 also writes the
// screenshot to docs/img/report.png.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <regex>

#include "cli_util.h"
#include "headless_chromium.h"

namespace hwt {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

class Report : public ::testing::Test {
 protected:
  TempDir dir{"report"};
  void SetUp() override {
    dir.write("train.tsv", test::tiny_sentiment_tsv(120, 7));
    for (const char* optimizer : {"adamw", "adan"}) {
      const auto r = test::run_hwt("train --out " + dir / optimizer + " --set data.path=" +
                                       (dir / "train.tsv") + " " + test::kTinyTsvSettings +
                                       " --set train.max_steps=12 --set train.log_every=2 "
                                       "--set train.eval_every=4 --set optim.name=" +
                                       optimizer,
                                   dir);
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
};

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST_F(Report, OnePageWithCurvesFiguresAndTheComparison) {
  const auto r = test::run_hwt(
      "report " + dir / "adamw" + " " + dir / "adan" + " --out " + dir / "report.html", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = test::slurp(dir / "report.html");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<section id=\"run-adamw\">"), std::string::npos);
  EXPECT_NE(html.find("<section id=\"run-adan\">"), std::string::npos);
  EXPECT_NE(html.find("<section id=\"comparison\">"), std::string::npos);
  EXPECT_NE(html.find(">valid accuracy<"), std::string::npos);
  EXPECT_NE(html.find(">accuracy "), std::string::npos);  // the comparison's quality column
  // Loss, throughput and learning rate for both runs, and the rank table.
  EXPECT_EQ(count(html, "<svg"), 4u);
  // Self-contained: nothing fetched when it is viewed, no script.
  EXPECT_EQ(count(html, "http"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);

  // One run: the page goes into its folder by default, without a comparison.
  const auto one = test::run_hwt("report " + dir / "adamw", dir);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(test::slurp(dir.path() / "adamw" / "report.html").find("id=\"comparison\""),
            std::string::npos);

  const auto bad = test::run_hwt("report " + dir / "nothing", dir);
  test::expect_one_line_error(bad, 2, "no run.json");
}

// A metrics.jsonl someone edited or cut short: lines with fields of the wrong type are left out
// of the curves, never an internal error.
TEST_F(Report, MetricsLinesOfTheWrongShapeAreLeftOut) {
  const std::string kept = test::slurp(dir.path() / "adamw" / "metrics.jsonl");
  dir.write("adamw/metrics.jsonl",
            kept + R"({"step": "3", "loss": 1.0})" + "\n" + R"({"step": 3, "loss": "high"})" +
                "\n" + R"({"step": 4, "loss": 0.5, "split": 7, "lr": "x"})" + "\n" +
                R"({"step": 5, "loss": 0.4, "gpu_power_w": 300, "gpu_util_pct": "busy"})" + "\n" +
                R"([1, 2])" + "\n" + R"({"step": 6, "lo)");
  const auto r = test::run_hwt("report " + dir / "adamw" + " --out " + dir / "r.html", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(test::slurp(dir / "r.html").find("<svg"), std::string::npos);
}

// The page as a browser shows it: a script added to a copy (the report has none) records script
// errors and each chart's box into the page, which Chromium dumps after running it.
TEST_F(Report, ChromiumRendersEveryChartWithoutErrors) {
  if (!test::have_chromium()) GTEST_SKIP() << "skipped: no chromium (scripts/setup.sh installs it)";
  ASSERT_EQ(
      test::run_hwt(
          "report " + dir / "adamw" + " " + dir / "adan" + " --out " + dir / "report.html", dir)
          .exit_code,
      0);
  std::string html = test::slurp(dir / "report.html");
  const std::string probe =
      "<script>let errors=0;window.addEventListener('error',()=>{errors++});"
      "window.addEventListener('load',()=>{const boxes=[...document.querySelectorAll('svg')]"
      ".map(s=>s.getBoundingClientRect());const empty=boxes.filter(b=>!(b.width>0&&b.height>0))"
      ".length;document.body.insertAdjacentHTML('beforeend','<pre id=\"probe\">charts='+"
      "boxes.length+' empty='+empty+' errors='+errors+'</pre>')});</script>";
  html.insert(html.find("</body>"), probe);
  dir.write("probed.html", html);
  const std::string& chromium = test::kHeadlessChromium;
  ASSERT_EQ(std::system((chromium + "--virtual-time-budget=5000 --dump-dom file://" +
                         dir / "probed.html" + " >" + dir / "dom.html" + " 2>/dev/null")
                            .c_str()),
            0);
  const std::string dom = test::slurp(dir / "dom.html");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("charts=(\\d+) empty=(\\d+) errors=(\\d+)")))
      << dom.substr(0, 400);
  EXPECT_EQ(m[1], "4");
  EXPECT_EQ(m[2], "0") << "charts without a box";
  EXPECT_EQ(m[3], "0") << "script errors";

  const std::string png = test::screenshot_path("report.png", dir.path()).string();
  ASSERT_EQ(std::system((chromium + "--window-size=1200,3600 --screenshot=" + png + " file://" +
                         dir / "report.html" + " >/dev/null 2>&1")
                            .c_str()),
            0);
  EXPECT_GT(fs::file_size(png), 10'000u);
}

}  // namespace
}  // namespace hwt
