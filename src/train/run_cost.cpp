#include "train/run_cost.h"

#include <fmt/format.h>

#include "hw/gpu_catalog.h"

namespace hwt {
namespace {

struct Price {
  std::optional<double> usd_per_hour;
  std::string source;  // or why it is unknown
};

Price price_of(const std::optional<double>& given, const GpuSpec* spec,
               const std::string& unknown_gpu) {
  if (given) return {given, "--price"};
  if (spec && spec->price_per_hour > 0) return {spec->price_per_hour, spec->price_source};
  return {std::nullopt,
          fmt::format("unknown: no --price, and {}",
                      spec ? "the catalog has no price for " + spec->name : unknown_gpu)};
}

}  // namespace

nlohmann::json cost_and_mfu(const std::optional<std::string>& gpu, const std::string& no_gpu,
                            const WindowStats& train, const WindowStats& total, Precision precision,
                            const RunCosting& costing) {
  GpuCatalog catalog;
  if (gpu) catalog = load_gpu_catalog();
  const GpuSpec* spec = gpu ? catalog.match_device(*gpu) : nullptr;
  const std::string unknown_gpu =
      gpu ? fmt::format("GPU '{}' is not in the GPU catalog", *gpu) : no_gpu;

  const Price price = price_of(costing.price_per_gpu_hour, spec, unknown_gpu);
  auto cost = [&](const WindowStats& w) {
    return price.usd_per_hour ? nlohmann::json(w.seconds / 3600 * *price.usd_per_hour)
                              : nlohmann::json(nullptr);
  };
  nlohmann::json j = {
      {"price_per_gpu_hour",
       price.usd_per_hour ? nlohmann::json(*price.usd_per_hour) : nlohmann::json(nullptr)},
      {"price_source", price.source},
      {"cost_usd", {{"train", cost(train)}, {"total", cost(total)}}}};

  // MFU: the FLOPs the model needs (traced, per token) at the rate the steps ran, over the
  // GPU's dense peak in the run's precision.
  const double peak = spec ? spec->peak_tflops(precision) * 1e12 : 0;
  std::string why;
  if (!spec)
    why = unknown_gpu;
  else if (peak <= 0)
    why = fmt::format("the catalog has no {} peak for {}", precision_name(precision), spec->name);
  else if (train.seconds <= 0 || costing.tokens_trained <= 0)
    why = "the run trained no tokens";
  const std::optional<double> flops =
      why.empty() && costing.flops_per_token ? costing.flops_per_token() : std::nullopt;
  if (why.empty() && !flops) why = "no traced FLOP count for the run's model";
  if (why.empty()) {
    j["mfu"] = *flops * static_cast<double>(costing.tokens_trained) / train.seconds / peak;
  } else {
    j["mfu"] = nullptr;
    j["mfu_null_reason"] = why;
  }
  return j;
}

}  // namespace hwt
