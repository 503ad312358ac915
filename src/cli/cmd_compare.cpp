// `hwt compare`: finished runs side by side, scored and ranked as Chen & Sköld rank
// configurations (analysis/run_compare.h).
#include <fmt/format.h>

#include <memory>

#include "analysis/run_compare.h"
#include "cli/commands.h"
#include "core/files.h"

namespace hwt {
namespace {

std::string cell(const RunRecord& r, Metric m) {
  const auto& v = r.metrics[static_cast<int>(m)];
  if (!v) return "n/a";
  switch (m) {
    case Metric::Time:
      return fmt::format("{:.1f} s", *v);
    case Metric::Cost:
      return fmt::format("${:.4f}", *v);
    case Metric::Energy:
      return fmt::format("{:.1f} kJ", *v / 1e3);
    case Metric::Utilisation:
      return fmt::format("{:.1f}%", *v);
  }
  return {};
}

void print_comparison(const Comparison& c) {
  fmt::print("{:<24} {:<6} {:<6} {:>6} {:>12} {:>10} {:>10} {:>12}\n", "run", "prec", "optim",
             "batch", "time (train)", "cost", "energy", "utilisation");
  for (const RunRecord& r : c.runs)
    fmt::print("{:<24} {:<6} {:<6} {:>6} {:>12} {:>10} {:>10} {:>12}\n", r.name, r.precision,
               r.optimizer, r.batch, cell(r, Metric::Time), cell(r, Metric::Cost),
               cell(r, Metric::Energy), cell(r, Metric::Utilisation));
  fmt::print("\nrank under each weight set (score: lower is better)\n{:<24}", "run");
  for (const WeightSet& s : c.sets) fmt::print(" {:>12}", s.name);
  fmt::print("\n");
  for (size_t r = 0; r < c.runs.size(); ++r) {
    fmt::print("{:<24}", c.runs[r].name);
    for (size_t s = 0; s < c.sets.size(); ++s)
      fmt::print(" {:>12}", fmt::format("{} ({:+.3f})", c.ranks[s][r], c.scores[s][r]));
    fmt::print("\n");
  }
  for (const std::string& n : c.notes) fmt::print("note: {}\n", n);
}

}  // namespace

void add_compare_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "compare", "Score and rank finished runs by time, cost, energy and GPU utilisation");
  struct Opts {
    std::vector<std::string> runs;
    std::string weights, out;
    bool force = false, json = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("runs", o->runs, "Run folders written by hwt train (two or more)")->required();
  cmd->add_option(
      "--weights", o->weights,
      "Custom weights time,cost,energy,utilisation, scored beside the seven named sets");
  cmd->add_option("--out", o->out, "Write compare.csv, compare.json and two SVG charts here");
  cmd->add_flag("--force", o->force, "Compare runs of different models or datasets");
  cmd->add_flag("--json", o->json, "Print the comparison as JSON");
  cmd->callback([o] {
    std::vector<WeightSet> sets = thesis_weight_sets();
    if (!o->weights.empty()) sets.push_back(parse_weights(o->weights));
    std::vector<RunRecord> runs;
    for (const std::string& dir : o->runs) runs.push_back(read_run(dir));
    const Comparison c = compare_runs(std::move(runs), std::move(sets), o->force);
    if (o->json)
      fmt::print("{}\n", comparison_json(c).dump(2));
    else
      print_comparison(c);
    if (o->out.empty()) return;
    write_output_file(o->out, "compare.csv", comparison_csv(c));
    write_output_file(o->out, "compare.json", comparison_json(c).dump(2) + "\n");
    write_output_file(o->out, "compare_metrics.svg", comparison_metrics_svg(c));
    write_output_file(o->out, "compare_scores.svg", comparison_scores_svg(c));
    if (!o->json)
      fmt::print("wrote {}/compare.csv, compare.json, compare_metrics.svg, compare_scores.svg\n",
                 o->out);
  });
}

}  // namespace hwt
