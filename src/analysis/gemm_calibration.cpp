#include "analysis/gemm_calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "analysis/stats.h"
#include "core/error.h"
#include "core/files.h"
#include "core/paths.h"

namespace hwt {
namespace {

// One constant the search moves, with its bounds.
struct Knob {
  std::string name;
  std::function<double&(GemmConstants&)> ref;
  double lo, hi;
};

std::vector<Knob> knobs(const std::vector<GemmSample>& samples, int elem) {
  std::vector<Knob> k = {
      {"peak_fraction", [](GemmConstants& c) -> double& { return c.peak_fraction; }, 0.3, 1.0},
      {"tile_overhead", [](GemmConstants& c) -> double& { return c.tile_overhead; }, 0, 400},
      {"k_overhead", [](GemmConstants& c) -> double& { return c.k_overhead; }, 0, 24},
      {"wave_tail", [](GemmConstants& c) -> double& { return c.wave_tail; }, 0, 1},
      {"kernel_us", [](GemmConstants& c) -> double& { return c.kernel_us; }, 0, 30},
      {"launch_us", [](GemmConstants& c) -> double& { return c.launch_us; }, 0.5, 40},
      {"memory_fraction", [](GemmConstants& c) -> double& { return c.memory_fraction; }, 0.3, 1},
  };
  std::vector<bool> seen(kAlignClasses, false);
  for (const GemmSample& s : samples) {
    const int cls = align_class(worst_alignment_bytes(s.shape, elem));
    if (cls < kAlignClasses) seen[static_cast<size_t>(cls)] = true;
  }
  for (size_t i = 0; i < seen.size(); ++i)
    if (seen[i])
      k.push_back({fmt::format("align[{}]", i),
                   [i](GemmConstants& c) -> double& { return c.align[i]; }, 0.05, 1.0});
  return k;
}

double loss(const GpuSpec& gpu, Precision p, const GemmConstants& c,
            const std::vector<GemmSample>& samples) {
  const GemmModel model(gpu, p, c);
  double sum = 0;
  for (const GemmSample& s : samples) {
    const double r = std::log(model.predict(s.shape).seconds / s.seconds);
    sum += r * r;
  }
  return sum / static_cast<double>(samples.size());
}

std::string lower(std::string s) {
  for (char& ch : s)
    ch = std::isalnum(static_cast<unsigned char>(ch))
             ? static_cast<char>(std::tolower(static_cast<unsigned char>(ch)))
             : '_';
  return s;
}

nlohmann::json constants_json(const GemmConstants& c) {
  return {{"peak_fraction", c.peak_fraction},
          {"tile_overhead", c.tile_overhead},
          {"k_overhead", c.k_overhead},
          {"wave_tail", c.wave_tail},
          {"kernel_us", c.kernel_us},
          {"launch_us", c.launch_us},
          {"memory_fraction", c.memory_fraction},
          {"align", c.align}};
}

double number_at(const nlohmann::json& j, const std::string& key, const std::string& path) {
  if (!j.contains(key) || !j.at(key).is_number())
    fail_input("calibration {}: key 'constants.{}' must be a number", path, key);
  const double v = j.at(key).get<double>();
  if (!std::isfinite(v) || v < 0)
    fail_input("calibration {}: key 'constants.{}' must be finite and >= 0", path, key);
  return v;
}

// The optional keys around the constants: absent gives `otherwise`, a value of another type one
// error naming the key.
std::string optional_text(const nlohmann::json& j, const std::string& key,
                          const std::string& path) {
  if (!j.contains(key)) return "";
  if (!j.at(key).is_string()) fail_input("calibration {}: key '{}' must be a string", path, key);
  return j.at(key).get<std::string>();
}

size_t optional_count(const nlohmann::json& j, const std::string& key, const std::string& path) {
  if (!j.contains(key)) return 0;
  if (!j.at(key).is_number_unsigned())
    fail_input("calibration {}: key '{}' must be a whole number >= 0", path, key);
  return j.at(key).get<size_t>();
}

double optional_number(const nlohmann::json& j, const std::string& key, const std::string& path) {
  if (!j.contains(key)) return 0;
  if (!j.at(key).is_number()) fail_input("calibration {}: key '{}' must be a number", path, key);
  return j.at(key).get<double>();
}

}  // namespace

FitQuality fit_quality(const GemmModel& model, const std::vector<GemmSample>& samples) {
  FitQuality q;
  q.count = samples.size();
  std::vector<double> pred, meas, err;
  for (const GemmSample& s : samples) {
    const double p = model.predict(s.shape).tflops;
    const double m = s.shape.flops() / s.seconds / 1e12;
    pred.push_back(p);
    meas.push_back(m);
    err.push_back(std::abs(p / m - 1));
  }
  q.spearman = spearman(pred, meas);
  q.median_abs_error = median(err);
  q.max_abs_error = err.empty() ? 0 : *std::max_element(err.begin(), err.end());
  return q;
}

GemmConstants fit_constants(const GpuSpec& gpu, Precision p, const std::vector<GemmSample>& samples,
                            GemmConstants start) {
  if (samples.empty()) fail_input("no GEMM measurements to fit the model to");
  GemmConstants best = start;
  double best_loss = loss(gpu, p, best, samples);
  const std::vector<Knob> ks = knobs(samples, precision_bytes(p));
  // Each round scans every constant over a window around its value, halving the window.
  constexpr int kRounds = 10, kPoints = 16;
  for (int round = 0; round < kRounds; ++round) {
    const double width = std::pow(0.6, round);
    for (const Knob& k : ks) {
      const double centre = k.ref(best);
      const double half = 0.5 * width * (k.hi - k.lo);
      const double lo = std::max(k.lo, centre - half), hi = std::min(k.hi, centre + half);
      for (int i = 0; i <= kPoints; ++i) {
        GemmConstants trial = best;
        k.ref(trial) = lo + (hi - lo) * i / kPoints;
        const double l = loss(gpu, p, trial, samples);
        if (l < best_loss) best_loss = l, best = trial;
      }
    }
  }
  return best;
}

void save_calibration(const std::string& path, const Calibration& c) {
  const nlohmann::json j = {{"gpu", c.gpu},
                            {"precision", precision_name(c.precision)},
                            {"device", c.device},
                            {"samples", c.samples},
                            {"constants", constants_json(c.constants)},
                            {"quality",
                             {{"count", c.quality.count},
                              {"spearman", c.quality.spearman},
                              {"median_abs_error", c.quality.median_abs_error},
                              {"max_abs_error", c.quality.max_abs_error}}}};
  const auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) make_output_folder(dir.string());
  write_file_atomic(path, j.dump(1) + "\n");
}

Calibration load_calibration(const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    fail_input("calibration {}: not valid JSON ({})", path, e.what());
  }
  Calibration c;
  if (!j.is_object() || !j.contains("gpu") || !j.at("gpu").is_string())
    fail_input("calibration {}: key 'gpu' must be a string", path);
  c.gpu = j.at("gpu").get<std::string>();
  const auto p = parse_precision(optional_text(j, "precision", path));
  if (!p) fail_input("calibration {}: key 'precision' must be fp32, tf32, bf16, fp16 or fp8", path);
  c.precision = *p;
  c.device = optional_text(j, "device", path);
  c.samples = optional_count(j, "samples", path);
  if (!j.contains("constants") || !j.at("constants").is_object())
    fail_input("calibration {}: key 'constants' must be an object", path);
  const nlohmann::json& k = j.at("constants");
  c.constants.peak_fraction = number_at(k, "peak_fraction", path);
  c.constants.tile_overhead = number_at(k, "tile_overhead", path);
  c.constants.k_overhead = number_at(k, "k_overhead", path);
  c.constants.wave_tail = number_at(k, "wave_tail", path);
  c.constants.kernel_us = number_at(k, "kernel_us", path);
  c.constants.launch_us = number_at(k, "launch_us", path);
  c.constants.memory_fraction = number_at(k, "memory_fraction", path);
  if (c.constants.peak_fraction <= 0 || c.constants.memory_fraction <= 0)
    fail_input("calibration {}: peak_fraction and memory_fraction must be positive", path);
  if (!k.contains("align") || !k.at("align").is_array() || k.at("align").size() != kAlignClasses)
    fail_input("calibration {}: key 'constants.align' must be an array of {} numbers", path,
               kAlignClasses);
  for (size_t i = 0; i < kAlignClasses; ++i) {
    const nlohmann::json& v = k.at("align").at(i);
    if (!v.is_number() || v.get<double>() <= 0)
      fail_input("calibration {}: key 'constants.align[{}]' must be a positive number", path, i);
    c.constants.align[i] = v.get<double>();
  }
  if (j.contains("quality") && j.at("quality").is_object()) {
    const nlohmann::json& q = j.at("quality");
    c.quality.count = optional_count(q, "count", path);
    c.quality.spearman = optional_number(q, "spearman", path);
    c.quality.median_abs_error = optional_number(q, "median_abs_error", path);
    c.quality.max_abs_error = optional_number(q, "max_abs_error", path);
  }
  return c;
}

std::string calibration_file_name(const std::string& gpu, Precision p) {
  return fmt::format("gemm_{}_{}.json", lower(gpu), precision_name(p));
}

std::string calibration_cache_dir() {
  return user_cache_dir();
}

ResolvedConstants resolve_constants(const GpuSpec& gpu, Precision p,
                                    const std::string& explicit_file) {
  auto from = [&](const std::string& path) -> ResolvedConstants {
    const Calibration c = load_calibration(path);
    if (lower(c.gpu) != lower(gpu.name) || c.precision != p)
      fail_input("calibration {} is for {} {}, not {} {}", path, c.gpu, precision_name(c.precision),
                 gpu.name, precision_name(p));
    return {c.constants, path};
  };
  if (!explicit_file.empty()) return from(explicit_file);
  const std::string name = calibration_file_name(gpu.name, p);
  const auto cached = std::filesystem::path(calibration_cache_dir()) / name;
  std::error_code ec;
  if (std::filesystem::exists(cached, ec)) return from(cached.string());
  if (auto shipped = find_shipped_file("hardware/calibration/" + name)) return from(*shipped);
  return {default_constants(gpu.arch), fmt::format("defaults for {}", arch_name(gpu.arch))};
}

}  // namespace hwt
