// Chen & Sköld's comparison of training configurations (docs/compare.md): each run's time, cost,
// energy and GPU utilisation, and the quality the run reached, min-max normalised over the runs
// compared, scored w1·time + w2·cost + w3·energy − w4·utilisation ∓ w5·quality (lower is better)
// under named weight sets, and ranked under each. Runs whose quality falls short of the best by
// more than a margin are flagged: a faster run is no better when it learned less.
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace hwt {

// The five metrics, in the order of a weight set's weights.
enum class Metric { Time, Cost, Energy, Utilisation, Quality };
inline constexpr int kMetrics = 5;
std::string_view metric_name(Metric m);
std::string_view metric_unit(Metric m);

// One finished `hwt train` run as read from its run.json.
struct RunRecord {
  std::string name;  // the run folder's name
  std::string precision, optimizer;
  int64_t batch = 0, steps = 0;
  // time: training steps only (no evaluation); cost and energy: the whole run, evaluation included,
  // as the thesis reports them; utilisation: mean GPU utilisation over the training steps.
  std::array<std::optional<double>, kMetrics> metrics;
  std::array<std::string, kMetrics> missing;  // why a metric is absent
  // The quality metric's name in run.json ("accuracy", "slot_f1", "perplexity", …), its split
  // ("test", else "valid"), and whether more is better (perplexity: less).
  std::string quality_name, quality_split;
  bool quality_higher_is_better = true;
  nlohmann::json model, data_source;  // what must match across compared runs
};

// Reads dir/run.json; InputError naming the folder when it is missing or not an hwt run.
RunRecord read_run(const std::string& dir);

struct WeightSet {
  std::string name;
  std::array<double, kMetrics> w;  // time, cost, energy, utilisation, quality
};

// The thesis's seven weight sets (balance, time_cost, time_energy, cost_time, cost_energy,
// energy_time, energy_cost), which do not weigh quality, and quality_time, which does.
const std::vector<WeightSet>& thesis_weight_sets();

// "w1,w2,w3,w4[,w5]" (non-negative numbers, not all zero; the quality weight w5 is 0 when left
// out) as the weight set "custom"; InputError otherwise.
WeightSet parse_weights(const std::string& text);

struct Comparison {
  std::vector<RunRecord> runs;
  std::vector<WeightSet> sets;
  // normalised[r][m]: 0 (best of the runs) .. 1 (worst), utilisation inverted as the score uses
  // it; absent when the metric is left out.
  std::vector<std::array<std::optional<double>, kMetrics>> normalised;
  std::array<bool, kMetrics> used{};        // metrics every run has
  std::vector<std::string> notes;           // metrics left out, and why
  std::vector<std::string> quality_flags;   // runs short of the best quality by the margin
  std::vector<bool> flagged;                // [run]
  std::vector<std::vector<double>> scores;  // [set][run], lower is better
  std::vector<std::vector<int>> ranks;      // [set][run], 1 = best
};

// Compares runs of one model on one dataset (InputError otherwise, unless `force`). A metric
// some run lacks is left out of every score, with a note naming the run and the reason. A run
// whose quality is worse than the best run's by more than `quality_margin` (in the metric's
// units for accuracies and F1, which are fractions; relative for perplexity) is flagged.
inline constexpr double kDefaultQualityMargin = 0.01;
Comparison compare_runs(std::vector<RunRecord> runs, std::vector<WeightSet> sets, bool force,
                        double quality_margin = kDefaultQualityMargin);

// A run's quality as text: "accuracy 96.03%", "perplexity 12.41".
std::string quality_text(const RunRecord& r);

std::string comparison_csv(const Comparison& c);
nlohmann::json comparison_json(const Comparison& c);
// One chart per metric (bars per run, raw values) and one of the scores under each weight set.
std::string comparison_metrics_svg(const Comparison& c);
std::string comparison_scores_svg(const Comparison& c);
// The rank of every run under every weight set as a table, the best shaded darkest.
std::string comparison_ranks_svg(const Comparison& c);

}  // namespace hwt
