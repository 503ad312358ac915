#include "cli/estimate_data_parallel.h"

#include <fmt/format.h>

#include <charconv>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "analysis/data_parallel.h"
#include "core/error.h"
#include "workload/memory_plan.h"

namespace hwt {
namespace {

constexpr int64_t kMaxGpus = 4096;  // a bound that keeps a typo from printing a billion rows

int64_t gpu_count(const std::string& text, const std::string& part) {
  int64_t n = 0;
  const char* end = part.data() + part.size();
  const auto [stop, ec] = std::from_chars(part.data(), end, n);
  if (part.empty() || ec != std::errc() || stop != end)
    fail_input("--gpus '{}': '{}' is not a GPU count (use --gpus 8)", text, part);
  if (n < 1 || n > kMaxGpus)
    fail_input("--gpus '{}': a GPU count runs from 1 to {}, got {}", text, kMaxGpus, n);
  return n;
}

// One GPU's rows: every count without ZeRO, then every count with ZeRO-1.
struct GpuRows {
  const GpuSpec* gpu;
  Precision precision;
  LinkKind link;
  DataParallelOptions options;
  double gradient_elements;
  std::vector<DataParallelEstimate> rows;
};

void print_json(const std::vector<GpuRows>& all, const RunConfig& c, double tokens) {
  nlohmann::json out = nlohmann::json::array();
  for (const GpuRows& g : all)
    for (const DataParallelEstimate& e : g.rows)
      out.push_back({{"gpu", g.gpu->name},
                     {"link", link_name(g.link)},
                     {"bus_gbs", g.options.link.bus_gbs},
                     {"latency_us", g.options.link.latency_us},
                     {"precision", precision_name(g.precision)},
                     {"grad_reduce", c.train.grad_reduce == GradReduce::Bf16 ? "bf16" : "fp32"},
                     {"bucket_mb", c.train.bucket_mb},
                     {"gpus", e.gpus},
                     {"zero", e.zero ? 1 : 0},
                     {"step_s", e.step_s},
                     {"compute_s", e.compute_s},
                     {"optimizer_s", e.optimizer_s},
                     {"comm_s", e.comm_s},
                     {"exposed_comm_s", e.exposed_s},
                     {"buckets", e.buckets},
                     {"tokens_per_s", static_cast<double>(e.gpus) * tokens / e.step_s},
                     {"scaling_efficiency", e.scaling},
                     {"optimizer_state_saved_bytes", e.optimizer_state_saved_bytes}});
  fmt::print("{}\n", out.dump(1));
}

void print_table(const std::vector<GpuRows>& all, const RunConfig& c, double tokens) {
  for (const GpuRows& g : all) {
    const LinkSpec& l = g.options.link;
    fmt::print(
        "{}{} over {}: ring at {:.0f} GB/s bus bandwidth, {:.0f} us a ring step; {} gradients, "
        "{:.0f} MB in buckets of up to {:.4g} MiB; optimizer state {:.0f} MB\n",
        g.gpu->name,
        g.precision == c.train.precision ? ""
                                         : fmt::format(" (at {})", precision_name(g.precision)),
        link_name(g.link), l.bus_gbs, l.latency_us,
        c.train.grad_reduce == GradReduce::Bf16 ? "bf16" : "fp32",
        g.gradient_elements * g.options.grad_bytes / 1e6, c.train.bucket_mb,
        g.options.optimizer_state_bytes / 1e6);
    fmt::print("{:>5} {:>4} {:>9} {:>10} {:>8} {:>8} {:>10} {:>7} {:>10} {:>7} {:>16}\n", "GPUs",
               "ZeRO", "step ms", "compute ms", "optim ms", "comm ms", "exposed ms", "buckets",
               "tokens/s", "scaling", "state saved/GPU");
    for (const DataParallelEstimate& e : g.rows)
      fmt::print(
          "{:>5} {:>4} {:>9.2f} {:>10.2f} {:>8.2f} {:>8.2f} {:>10.2f} {:>7} {:>10.0f} {:>6.1f}% "
          "{:>13.0f} MB\n",
          e.gpus, e.zero ? 1 : 0, 1e3 * e.step_s, 1e3 * e.compute_s, 1e3 * e.optimizer_s,
          1e3 * e.comm_s, 1e3 * e.exposed_s, e.buckets,
          static_cast<double>(e.gpus) * tokens / e.step_s, 100 * e.scaling,
          e.optimizer_state_saved_bytes / 1e6);
    fmt::print("\n");
  }
  fmt::print(
      "Predictions, batch per GPU fixed: scaling = tokens/s at N / (N x tokens/s on one GPU). "
      "Gradients are all-reduced bucket by bucket behind the backward pass; ZeRO-1's "
      "reduce-scatter and all-gather are not overlapped. The ring model has not been checked "
      "against NCCL on multi-GPU hardware (docs/estimate.md).\n");
}

}  // namespace

std::vector<int64_t> parse_gpu_counts(const std::string& text) {
  if (text.find_first_of(",-") == std::string::npos) {
    const int64_t n = gpu_count(text, text);
    std::vector<int64_t> counts;
    for (int64_t c = 1; c < n; c *= 2) counts.push_back(c);
    counts.push_back(n);
    return counts;
  }
  warn("--gpus {}: lists and ranges are deprecated and will be refused in the next release; "
       "--gpus N estimates 1, 2, 4, … up to N GPUs",
       text);
  std::set<int64_t> counts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    const size_t dash = part.find('-');
    const int64_t lo = gpu_count(text, part.substr(0, dash));
    const int64_t hi = dash == std::string::npos ? lo : gpu_count(text, part.substr(dash + 1));
    if (hi < lo) fail_input("--gpus '{}': the range {} runs backwards", text, part);
    for (int64_t n = lo; n <= hi; ++n) counts.insert(n);
  }
  if (counts.empty()) fail_input("--gpus '{}': name at least one GPU count", text);
  return {counts.begin(), counts.end()};
}

void print_data_parallel(const DataParallelRequest& r, const std::string& config_name,
                         const StepSpec& spec, const std::vector<GpuEstimate>& gpus) {
  const std::vector<int64_t> counts = parse_gpu_counts(r.gpus);
  const auto link = parse_link_kind(r.link);
  if (!link) fail_input("--link '{}': use nvlink, pcie or ib", r.link);
  const RunConfig& c = spec.config;
  DataParallelOptions base;
  base.bucket_bytes = c.train.bucket_mb * 1024 * 1024;
  base.grad_bytes = c.train.grad_reduce == GradReduce::Bf16 ? 2 : 4;
  base.optimizer_state_bytes = plan_memory(spec).total[MemoryStage::OptimizerState];
  std::vector<GpuRows> all;
  for (const auto& [gpu, precision, w, step] : gpus) {
    const StepTimeline t = step_timeline(*w, step);
    GpuRows g{gpu, precision, *link, base, t.parameters, {}};
    g.options.link = gpu->link(*link);
    for (bool zero : {false, true})
      for (int64_t n : counts) {
        g.options.gpus = n;
        g.rows.push_back(zero ? estimate_zero1(t, g.options) : estimate_ddp(t, g.options));
      }
    all.push_back(std::move(g));
  }
  const double tokens = static_cast<double>(spec.batch * spec.seq);
  if (r.json) return print_json(all, c, tokens);
  fmt::print("{} at {}, batch {} x seq {} per GPU ({} tokens a step each)\n\n", config_name,
             precision_name(c.train.precision), spec.batch, spec.seq, tokens);
  print_table(all, c, tokens);
}

}  // namespace hwt
