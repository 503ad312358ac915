#include "analysis/run_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <sstream>

#include "core/error.h"
#include "core/files.h"
#include "core/text_number.h"
#include "report/csv_writer.h"
#include "report/svg_plot.h"

namespace hwt {
namespace {

constexpr std::array<Metric, kMetrics> kAll = {Metric::Time, Metric::Cost, Metric::Energy,
                                               Metric::Utilisation, Metric::Quality};

// The value at a JSON path ("a/b/c") when it is a number, else nullopt.
std::optional<double> number_at(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const nlohmann::json* at = &j;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return std::nullopt;
    at = &(*at)[key];
  }
  return at->is_number() ? std::optional<double>(at->get<double>()) : std::nullopt;
}

std::string string_at(const nlohmann::json& j, std::initializer_list<const char*> path,
                      const std::string& fallback) {
  const nlohmann::json* at = &j;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return fallback;
    at = &(*at)[key];
  }
  return at->is_string() ? at->get<std::string>() : fallback;
}

// Sets metric m from `value`, or records why it is absent.
void take(RunRecord& r, Metric m, std::optional<double> value, std::string why) {
  const int i = static_cast<int>(m);
  r.metrics[i] = value;
  if (!value) r.missing[i] = std::move(why);
}

std::string format_value(Metric m, double v) {
  switch (m) {
    case Metric::Time:
      return fmt::format("{:.1f}", v);
    case Metric::Cost:
      return fmt::format("{:.4f}", v);
    case Metric::Energy:
      return fmt::format("{:.0f}", v);
    case Metric::Utilisation:
      return fmt::format("{:.1f}", v);
    case Metric::Quality:
      return fmt::format("{:.6g}", v);
  }
  return {};
}

// The run's quality: the first of these its test results (else its validation results) hold.
// Fractions, except perplexity; the joint task's sentence accuracy needs the class and every tag.
void take_quality(RunRecord& r, const nlohmann::json& results) {
  static constexpr const char* kNames[] = {"sentence_accuracy", "accuracy", "slot_f1",
                                           "token_accuracy", "perplexity"};
  for (const char* split : {"test", "valid"})
    for (const char* name : kNames)
      if (const auto v = number_at(results, {split, name})) {
        r.quality_name = name;
        r.quality_split = split;
        r.quality_higher_is_better = std::string_view(name) != "perplexity";
        take(r, Metric::Quality, v, "");
        return;
      }
  take(r, Metric::Quality, std::nullopt, "run.json has no evaluation results");
}

// Flags the runs whose quality falls short of the best by more than `margin`.
void flag_quality(Comparison& c, double margin) {
  constexpr int q = static_cast<int>(Metric::Quality);
  c.flagged.assign(c.runs.size(), false);
  if (!c.used[q]) return;
  const bool up = c.runs[0].quality_higher_is_better;
  double best = *c.runs[0].metrics[q];
  for (const RunRecord& r : c.runs)
    best = up ? std::max(best, *r.metrics[q]) : std::min(best, *r.metrics[q]);
  for (size_t i = 0; i < c.runs.size(); ++i) {
    const double v = *c.runs[i].metrics[q];
    const bool short_of = up ? best - v > margin : v > best * (1 + margin);
    if (!short_of) continue;
    c.flagged[i] = true;
    c.quality_flags.push_back(fmt::format(
        "{}: {} is worse than the best run's by more than the margin ({}): its time and cost "
        "bought less",
        c.runs[i].name, quality_text(c.runs[i]),
        up ? fmt::format("{:g} point{}", 100 * margin, 100 * margin == 1 ? "" : "s")
           : fmt::format("{:g}%", 100 * margin)));
  }
}

}  // namespace

std::string_view metric_name(Metric m) {
  switch (m) {
    case Metric::Time:
      return "time";
    case Metric::Cost:
      return "cost";
    case Metric::Energy:
      return "energy";
    case Metric::Utilisation:
      return "utilisation";
    case Metric::Quality:
      return "quality";
  }
  return "?";
}

std::string_view metric_unit(Metric m) {
  switch (m) {
    case Metric::Time:
      return "s";
    case Metric::Cost:
      return "USD";
    case Metric::Energy:
      return "J";
    case Metric::Utilisation:
      return "%";
    case Metric::Quality:
      return "metric";
  }
  return "";
}

RunRecord read_run(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "run.json").string();
  if (!std::filesystem::exists(path)) fail_input("{}: no run.json (not an hwt train folder)", dir);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path, "run file"));
  } catch (const nlohmann::json::exception& e) {
    fail_input("{}: not valid JSON ({})", path, e.what());
  }
  if (!j.contains("config") || !j.contains("timing"))
    fail_input("{}: not an hwt run file (no config or timing)", path);
  RunRecord r;
  r.name = std::filesystem::path(dir).lexically_normal().filename().string();
  if (r.name.empty() || r.name == ".") r.name = std::filesystem::absolute(dir).filename().string();
  const nlohmann::json& cfg = j["config"];
  r.precision = string_at(cfg, {"train.precision"}, "?");
  r.optimizer = string_at(cfg, {"optim.name"}, "?");
  r.batch = static_cast<int64_t>(number_at(cfg, {"train.batch_size"}).value_or(0));
  r.steps = static_cast<int64_t>(number_at(j, {"results", "steps"}).value_or(0));
  for (const auto& [key, value] : cfg.items())
    if (key.rfind("model.", 0) == 0) r.model[key] = value;
  r.data_source =
      j.contains("data") ? j["data"].value("source", nlohmann::json()) : nlohmann::json();

  const nlohmann::json tel = j.value("telemetry", nlohmann::json());
  const std::string no_tel = "run.json has no telemetry (a run of hwt before it measured any)";
  const std::optional<double> train_s = number_at(tel, {"train", "seconds"});
  take(r, Metric::Time, train_s ? train_s : number_at(j, {"timing", "train_s"}),
       "run.json has no training time");
  take(r, Metric::Cost, number_at(tel, {"cost_usd", "total"}),
       tel.is_null() ? no_tel : "no price: the GPU is not in the catalog and no --price was given");
  take(r, Metric::Energy, number_at(tel, {"total", "gpu_energy_j"}),
       tel.is_null() ? no_tel
                     : string_at(tel, {"total", "gpu_energy_null_reason"},
                                 string_at(tel, {"gpu_unavailable"}, "no GPU energy measured")));
  take(r, Metric::Utilisation, number_at(tel, {"train", "gpu_util_mean_pct"}),
       tel.is_null() ? no_tel : string_at(tel, {"gpu_unavailable"}, "no GPU utilisation measured"));
  take_quality(r, j.value("results", nlohmann::json()));
  return r;
}

std::string quality_text(const RunRecord& r) {
  const auto& v = r.metrics[static_cast<int>(Metric::Quality)];
  if (!v) return "n/a";
  if (!r.quality_higher_is_better) return fmt::format("{} {:.2f}", r.quality_name, *v);
  return fmt::format("{} {:.2f}%", r.quality_name, 100 * *v);
}

const std::vector<WeightSet>& thesis_weight_sets() {
  // Chen & Sköld's weight sets (time, cost, energy, utilisation; no quality), and one that
  // weighs quality as much as the three costs together.
  static const std::vector<WeightSet> sets = {
      {"balance", {0.3, 0.3, 0.3, 0.1, 0}},     {"time_cost", {0.5, 0.3, 0.1, 0.1, 0}},
      {"time_energy", {0.5, 0.1, 0.3, 0.1, 0}}, {"cost_time", {0.3, 0.5, 0.1, 0.1, 0}},
      {"cost_energy", {0.1, 0.5, 0.3, 0.1, 0}}, {"energy_time", {0.3, 0.1, 0.5, 0.1, 0}},
      {"energy_cost", {0.1, 0.3, 0.5, 0.1, 0}}, {"quality_time", {0.2, 0.15, 0.1, 0.05, 0.5}}};
  return sets;
}

WeightSet parse_weights(const std::string& text) {
  WeightSet s{"custom", {}};
  std::stringstream in(text);
  std::string part;
  int n = 0;
  constexpr const char* kExpected =
      "give four or five weights (time,cost,energy,utilisation[,quality])";
  while (std::getline(in, part, ',')) {
    if (n == kMetrics) fail_input("--weights {}: {}", text, kExpected);
    const auto v = parse_whole_double(part);
    if (!v || !std::isfinite(*v) || *v < 0)
      fail_input("--weights {}: '{}' is not a non-negative number", text, part);
    s.w[n++] = *v;
  }
  if (n < kMetrics - 1) fail_input("--weights {}: {}", text, kExpected);
  if (std::accumulate(s.w.begin(), s.w.end(), 0.0) <= 0)
    fail_input("--weights {}: at least one weight must be positive", text);
  return s;
}

Comparison compare_runs(std::vector<RunRecord> runs, std::vector<WeightSet> sets, bool force,
                        double quality_margin) {
  if (runs.size() < 2) fail_input("hwt compare needs at least two runs, got {}", runs.size());
  for (size_t i = 1; i < runs.size() && !force; ++i) {
    if (runs[i].model != runs[0].model)
      fail_input("{} and {} train different models: compare runs of one model (or --force)",
                 runs[0].name, runs[i].name);
    if (runs[i].data_source != runs[0].data_source)
      fail_input(
          "{} and {} train on different data ({} vs {}): compare runs of one dataset (or "
          "--force)",
          runs[0].name, runs[i].name, runs[0].data_source.dump(), runs[i].data_source.dump());
  }
  for (size_t i = 1; i < runs.size(); ++i)
    if (runs[i].metrics[static_cast<int>(Metric::Quality)] &&
        runs[0].metrics[static_cast<int>(Metric::Quality)] &&
        runs[i].quality_name != runs[0].quality_name)
      fail_input("{} reports {} and {} reports {}: their quality cannot be compared", runs[0].name,
                 runs[0].quality_name, runs[i].name, runs[i].quality_name);
  Comparison c;
  c.runs = std::move(runs);
  c.sets = std::move(sets);
  const size_t n = c.runs.size();
  c.normalised.resize(n);
  for (Metric m : kAll) {
    const int k = static_cast<int>(m);
    c.used[k] = true;
    for (const RunRecord& r : c.runs)
      if (!r.metrics[k]) {
        c.used[k] = false;
        c.notes.push_back(fmt::format("{} left out of every score: {} has none ({})",
                                      metric_name(m), r.name, r.missing[k]));
        break;
      }
    if (!c.used[k]) continue;
    double lo = *c.runs[0].metrics[k], hi = lo;
    for (const RunRecord& r : c.runs)
      lo = std::min(lo, *r.metrics[k]), hi = std::max(hi, *r.metrics[k]);
    for (size_t r = 0; r < n; ++r)  // all equal: no run better or worse
      c.normalised[r][k] = hi > lo ? (*c.runs[r].metrics[k] - lo) / (hi - lo) : 0.0;
  }
  for (const WeightSet& s : c.sets) {
    std::vector<double> score(n, 0.0);
    for (size_t r = 0; r < n; ++r)
      for (Metric m : kAll) {
        const int k = static_cast<int>(m);
        if (!c.used[k]) continue;
        // Busier GPUs and higher accuracies score better; higher perplexities worse.
        const bool more_is_better = m == Metric::Utilisation ||
                                    (m == Metric::Quality && c.runs[r].quality_higher_is_better);
        const double sign = more_is_better ? -1.0 : 1.0;
        score[r] += sign * s.w[k] * *c.normalised[r][k];
      }
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return score[a] < score[b]; });
    std::vector<int> rank(n);
    for (size_t i = 0; i < n; ++i) rank[order[i]] = static_cast<int>(i) + 1;
    c.scores.push_back(std::move(score));
    c.ranks.push_back(std::move(rank));
  }
  flag_quality(c, quality_margin);
  return c;
}

std::string comparison_csv(const Comparison& c) {
  std::vector<std::string> header = {"run", "precision", "optimizer", "batch", "steps"};
  for (Metric m : kAll) header.push_back(fmt::format("{}_{}", metric_name(m), metric_unit(m)));
  for (const WeightSet& s : c.sets) {
    header.push_back("score_" + s.name);
    header.push_back("rank_" + s.name);
  }
  CsvWriter csv(header);
  for (size_t r = 0; r < c.runs.size(); ++r) {
    const RunRecord& run = c.runs[r];
    std::vector<std::string> fields = {run.name, run.precision, run.optimizer,
                                       std::to_string(run.batch), std::to_string(run.steps)};
    for (Metric m : kAll) {
      const auto& v = run.metrics[static_cast<int>(m)];
      fields.push_back(v ? format_value(m, *v) : "");
    }
    for (size_t s = 0; s < c.sets.size(); ++s) {
      fields.push_back(fmt::format("{:.4f}", c.scores[s][r]));
      fields.push_back(fmt::format("{}", c.ranks[s][r]));
    }
    csv.row(fields);
  }
  return csv.text();
}

nlohmann::json comparison_json(const Comparison& c) {
  nlohmann::json runs = nlohmann::json::array();
  for (size_t r = 0; r < c.runs.size(); ++r) {
    const RunRecord& run = c.runs[r];
    nlohmann::json metrics, normalised, scores;
    for (Metric m : kAll) {
      const int k = static_cast<int>(m);
      const std::string key = std::string(metric_name(m));
      metrics[key] = run.metrics[k] ? nlohmann::json(*run.metrics[k]) : nlohmann::json();
      if (!run.metrics[k]) metrics[key + "_missing"] = run.missing[k];
      if (m == Metric::Quality && run.metrics[k]) {
        metrics["quality_metric"] = run.quality_name;
        metrics["quality_split"] = run.quality_split;
      }
      normalised[key] = c.normalised[r][k] ? nlohmann::json(*c.normalised[r][k]) : nlohmann::json();
    }
    for (size_t s = 0; s < c.sets.size(); ++s)
      scores[c.sets[s].name] = {{"score", c.scores[s][r]}, {"rank", c.ranks[s][r]}};
    runs.push_back({{"run", run.name},
                    {"precision", run.precision},
                    {"optimizer", run.optimizer},
                    {"batch", run.batch},
                    {"steps", run.steps},
                    {"quality_flagged", c.flagged[r]},
                    {"metrics", metrics},
                    {"normalised", normalised},
                    {"scores", scores}});
  }
  nlohmann::json sets = nlohmann::json::array();
  for (const WeightSet& s : c.sets)
    sets.push_back({{"name", s.name},
                    {"time", s.w[0]},
                    {"cost", s.w[1]},
                    {"energy", s.w[2]},
                    {"utilisation", s.w[3]},
                    {"quality", s.w[4]}});
  return {{"score",
           "w_time*time + w_cost*cost + w_energy*energy - w_utilisation*utilisation - "
           "w_quality*quality (+ for perplexity), each min-max normalised over the runs; lower "
           "is better"},
          {"weight_sets", sets},
          {"notes", c.notes},
          {"quality_flags", c.quality_flags},
          {"runs", runs}};
}

std::string comparison_metrics_svg(const Comparison& c) {
  BarSpec b;
  b.title = "Each metric min-max normalised over the runs (0: lowest)";
  b.y_label = "normalised value";
  for (Metric m : kAll)
    if (c.used[static_cast<int>(m)]) b.categories.emplace_back(metric_name(m));
  for (size_t r = 0; r < c.runs.size(); ++r) {
    BarSpec::Series s{c.runs[r].name, {}};
    for (Metric m : kAll)
      if (c.used[static_cast<int>(m)]) s.values.push_back(*c.normalised[r][static_cast<int>(m)]);
    b.series.push_back(std::move(s));
  }
  return render_bars_svg(b);
}

std::string comparison_scores_svg(const Comparison& c) {
  BarSpec b;
  b.title = "Score under each weight set (lower is better)";
  b.y_label = "score";
  b.width = 900;
  for (const WeightSet& s : c.sets) b.categories.push_back(s.name);
  for (size_t r = 0; r < c.runs.size(); ++r) {
    BarSpec::Series s{c.runs[r].name, {}};
    for (size_t k = 0; k < c.sets.size(); ++k) s.values.push_back(c.scores[k][r]);
    b.series.push_back(std::move(s));
  }
  return render_bars_svg(b);
}

std::string comparison_ranks_svg(const Comparison& c) {
  TableSpec t;
  t.title = "Rank under each weight set (1 = best; score in brackets)";
  for (const WeightSet& s : c.sets) t.columns.push_back(s.name);
  const double worst = static_cast<double>(std::max<size_t>(2, c.runs.size())) - 1;
  for (size_t r = 0; r < c.runs.size(); ++r) {
    t.rows.push_back(c.runs[r].name);
    t.text.emplace_back();
    t.shade.emplace_back();
    for (size_t k = 0; k < c.sets.size(); ++k) {
      t.text.back().push_back(fmt::format("#{} ({:.3f})", c.ranks[k][r], c.scores[k][r] + 0.0));
      t.shade.back().push_back(1 - (c.ranks[k][r] - 1) / worst);
    }
  }
  return render_table_svg(t);
}

}  // namespace hwt
