#include "codesign/report.h"

#include <fmt/format.h>

#include <cmath>

#include "core/files.h"
#include "report/csv_writer.h"
#include "report/svg_plot.h"

namespace hwt::codesign {
namespace {

nlohmann::json pair_json(const ReportedPair& p) {
  const accel::AccelConfig& d = p.design;
  const HwMetrics& h = p.metrics.hw;
  return {{"shape", p.shape.key()},
          {"layers", p.shape.layers},
          {"hidden", p.shape.hidden},
          {"heads", p.shape.heads},
          {"ffn", p.shape.ffn},
          {"accuracy", p.metrics.accuracy},
          {"design", d.name},
          {"design_index", p.design_index},
          {"batch", p.batch},
          {"pes", d.pes},
          {"mac_lanes", d.lanes_per_pe},
          {"macs_per_lane", d.macs_per_lane},
          {"softmax_units", d.softmax_per_pe},
          {"tile_b", d.tile_b},
          {"tile_xy", d.tile_x},
          {"activation_mb", d.activation_buffer_mb},
          {"weight_mb", d.weight_buffer_mb},
          {"mask_mb", d.mask_buffer_mb},
          {"dataflow", accel::loop_order_name(d.dataflow)},
          {"memory", d.memory.type},
          {"banks", d.memory.banks},
          {"ranks", d.memory.ranks},
          {"channels", d.memory.channels},
          {"latency_per_seq_s", h.latency_s},
          {"dynamic_per_seq_j", h.dynamic_j},
          {"leakage_per_seq_j", h.leakage_j},
          {"energy_per_seq_j", h.energy_j()},
          {"area_mm2", h.area_mm2},
          {"score", p.score},
          {"sparsity", p.sparsity}};
}

// The chosen pair relative to another: how many times faster, less energy, smaller, and the
// accuracy gained in percentage points.
nlohmann::json versus(const ReportedPair& chosen, const ReportedPair& other) {
  const HwMetrics &c = chosen.metrics.hw, &o = other.metrics.hw;
  return {{"latency_ratio", o.latency_s / c.latency_s},
          {"energy_ratio", o.energy_j() / c.energy_j()},
          {"area_ratio", o.area_mm2 / c.area_mm2},
          {"accuracy_points", 100 * (chosen.metrics.accuracy - other.metrics.accuracy)}};
}

}  // namespace

std::string front_csv(const SearchResult& r) {
  const std::vector<std::string> columns = {"shape",
                                            "layers",
                                            "hidden",
                                            "heads",
                                            "ffn",
                                            "accuracy",
                                            "design_index",
                                            "batch",
                                            "pes",
                                            "mac_lanes",
                                            "macs_per_lane",
                                            "softmax_units",
                                            "tile_b",
                                            "tile_xy",
                                            "activation_mb",
                                            "weight_mb",
                                            "mask_mb",
                                            "dataflow",
                                            "memory",
                                            "banks",
                                            "ranks",
                                            "channels",
                                            "latency_per_seq_s",
                                            "dynamic_per_seq_j",
                                            "leakage_per_seq_j",
                                            "energy_per_seq_j",
                                            "area_mm2",
                                            "score"};
  std::vector<std::string> header = columns;
  header.push_back("chosen");
  CsvWriter csv(header);
  for (const ReportedPair& p : r.front) {
    const nlohmann::json j = pair_json(p);
    std::vector<std::string> cells;
    for (const std::string& c : columns) {
      const nlohmann::json& v = j.at(c);
      cells.push_back(v.is_string()           ? v.get<std::string>()
                      : v.is_number_integer() ? std::to_string(v.get<int64_t>())
                                              : fmt::format("{:.6g}", v.get<double>()));
    }
    const bool chosen = p.shape == r.chosen.shape && p.design_index == r.chosen.design_index;
    cells.push_back(chosen ? "1" : "0");
    csv.row(cells);
  }
  return csv.text();
}

nlohmann::json result_json(const SearchResult& r, const nlohmann::json& meta) {
  nlohmann::json runs = nlohmann::json::array(), rounds = nlohmann::json::array(),
                 front = nlohmann::json::array();
  for (const TrainedRun& t : r.runs) {
    nlohmann::json j = to_json(t);
    j["key"] = t.shape.key();
    runs.push_back(j);
  }
  double abs_error = 0;
  size_t predictions = 0;
  for (const RoundLog& l : r.rounds) {
    nlohmann::json shapes = nlohmann::json::array();
    for (const ModelShape& s : l.shapes) shapes.push_back(s.key());
    rounds.push_back(
        {{"round", l.round},
         {"shapes", shapes},
         {"predicted_accuracy", l.predicted},
         {"measured_accuracy", l.measured},
         {"mean_abs_error", l.predicted.empty() ? nlohmann::json() : nlohmann::json(l.mae)},
         {"runs_done", l.runs_done},
         {"best", pair_json(l.best)}});
    for (size_t i = 0; i < l.predicted.size(); ++i)
      abs_error += std::abs(l.predicted[i] - l.measured[i]);
    predictions += l.predicted.size();
  }
  for (const ReportedPair& p : r.front) front.push_back(pair_json(p));
  return {{"search", meta},
          {"stopped_by", r.stopped_by},
          {"runs_trained", r.trained},
          {"runs_cached", r.cached},
          {"seconds", r.seconds},
          {"training_seconds", r.training_seconds},
          {"surrogate",
           {{"model", "gaussian_process"},
            {"held_out_predictions", predictions},
            {"mean_abs_error", predictions
                                   ? nlohmann::json(abs_error / static_cast<double>(predictions))
                                   : nlohmann::json()}}},
          {"chosen", pair_json(r.chosen)},
          {"baseline", pair_json(r.baseline)},
          {"baseline_model_best_design", pair_json(r.baseline_best_design)},
          {"chosen_vs_baseline", versus(r.chosen, r.baseline)},
          {"chosen_vs_baseline_model_best_design", versus(r.chosen, r.baseline_best_design)},
          {"front", front},
          {"rounds", rounds},
          {"runs", runs}};
}

std::string accuracy_svg(const SearchResult& r, Axis x) {
  auto xv = [&](const ReportedPair& p) {
    return x == Axis::Latency ? p.metrics.hw.latency_s : p.metrics.hw.energy_j();
  };
  PlotSeries front{"Pareto front (4 objectives)", {}, {}, false, true, "#1f77b4"};
  for (const ReportedPair& p : r.front) {
    front.x.push_back(xv(p));
    front.y.push_back(100 * p.metrics.accuracy);
  }
  auto one = [&](const std::string& label, const ReportedPair& p, const char* color) {
    return PlotSeries{label, {xv(p)}, {100 * p.metrics.accuracy}, false, true, color};
  };
  PlotSpec spec;
  spec.title =
      x == Axis::Latency ? "codesign: accuracy vs latency" : "codesign: accuracy vs energy";
  spec.x_label = x == Axis::Latency ? "training-step latency per sequence (s)"
                                    : "training-step energy per sequence (J)";
  spec.y_label = "validation accuracy (%)";
  spec.log_x = true;
  spec.series = {front, one("chosen: " + r.chosen.shape.key(), r.chosen, "#d62728"),
                 one("baseline: " + r.baseline.shape.key() + " on " + r.baseline.design.name,
                     r.baseline, "#000000")};
  return render_svg(spec);
}

void write_report(const std::string& dir, const SearchResult& r, const nlohmann::json& meta) {
  write_output_file(dir, "front.csv", front_csv(r));
  write_output_file(dir, "codesign.json", result_json(r, meta).dump(1) + "\n");
  write_output_file(dir, "accuracy_latency.svg", accuracy_svg(r, Axis::Latency));
  write_output_file(dir, "accuracy_energy.svg", accuracy_svg(r, Axis::Energy));
}

std::string summary_text(const SearchResult& r) {
  auto line = [](const char* what, const ReportedPair& p) {
    return fmt::format(
        "{:<28} {} on {}: accuracy {:.2f}%, {:.3g} s, {:.3g} J per sequence, "
        "{:.1f} mm², score {:.3f}; sparsity {}\n",
        what, p.shape.key(),
        p.design_index < 0 ? p.design.name : fmt::format("design {}", p.design_index),
        100 * p.metrics.accuracy, p.metrics.hw.latency_s, p.metrics.hw.energy_j(),
        p.metrics.hw.area_mm2, p.score, p.sparsity);
  };
  const nlohmann::json v = versus(r.chosen, r.baseline);
  return line("baseline", r.baseline) +
         line("baseline model, best design", r.baseline_best_design) + line("chosen", r.chosen) +
         fmt::format(
             "chosen vs baseline: {:.2f}x lower latency, {:.2f}x lower energy, {:.2f}x "
             "smaller, {:+.2f} accuracy points\n{} pairs on the front; {} runs ({} trained "
             "now, {} from the cache), stopped by {}; {:.1f} s ({:.1f} s training)\n",
             v["latency_ratio"].get<double>(), v["energy_ratio"].get<double>(),
             v["area_ratio"].get<double>(), v["accuracy_points"].get<double>(), r.front.size(),
             r.runs.size(), r.trained, r.cached, r.stopped_by, r.seconds, r.training_seconds);
}

}  // namespace hwt::codesign
