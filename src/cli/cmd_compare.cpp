// `hwt compare`: finished runs side by side, scored and ranked as Chen & Sköld rank
// configurations (analysis/run_compare.h).
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "analysis/compare_plan.h"
#include "analysis/run_compare.h"
#include "cli/commands.h"
#include "cli/init_checkpoint.h"
#include "cli/train_run.h"
#include "core/error.h"
#include "core/files.h"
#include "train/fine_tune.h"

namespace hwt {
namespace {

struct CompareOpts {
  std::vector<std::string> runs;
  std::string weights, out, plan, price;
  bool force = false, json = false;
  double quality_margin = kDefaultQualityMargin;
};

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
    case Metric::Quality:
      return quality_text(r);
  }
  return {};
}

void print_comparison(const Comparison& c) {
  fmt::print("{:<24} {:<6} {:<6} {:>6} {:>12} {:>10} {:>10} {:>12}  {}\n", "run", "prec", "optim",
             "batch", "time (train)", "cost", "energy", "utilisation", "quality");
  for (size_t i = 0; i < c.runs.size(); ++i) {
    const RunRecord& r = c.runs[i];
    fmt::print("{:<24} {:<6} {:<6} {:>6} {:>12} {:>10} {:>10} {:>12}  {}{}\n", r.name, r.precision,
               r.optimizer, r.batch, cell(r, Metric::Time), cell(r, Metric::Cost),
               cell(r, Metric::Energy), cell(r, Metric::Utilisation), cell(r, Metric::Quality),
               c.flagged[i] ? " (!)" : "");
  }
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
  for (const std::string& f : c.quality_flags) fmt::print("(!) {}\n", f);
}

// Trains every run of the plan into out/<name> (checked whole before the first starts) and
// returns the folders.
std::vector<std::string> train_plan(const CompareOpts& o) {
  const ComparePlan plan = load_compare_plan(o.plan);
  std::vector<std::string> dirs;
  for (const ComparePlan::Run& r : plan.runs) {
    dirs.push_back((std::filesystem::path(o.out) / r.name).string());
    if (std::filesystem::exists(dirs.back()))
      fail_input("{} exists: --out must not hold runs of the plan's names already", dirs.back());
  }
  const bool quiet = o.json;  // keep stdout one JSON document
  // The plan's init, a Hugging Face folder imported once for every run; each run's config is
  // checked against it before the first trains.
  const InitCheckpoint init(plan.init, !quiet);
  std::vector<RunConfig> configs;
  for (const ComparePlan::Run& r : plan.runs)
    configs.push_back(init.path().empty()
                          ? r.config
                          : init_run_config(r.config, Checkpoint(init.path()).info(), plan.init));
  for (size_t i = 0; i < plan.runs.size(); ++i) {
    if (!quiet)
      fmt::print("run {}/{}: {} ({} steps)\n", i + 1, plan.runs.size(), plan.runs[i].name,
                 plan.runs[i].config.train.max_steps);
    TrainRequest request = training_request(configs[i], dirs[i], o.price, !quiet);
    request.init = init.path();
    const nlohmann::json run = train(request);
    if (!quiet) print_run_summary(run, dirs[i]);
  }
  return dirs;
}

}  // namespace

void add_compare_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("compare",
                                     "Score and rank finished runs by time, cost, energy, GPU "
                                     "utilisation and the quality reached");
  auto o = std::make_shared<CompareOpts>();
  cmd->add_option("runs", o->runs,
                  "Run folders written by hwt train (two or more), or files of hwt estimate "
                  "--json whose GPUs are ranked as runs");
  cmd->add_option("--plan", o->plan,
                  "TOML listing configurations to train one after another into --out, then compare "
                  "(docs/compare.md)");
  cmd->add_option("--price", o->price, "With --plan: USD per GPU-hour for the runs' cost");
  cmd->add_option(
      "--weights", o->weights,
      "Custom weights time,cost,energy,utilisation[,quality], scored beside the named sets");
  cmd->add_option("--quality-margin", o->quality_margin,
                  "Flag runs whose quality falls short of the best by more than this (accuracy "
                  "and F1: a fraction, 0.01 = 1 point; perplexity: relative)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--out", o->out, "Write compare.csv, compare.json and two SVG charts here");
  cmd->add_flag("--force", o->force, "Compare runs of different models or datasets");
  cmd->add_flag("--json", o->json, "Print the comparison as JSON");
  cmd->callback([o] {
    if (o->plan.empty() == o->runs.empty())
      fail_input("hwt compare: give run folders or --plan FILE (one of them)");
    if (!o->plan.empty() && o->out.empty())
      fail_input("--plan needs --out, the folder the runs go to");
    std::vector<WeightSet> sets = thesis_weight_sets();
    if (!o->weights.empty()) sets.push_back(parse_weights(o->weights));
    const std::vector<std::string> dirs = o->plan.empty() ? o->runs : train_plan(*o);
    std::vector<RunRecord> runs;
    for (const std::string& dir : dirs) {
      if (!std::filesystem::is_regular_file(dir)) {
        runs.push_back(read_run(dir));
        continue;
      }
      for (RunRecord& r : read_estimates(dir)) runs.push_back(std::move(r));  // estimate --json
    }
    const Comparison c =
        compare_runs(std::move(runs), std::move(sets), o->force, o->quality_margin);
    if (o->json)
      fmt::print("{}\n", comparison_json(c).dump(2));
    else
      print_comparison(c);
    if (o->out.empty()) return;
    write_output_file(o->out, "compare.csv", comparison_csv(c));
    write_output_file(o->out, "compare.json", comparison_json(c).dump(2) + "\n");
    write_output_file(o->out, "compare_metrics.svg", comparison_metrics_svg(c));
    write_output_file(o->out, "compare_scores.svg", comparison_scores_svg(c));
    write_output_file(o->out, "compare_ranks.svg", comparison_ranks_svg(c));
    if (!o->json)
      fmt::print(
          "wrote {}/compare.csv, compare.json, compare_metrics.svg, compare_scores.svg, "
          "compare_ranks.svg\n",
          o->out);
  });
}

}  // namespace hwt
