// Chen & Sköld's comparison of training configurations (docs/compare.md): each run's time, cost,
// energy and GPU utilisation, min-max normalised over the runs compared, scored
// w1·time + w2·cost + w3·energy − w4·utilisation (lower is better) under named weight sets, and
// ranked under each.
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace hwt {

// The four metrics, in the order of a weight set's weights.
enum class Metric { Time, Cost, Energy, Utilisation };
inline constexpr int kMetrics = 4;
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
  nlohmann::json model, data_source;          // what must match across compared runs
};

// Reads dir/run.json; InputError naming the folder when it is missing or not an hwt run.
RunRecord read_run(const std::string& dir);

struct WeightSet {
  std::string name;
  std::array<double, kMetrics> w;  // time, cost, energy, utilisation
};

// The thesis's seven weight sets: balance, time_cost, time_energy, cost_time, cost_energy,
// energy_time, energy_cost.
const std::vector<WeightSet>& thesis_weight_sets();

// "w1,w2,w3,w4" (four non-negative numbers, not all zero) as the weight set "custom";
// InputError otherwise.
WeightSet parse_weights(const std::string& text);

struct Comparison {
  std::vector<RunRecord> runs;
  std::vector<WeightSet> sets;
  // normalised[r][m]: 0 (best of the runs) .. 1 (worst), utilisation inverted as the score uses
  // it; absent when the metric is left out.
  std::vector<std::array<std::optional<double>, kMetrics>> normalised;
  std::array<bool, kMetrics> used{};        // metrics every run has
  std::vector<std::string> notes;           // metrics left out, and why
  std::vector<std::vector<double>> scores;  // [set][run], lower is better
  std::vector<std::vector<int>> ranks;      // [set][run], 1 = best
};

// Compares runs of one model on one dataset (InputError otherwise, unless `force`). A metric
// some run lacks is left out of every score, with a note naming the run and the reason.
Comparison compare_runs(std::vector<RunRecord> runs, std::vector<WeightSet> sets, bool force);

std::string comparison_csv(const Comparison& c);
nlohmann::json comparison_json(const Comparison& c);
// One chart per metric (bars per run, raw values) and one of the scores under each weight set.
std::string comparison_metrics_svg(const Comparison& c);
std::string comparison_scores_svg(const Comparison& c);
// The rank of every run under every weight set as a table, the best shaded darkest.
std::string comparison_ranks_svg(const Comparison& c);

}  // namespace hwt
