#include "analysis/run_report.h"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "analysis/run_compare.h"
#include "core/error.h"
#include "core/files.h"
#include "report/html_page.h"
#include "report/si_prefix.h"
#include "report/svg_plot.h"

namespace hwt {
namespace {

// What the page shows of one run: its run.json and the curves of its metrics.jsonl.
struct RunData {
  std::string dir, name;
  nlohmann::json run;
  std::vector<double> step, loss, lr, tokens_per_s;   // training lines
  std::vector<double> power_step, power_w, util_pct;  // where the GPU was measured
  std::vector<double> valid_step, valid_loss;         // evaluation lines
};

RunData read_run_data(const std::string& dir) {
  RunData d;
  d.dir = dir;
  d.name = read_run(dir).name;  // checks run.json first, with its errors
  d.run = nlohmann::json::parse(read_file((std::filesystem::path(dir) / "run.json").string()));
  const std::string metrics = (std::filesystem::path(dir) / "metrics.jsonl").string();
  if (!std::filesystem::exists(metrics)) return d;
  std::istringstream lines(read_file(metrics, "metrics file"));
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    // A line without a numeric step and loss (cut off, or edited) is left out, as is a field of
    // the wrong type: the page shows what the file holds.
    if (j.is_discarded() || !j.is_object()) continue;
    const auto number = [&](const char* key) {
      return j.contains(key) && j[key].is_number() ? std::optional(j[key].get<double>())
                                                   : std::nullopt;
    };
    const auto step = number("step"), loss = number("loss");
    if (!step || !loss) continue;
    if (j.contains("split") && j["split"] == "valid") {
      d.valid_step.push_back(*step);
      d.valid_loss.push_back(*loss);
      continue;
    }
    d.step.push_back(*step);
    d.loss.push_back(*loss);
    d.lr.push_back(number("lr").value_or(0.0));
    d.tokens_per_s.push_back(number("tokens_per_s").value_or(0.0));
    if (const auto power = number("gpu_power_w")) {
      d.power_step.push_back(*step);
      d.power_w.push_back(*power);
      d.util_pct.push_back(number("gpu_util_pct").value_or(0.0));
    }
  }
  return d;
}

// A number at a JSON path, as text with `digits` significant digits and its unit; "n/a" when
// absent or null.
std::string figure(const nlohmann::json& j, std::initializer_list<const char*> path,
                   const std::string& unit, int digits = 4) {
  const nlohmann::json* at = &j;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return "n/a";
    at = &(*at)[key];
  }
  if (!at->is_number()) return "n/a";
  return fmt::format("{:.{}g}{}", at->get<double>(), digits, unit.empty() ? "" : " " + unit);
}

std::string text_at(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const nlohmann::json* at = &j;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return "n/a";
    at = &(*at)[key];
  }
  return at->is_string() ? at->get<std::string>() : at->dump();
}

PlotSeries series(const std::string& label, const std::vector<double>& x,
                  const std::vector<double>& y, bool markers = false) {
  return {label, x, y, true, markers, ""};
}

// One chart over every run: `pick` gives a run's series (empty x: the run has none).
std::string overlay(const std::vector<RunData>& runs, const std::string& title,
                    const std::string& y_label,
                    const std::function<std::vector<PlotSeries>(const RunData&)>& pick) {
  PlotSpec p;
  p.title = title;
  p.x_label = "optimizer step";
  p.y_label = y_label;
  for (const RunData& r : runs)
    for (PlotSeries s : pick(r))
      if (!s.x.empty()) {
        if (runs.size() > 1) s.label = r.name + ": " + s.label;
        p.series.push_back(std::move(s));
      }
  return p.series.empty() ? std::string() : render_svg(p);
}

void add_run(HtmlPage& page, const RunData& d) {
  const nlohmann::json& j = d.run;
  page.begin_section("run-" + d.name);
  page.heading("Run " + d.name);
  page.paragraph(d.dir, "note");
  const nlohmann::json res = j.value("results", nlohmann::json::object());
  std::vector<std::vector<std::string>> rows = {
      {"model parameters", figure(j, {"model", "parameters"}, "", 6)},
      {"data", text_at(j, {"data", "source"})},
      {"hardware",
       text_at(j, {"hardware", "backend"}) + " on " + text_at(j, {"hardware", "host", "cpu"})},
      {"precision, optimizer",
       text_at(j, {"config", "train.precision"}) + ", " + text_at(j, {"config", "optim.name"})},
      {"steps (stopped by)",
       figure(res, {"steps"}, "", 9) + " (" + text_at(res, {"stopped_by"}) + ")"},
      {"training time", figure(j, {"timing", "train_s"}, "s")},
      {"time per step", figure(j, {"timing", "step_ms"}, "ms")},
      {"whole run", figure(j, {"timing", "total_s"}, "s")},
      {"GPU energy", figure(j, {"telemetry", "total", "gpu_energy_j"}, "J")},
      {"cost", figure(j, {"telemetry", "cost_usd", "total"}, "USD")},
      {"MFU", figure(j, {"telemetry", "mfu"}, "")},
      {"mean GPU utilisation", figure(j, {"telemetry", "train", "gpu_util_mean_pct"}, "%")}};
  for (const char* split : {"valid", "test"})
    if (res.contains(split) && res[split].is_object())
      for (const auto& [key, value] : res[split].items())
        if (value.is_number() && key != "examples")
          rows.push_back(
              {std::string(split) + " " + key, fmt::format("{:.5g}", value.get<double>())});
  page.table({"", d.name}, rows);
  std::vector<std::pair<std::string, std::string>> config;
  const nlohmann::json keys = j.value("config", nlohmann::json::object());
  for (const auto& [key, value] : keys.items())
    config.emplace_back(key, value.is_string() ? value.get<std::string>() : value.dump());
  page.details_table("config (" + std::to_string(config.size()) + " keys)", config);
  page.end_section();
}

void add_comparison(HtmlPage& page, const std::vector<RunData>& runs) {
  page.begin_section("comparison");
  page.heading("Comparison");
  std::vector<RunRecord> records;
  for (const RunData& r : runs) records.push_back(read_run(r.dir));
  try {
    const Comparison c = compare_runs(std::move(records), thesis_weight_sets(), false);
    std::vector<std::string> headers = {"run"};
    for (int m = 0; m < kMetrics; ++m)
      headers.push_back(fmt::format("{} ({})", metric_name(static_cast<Metric>(m)),
                                    metric_unit(static_cast<Metric>(m))));
    std::vector<std::vector<std::string>> rows;
    for (const RunRecord& r : c.runs) {
      std::vector<std::string> row = {r.name};
      for (int m = 0; m < kMetrics; ++m)
        row.push_back(static_cast<Metric>(m) == Metric::Quality ? quality_text(r)
                      : r.metrics[m] ? fmt::format("{:.4g}", *r.metrics[m])
                                     : "n/a");
      rows.push_back(std::move(row));
    }
    page.table(headers, rows);
    for (const std::string& n : c.notes) page.paragraph("note: " + n, "note");
    for (const std::string& f : c.quality_flags) page.paragraph("(!) " + f, "note");
    page.chart(comparison_ranks_svg(c));
  } catch (const InputError& e) {
    page.paragraph(std::string("Not ranked: ") + e.what(), "note");
  }
  page.end_section();
}

}  // namespace

std::string run_report_html(const std::vector<std::string>& dirs) {
  if (dirs.empty()) fail_input("hwt report: give at least one run folder");
  std::vector<RunData> runs;
  for (const std::string& dir : dirs) runs.push_back(read_run_data(dir));
  HtmlPage page(runs.size() == 1 ? "hwt run " + runs[0].name
                                 : fmt::format("hwt runs ({})", runs.size()));
  page.heading("Curves");
  for (const std::string& svg :
       {overlay(runs, "Loss", "loss",
                [](const RunData& r) {
                  return std::vector<PlotSeries>{
                      series("train", r.step, r.loss),
                      series("validation", r.valid_step, r.valid_loss, true)};
                }),
        overlay(runs, "Throughput per logged interval", "tokens per second (tokens/s)",
                [](const RunData& r) {
                  return std::vector<PlotSeries>{series("tokens/s", r.step, r.tokens_per_s)};
                }),
        overlay(
            runs, "Learning rate", "learning rate",
            [](const RunData& r) { return std::vector<PlotSeries>{series("lr", r.step, r.lr)}; }),
        overlay(runs, "GPU power and utilisation", "W, %", [](const RunData& r) {
          return std::vector<PlotSeries>{series("power (W)", r.power_step, r.power_w),
                                         series("utilisation (%)", r.power_step, r.util_pct)};
        })})
    if (!svg.empty()) page.chart(svg);
  for (const RunData& r : runs) add_run(page, r);
  if (runs.size() > 1) add_comparison(page, runs);
  return page.render();
}

}  // namespace hwt
