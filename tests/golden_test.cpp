// The answers of hwt's commands on the shipped configs, compared with the outputs recorded in
// tests/fixtures/golden/ (cases.tsv lists the commands). Text is compared exactly; JSON and JSON
// lines as a superset: every recorded key must be present with the same value, so new keys may
// be added, and floats agree within the tolerance of golden_compare.h (they are recorded on one
// CPU and checked on others). Timings and host facts are not compared. Absolute paths are recorded
// as {src}, {golden} and {out}.
//
// HWT_GOLDEN_UPDATE=1 rewrites the recordings from the binary under test: do it only when an
// answer is meant to change, and say which and why in the commit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"
#include "golden_compare.h"

namespace hwt {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = HWT_SOURCE_DIR;
const fs::path kGolden = kSource / "tests" / "fixtures" / "golden";

// Keys whose values vary from run to run (time, machine) and are never compared.
const std::set<std::string> kUncompared = {"tokens_per_s", "seconds",  "designs_per_second",
                                           "timing",       "hardware", "hwt_version",
                                           "telemetry"};

struct Step {
  int index = 1;
  std::string args;
  std::vector<std::string> compare;  // "stdout" or "file:<name>"
};

struct Case {
  std::string name;
  std::vector<Step> steps;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::vector<Case> load_cases() {
  std::vector<Case> cases;
  std::ifstream in(kGolden / "cases.tsv");
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> f = split(line, '\t');
    if (f.size() != 4) throw std::runtime_error("cases.tsv: bad line: " + line);
    if (cases.empty() || cases.back().name != f[0]) cases.push_back({f[0], {}});
    cases.back().steps.push_back({std::stoi(f[1]), f[2], split(f[3], ' ')});
  }
  return cases;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

std::string expand(std::string args, const fs::path& out) {
  replace_all(args, "{out}", out.string());
  replace_all(args, "{golden}", kGolden.string());
  return args;
}

std::string normalise(std::string text, const fs::path& out) {
  replace_all(text, out.string(), "{out}");
  replace_all(text, kGolden.string(), "{golden}");
  replace_all(text, kSource.string(), "{src}");
  return text;
}

std::optional<nlohmann::json> parse_json(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !(j.is_object() || j.is_array())) return std::nullopt;
  return j;
}

// Fails for each difference; returns the largest relative float drift.
double expect_superset(const nlohmann::json& want, const nlohmann::json& got,
                       const std::string& what, double tolerance) {
  test::Comparison c;
  test::compare_json(want, got, what, tolerance, kUncompared, c);
  for (const std::string& d : c.differences) ADD_FAILURE() << d;
  return c.largest_float_drift;
}

// Prints the largest relative float drift of one answer, so that the tolerances of
// golden_compare.h can be checked against what other CPUs and builds really produce.
void report_drift(const std::string& what, double drift, double tolerance) {
  if (drift > 0)
    std::cout << "float drift: " << what << " " << drift << " relative (tolerance " << tolerance
              << ")\n";
}

void expect_same_answer(const std::string& want, const std::string& got, const std::string& what,
                        double tolerance) {
  if (auto wj = parse_json(want)) {
    const auto gj = parse_json(got);
    ASSERT_TRUE(gj) << what << ": no longer JSON:\n" << got.substr(0, 2000);
    return report_drift(what, expect_superset(*wj, *gj, what, tolerance), tolerance);
  }
  const std::vector<std::string> wl = split(want, '\n'), gl = split(got, '\n');
  const bool json_lines = !wl.empty() && parse_json(wl.front());
  if (json_lines) {
    ASSERT_EQ(wl.size(), gl.size()) << what << ": line count";
    double drift = 0;
    for (size_t i = 0; i < wl.size(); ++i) {
      const auto g = parse_json(gl[i]);
      ASSERT_TRUE(g) << what << " line " << i + 1 << " is not JSON: " << gl[i];
      drift = std::max(drift, expect_superset(*parse_json(wl[i]), *g,
                                              what + ":" + std::to_string(i + 1), tolerance));
    }
    return report_drift(what, drift, tolerance);
  }
  if (want == got) return;
  size_t line = 0;
  while (line < wl.size() && line < gl.size() && wl[line] == gl[line]) ++line;
  ADD_FAILURE() << what << " differs from line " << line + 1
                << ":\n  recorded: " << (line < wl.size() ? wl[line] : "<end>")
                << "\n  now:      " << (line < gl.size() ? gl[line] : "<end>");
}

// Test names show the case, not its bytes.
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class Golden : public ::testing::TestWithParam<Case> {};

TEST_P(Golden, AnswersAsRecorded) {
  const Case& c = GetParam();
  const bool update = std::getenv("HWT_GOLDEN_UPDATE") != nullptr;
  test::TempDir scratch("golden_" + c.name);
  const fs::path out = scratch.path() / "out";
  for (const Step& s : c.steps) {
    const std::string stdout_file = (scratch.path() / "stdout").string();
    const std::string cmd = "cd '" + kSource.string() + "' && HWT_CACHE_DIR='" +
                            (scratch.path() / "cache").string() + "' " + HWT_BINARY + " " +
                            expand(s.args, out) + " >" + stdout_file + " 2>" +
                            (scratch.path() / "stderr").string();
    const int status = std::system(cmd.c_str());
    ASSERT_EQ(status, 0) << "hwt " << s.args << "\n" << test::slurp(scratch.path() / "stderr");
    for (const std::string& what : s.compare) {
      const bool is_stdout = what == "stdout";
      const fs::path produced = is_stdout ? fs::path(stdout_file) : out / what.substr(5);
      const fs::path recorded =
          kGolden /
          (c.name + "." + (is_stdout ? std::to_string(s.index) + ".stdout" : what.substr(5)));
      ASSERT_TRUE(fs::exists(produced)) << produced;
      const std::string got = normalise(test::slurp(produced), out);
      if (update) {
        std::ofstream(recorded, std::ios::binary) << got;
        continue;
      }
      ASSERT_TRUE(fs::exists(recorded)) << recorded << " (record it with HWT_GOLDEN_UPDATE=1)";
      expect_same_answer(test::slurp(recorded), got, c.name + " " + what,
                         test::float_tolerance(split(s.args, ' ').front()));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Commands, Golden, ::testing::ValuesIn(load_cases()),
                         [](const ::testing::TestParamInfo<Case>& p) { return p.param.name; });

}  // namespace
}  // namespace hwt
