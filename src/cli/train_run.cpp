#include "cli/train_run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <optional>
#include <vector>

#include "analysis/fp8_layer_choice.h"
#include "core/error.h"
#include "core/text_number.h"
#include "train/run_files.h"
#include "workload/trace_step.h"

namespace hwt {
namespace {

void print_results(const nlohmann::json& run, const std::string& dir) {
  const auto& r = run["results"];
  auto line = [](const char* name, const nlohmann::json& m) {
    std::string s = fmt::format("{:<10} loss {:.4f}", name, m["loss"].get<double>());
    if (m.contains("accuracy"))
      s += fmt::format("  accuracy {:.2f}%", 100 * m["accuracy"].get<double>());
    if (m.contains("slot_f1"))
      s += fmt::format("  slot F1 {:.2f}", 100 * m["slot_f1"].get<double>());
    if (m.contains("sentence_accuracy"))
      s += fmt::format("  sentence accuracy {:.2f}%", 100 * m["sentence_accuracy"].get<double>());
    if (m.contains("perplexity"))
      s += fmt::format("  perplexity {:.3f}", m["perplexity"].get<double>());
    fmt::print("{}\n", s);
  };
  fmt::print("\ntrained {} steps ({}) in {:.1f} s on {}; {:.1f} ms/step\n",
             r["steps"].get<int64_t>(), r["stopped_by"].get<std::string>(),
             run["timing"]["total_s"].get<double>(), run["hardware"]["backend"].get<std::string>(),
             run["timing"]["step_ms"].get<double>());
  if (r["valid"]["examples"].get<int64_t>() > 0) line("valid", r["valid"]);
  if (r.contains("test")) line("test", r["test"]);
  std::vector<std::string> paths;
  for (const std::string& name : run_files_in(dir)) paths.push_back(dir + "/" + name);
  fmt::print("wrote {}\n", fmt::join(paths, ", "));
}

// --price: a positive number of USD per GPU-hour.
double parse_price(const std::string& text) {
  const auto v = parse_whole_double(text);
  if (!v || !std::isfinite(*v) || *v <= 0)
    fail_input("--price {}: expected a positive number of USD per GPU-hour", text);
  return *v;
}

// One training step of the run's model traced as `hwt flops` does, per token of the step.
std::optional<double> traced_flops_per_token(const RunConfig& config) {
  try {
    const StepSpec s = step_spec(config);
    return trace_step(s).total_flops() / static_cast<double>(s.batch * s.seq);
  } catch (const InputError&) {
    return std::nullopt;
  }
}

std::string energy_text(const nlohmann::json& j) {
  const double e = j.get<double>();
  return e >= 1e6   ? fmt::format("{:.2f} MJ", e / 1e6)
         : e >= 1e3 ? fmt::format("{:.2f} kJ", e / 1e3)
                    : fmt::format("{:.1f} J", e);
}

// One line: time, energy, cost, mean power, utilisation, MFU, tokens per joule; unknowns left
// out, except energy, whose absence is explained.
void print_telemetry(const nlohmann::json& run) {
  const nlohmann::json& t = run["telemetry"];
  if (t.is_null()) return;
  const nlohmann::json &total = t["total"], &train = t["train"];
  std::vector<std::string> parts = {fmt::format("{:.1f} s", total["seconds"].get<double>())};
  if (total["gpu_energy_j"].is_null())
    parts.push_back(
        fmt::format("GPU energy n/a ({})", total["gpu_energy_null_reason"].get<std::string>()));
  else
    parts.push_back(fmt::format("GPU energy {} ({})", energy_text(total["gpu_energy_j"]),
                                total["gpu_energy_method"].get<std::string>()));
  if (!total["cpu_energy_j"].is_null())
    parts.push_back("CPU energy " + energy_text(total["cpu_energy_j"]));
  if (!t["cost_usd"]["total"].is_null())
    parts.push_back(fmt::format("cost ${:.4f}", t["cost_usd"]["total"].get<double>()));
  if (!train["gpu_power_mean_w"].is_null())
    parts.push_back(fmt::format("mean power {:.0f} W", train["gpu_power_mean_w"].get<double>()));
  if (!train["gpu_util_mean_pct"].is_null())
    parts.push_back(fmt::format("GPU util {:.0f}%", train["gpu_util_mean_pct"].get<double>()));
  if (!t["mfu"].is_null())
    parts.push_back(fmt::format("MFU {:.1f}%", 100 * t["mfu"].get<double>()));
  const auto tokens = run["results"]["tokens_trained"].get<double>();
  if (!train["gpu_energy_j"].is_null() && train["gpu_energy_j"].get<double>() > 0)
    parts.push_back(fmt::format("{:.0f} tokens/J", tokens / train["gpu_energy_j"].get<double>()));
  fmt::print("telemetry: {}\n", fmt::join(parts, ", "));
}

}  // namespace

TrainRequest training_request(RunConfig config, std::string out_dir, const std::string& price,
                              bool progress) {
  TrainRequest r;
  r.config = std::move(config);
  r.out_dir = std::move(out_dir);
  r.progress = progress;
  if (!price.empty()) r.price_per_gpu_hour = parse_price(price);
  r.flops_per_token = traced_flops_per_token;
  if (r.config.train.precision == Precision::Fp8) r.choose_fp8 = fp8_chooser(load_gpu_catalog());
  return r;
}

void print_run_summary(const nlohmann::json& run, const std::string& dir) {
  print_results(run, dir);
  print_telemetry(run);
}

}  // namespace hwt
