// `hwt estimate`: a config's training step priced on cataloged GPUs that need not be at hand
// (analysis/step_estimate.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "analysis/fp8_layer_choice.h"
#include "analysis/gemm_calibration.h"
#include "analysis/step_estimate.h"
#include "cli/commands.h"
#include "cli/config_options.h"
#include "cli/estimate_data_parallel.h"
#include "hw/gpu_catalog.h"

namespace hwt {
namespace {

constexpr const char* kDefaultGpus = "8";  // --gpus without a value, or --link alone

struct Opts {
  ConfigOptions config;
  std::vector<std::string> gpus{"H200"};
  std::string precision;
  std::vector<std::string> catalogs;
  double epoch_tokens = 0;
  bool json = false;
  std::string dp_gpus, link;  // data parallel: --gpus, --link
  bool gpus_given = false;    // --gpus, with or without a value
  bool data_parallel() const { return gpus_given || !link.empty(); }
};

// The --gpu names; a comma-separated list, the old spelling, still splits (with a warning).
std::vector<std::string> gpu_names(const std::vector<std::string>& given) {
  std::vector<std::string> out;
  for (const std::string& item : given) {
    if (item.find(',') == std::string::npos) {
      if (item.empty()) fail_input("--gpu '': name a GPU of the catalog");
      out.push_back(item);
      continue;
    }
    warn(
        "--gpu {} (a comma-separated list) is deprecated and will be removed in the next "
        "release: give --gpu once per GPU",
        item);
    std::stringstream in(item);
    for (std::string part; std::getline(in, part, ',');)
      if (!part.empty()) out.push_back(part);
  }
  if (out.empty()) fail_input("--gpu: name at least one GPU of the catalog");
  return out;
}

// Power and energy where the catalog has the GPU's power figure (TPU v5e and v5p have none).
nlohmann::json power_or_null(const GpuSpec& g, const StepEstimate& e) {
  return g.tdp_w > 0 ? nlohmann::json(g.tdp_w * e.power_fraction()) : nlohmann::json();
}
nlohmann::json energy_or_null(const GpuSpec& g, const StepEstimate& e) {
  return g.tdp_w > 0 ? nlohmann::json(g.tdp_w * e.power_fraction() * e.seconds())
                     : nlohmann::json();
}

void print_json(const std::vector<GpuEstimate>& all, double tokens) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [gpu, p, w, e] : all)
    out.push_back({{"gpu", gpu->name},
                   {"precision", precision_name(p)},
                   {"step_s", e.seconds()},
                   {"gemm_s", e.gemm_s},
                   {"attention_s", e.attention_s},
                   {"memory_s", e.memory_s},
                   {"optimizer_s", e.optimizer_s},
                   {"overhead_s", e.overhead_s},
                   {"tokens_per_s", tokens / e.seconds()},
                   {"power_w", power_or_null(*gpu, e)},
                   {"energy_j", energy_or_null(*gpu, e)},
                   {"cost_usd", gpu->price_per_hour * e.seconds() / 3600},
                   {"notes", e.notes}});
  fmt::print("{}\n", out.dump(1));
}

// Three significant figures in fixed notation: a cost per million tokens can be a fraction of a
// cent, and GPUs differ in its third figure.
std::string three_figures(double v) {
  if (!(v > 0) || !std::isfinite(v)) return fmt::format("{}", v);
  const int decimals = std::max(0, 2 - static_cast<int>(std::floor(std::log10(v))));
  return fmt::format("{:.{}f}", v, decimals);
}

// A row's GPU, with the precision it is estimated at where that is not the config's.
std::string row_label(const GpuEstimate& g, Precision config_precision) {
  if (g.precision == config_precision) return g.gpu->name;
  return fmt::format("{} ({})", g.gpu->name, precision_name(g.precision));
}

void print_table(const std::vector<GpuEstimate>& all, Precision config_precision, double tokens,
                 double epoch_tokens) {
  size_t width = 10;
  for (const GpuEstimate& g : all) width = std::max(width, row_label(g, config_precision).size());
  fmt::print("{:<{}} {:>9} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>7} {:>8} {:>10}{}\n",
             "GPU", width, "step ms", "tokens/s", "GEMM ms", "attn ms", "mem ms", "optim ms",
             "gaps ms", "TFLOP/s", "power W", "J/step", "$/1M tok",
             epoch_tokens > 0 ? "   epoch" : "");
  for (const GpuEstimate& g : all) {
    const GpuSpec* gpu = g.gpu;
    const StepEstimate& e = g.step;
    const double s = e.seconds();
    const bool power = gpu->tdp_w > 0;
    fmt::print(
        "{:<{}} {:>9.2f} {:>10.0f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>9.1f} {:>7} "
        "{:>8} {:>10}{}\n",
        row_label(g, config_precision), width, 1e3 * s, tokens / s, 1e3 * e.gemm_s,
        1e3 * e.attention_s, 1e3 * e.memory_s, 1e3 * e.optimizer_s, 1e3 * e.overhead_s,
        e.flops / s / 1e12,
        power ? fmt::format("{:.0f}", gpu->tdp_w * e.power_fraction()) : std::string("-"),
        power ? fmt::format("{:.2f}", gpu->tdp_w * e.power_fraction() * s) : std::string("-"),
        three_figures(gpu->price_per_hour * s / 3600 / tokens * 1e6),
        epoch_tokens > 0 ? fmt::format(" {:>6.1f} h", epoch_tokens / tokens * s / 3600)
                         : std::string());
  }
  fmt::print("\nslowest ops (share of the step):\n");
  for (const auto& [gpu, p, w, e] : all) {
    std::string line;
    for (const OpGroupEstimate& g : e.slowest)
      line += fmt::format("{}{} {:.0f}%", line.empty() ? "" : ", ", g.name,
                          100 * g.seconds / e.seconds());
    fmt::print("  {:<10} {}\n", gpu->name, line);
    for (const std::string& n : e.notes) fmt::print("  {:<10} note: {}\n", "", n);
  }
  fmt::print(
      "\nPower is an estimate: a fraction of the GPU's TDP that grows with the step's share of "
      "tensor-core work, fitted on an H200 (hwt train's telemetry measures it); cost at the "
      "catalog's price per GPU-hour.\n");
}

// What an fp8 step on `w` runs in fp8: the linear-layer products, of all of them.
std::string fp8_share_note(const Workload& w) {
  int fp8 = 0, linear = 0;
  for (const OpRecord& op : w.ops)
    for (const GemmCall& g : op.gemms)
      if (g.role == GemmRole::LinearForward || g.role == GemmRole::LinearInputGrad ||
          g.role == GemmRole::LinearWeightGrad) {
        ++linear;
        fp8 += is_fp8(g.dtype) ? 1 : 0;
      }
  return fmt::format(
      "fp8: {} of the {} linear-layer products run in fp8, with their operands' casts (the rest "
      "have a dimension fp8 GEMMs cannot take or, by hwt shape --precision fp8, would not gain); "
      "attention and the other ops in bf16",
      fp8, linear);
}

void run(const Opts& o) {
  const GpuCatalog cat = load_gpu_catalog(o.catalogs);
  RunConfig rc = o.config.load();
  if (!o.precision.empty()) {
    const auto p = parse_precision(o.precision);
    if (!p) fail_input("--precision {}: use fp32, tf32, bf16, fp16 or fp8", o.precision);
    rc.train.precision = *p;
  }
  if (o.epoch_tokens < 0) fail_input("--epoch-tokens must not be negative");
  if (o.epoch_tokens > 0 && o.data_parallel())
    fail_input("--epoch-tokens is for the single-GPU table, not with --gpus or --link");
  const Precision p = rc.train.precision;
  const StepSpec spec = o.config.step(rc);
  // The step as each GPU trains it: traced once per precision a GPU runs it in (a GPU without
  // the config's may train in another), and in fp8 once per GPU, whose shape model chooses the
  // products that run in fp8.
  std::map<std::string, Workload> traced;
  auto step_on = [&](const GpuSpec& gpu, Precision q) -> const Workload& {
    const std::string key =
        q == Precision::Fp8 ? "fp8 on " + gpu.name : std::string(precision_name(q));
    if (!traced.contains(key)) {
      RunConfig at_q = rc;
      at_q.train.precision = q;
      StepSpec s = o.config.step(at_q);
      if (q == Precision::Fp8) s.choose_fp8 = fp8_chooser(gpu);
      traced.emplace(key, trace_step(s));
    }
    return traced.at(key);
  };
  auto gemm_model = [](const GpuSpec& gpu, Precision q) {
    return GemmModel(gpu, q, resolve_constants(gpu, q, "").constants);
  };
  std::vector<GpuEstimate> all;
  for (const std::string& name : gpu_names(o.gpus)) {
    const GpuSpec& gpu = cat.find(name);
    const std::optional<Precision> q = gpu.precision_for(p);
    if (!q) fail_input("{} has no {} rate in the catalog", gpu.name, precision_name(p));
    const Workload& w = step_on(gpu, *q);
    GpuEstimate g{&gpu, *q, &w, {}};
    if (*q == Precision::Fp8) {
      // Attention and the other ops run as in bf16; the fp8 products at fp8's rate.
      const GemmModel fp8 = gemm_model(gpu, Precision::Fp8);
      g.step = estimate_step(w, gemm_model(gpu, Precision::Bf16), &fp8);
      g.step.notes.insert(g.step.notes.begin(), fp8_share_note(w));
    } else {
      g.step = estimate_step(w, gemm_model(gpu, *q));
    }
    if (*q != p)
      g.step.notes.insert(
          g.step.notes.begin(),
          fmt::format("the {} has no {}: estimated at {}{} (train.precision = \"{}\"), as one "
                      "trains on it",
                      gpu.name, precision_name(p), precision_name(*q),
                      *q == Precision::Fp16 ? " with dynamic loss scaling" : "",
                      precision_name(*q)));
    all.push_back(std::move(g));
  }
  if (o.data_parallel())
    return print_data_parallel({o.dp_gpus.empty() ? kDefaultGpus : o.dp_gpus, o.link, o.json},
                               o.config.config, spec, all);
  const double tokens = static_cast<double>(spec.batch * spec.seq);
  if (o.json) return print_json(all, tokens);
  fmt::print("{} at {}, batch {} x seq {} ({} tokens a step), {:.3g} GFLOP a step\n\n",
             o.config.config, precision_name(p), spec.batch, spec.seq, tokens,
             all.front().workload->total_flops() / 1e9);
  print_table(all, p, tokens, o.epoch_tokens);
}

}  // namespace

void add_estimate_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "estimate", "Predicted step time, throughput, energy and cost of a config on cataloged GPUs");
  auto o = std::make_shared<Opts>();
  add_step_options(cmd, o->config);
  cmd->add_option("--gpu", o->gpus, "A GPU of the catalog (repeatable: a row for each)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->capture_default_str();
  cmd->add_option("--precision", o->precision,
                  "fp32, tf32, bf16, fp16 or fp8 (default: train.precision)");
  cmd->add_option("--catalog", o->catalogs, "Extra GPU catalog file merged by name (repeatable)");
  cmd->add_option("--epoch-tokens", o->epoch_tokens, "Tokens in an epoch: also print its time");
  CLI::Option* gpus =
      cmd->add_option("--gpus", o->dp_gpus,
                      "Data parallel on up to this many of each GPU: the step on 1, 2, 4, … and N "
                      "GPUs, without and with ZeRO-1 (without a value: 8)")
          ->expected(0, 1);
  cmd->add_option("--link", o->link,
                  "Data parallel: the link gradients cross, nvlink, pcie, ib, xgmi or ici "
                  "(default: each GPU's own, nvlink, xgmi or ici)");
  cmd->add_flag("--json", o->json, "Print the estimates as JSON");
  cmd->callback([o, gpus] {
    o->gpus_given = gpus->count() > 0;
    run(*o);
  });
}

}  // namespace hwt
