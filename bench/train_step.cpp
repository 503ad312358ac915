// Training-step throughput of a config on the GPU (default GPT-2 124M, B16 T1024, bf16; BERT-base
// classification with --config bert_base): median step time, tokens or sequences per second,
// model FLOP utilisation and device memory; --profile adds a per-op breakdown of one step. The
// model, optimizer and backend are built as `hwt train` builds them from the same config.
// bench/train_step.py measures PyTorch on the same shapes; scripts/gpu_check.sh runs both.
//   bench_train_step [--config gpt2_124m|bert_base|FILE] [--set key=value ...] [--batch N]
//                    [--seq N] [--steps N] [--profile] [--power-seconds S]
// --power-seconds S: afterwards, steps for about S more seconds with NVML telemetry (as hwt train
// measures it), adding the mean GPU power and the energy per step to the line.
// Useful keys: train.precision (bf16, fp16, fp8, fp32 = tf32 GEMMs here), optim.name (adamw, adan),
// train.gemm_autotune, train.deterministic_attention=false (dQ summed with atomics),
// train.cuda_graph (every step after the first captured as one CUDA graph; not with --profile,
// which synchronises around every op), train.recompute=norm_act/attention/full (MFU still counts
// model FLOPs only), model.vocab_size=50257 (GPT-2's own vocabulary, stored padded to
// model.vocab_multiple; model.vocab_multiple=1 stores it unpadded).
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "analysis/fp8_layer_choice.h"
#include "cuda_bench_util.h"
#include "measure/device_time.h"
#include "measure/telemetry.h"
#include "op_profile.h"
#include "train/run_setup.h"
#include "workload/trace_step.h"

namespace {

// Steps for about `seconds` inside a telemetry window; the JSON fields it adds to the line.
template <typename Step>
std::string measure_power(hwt::Backend& be, Step& step, double seconds) {
  using Clock = std::chrono::steady_clock;
  hwt::TelemetryOptions o;
  o.gpu = hwt::NvmlGpu{hwt::training_gpu_pci_bus_id(), 0};
  hwt::Telemetry tel(o);
  if (!tel.gpu_name()) return fmt::format(", \"power_null_reason\": \"{}\"", tel.gpu_unavailable());
  be.synchronize();
  tel.begin("steps");
  const auto start = Clock::now();
  int64_t n = 0;
  do {
    step();
    ++n;
    if (n % 8 == 0) be.synchronize();  // keep the queue short so the window ends with the work
  } while (std::chrono::duration<double>(Clock::now() - start).count() < seconds);
  be.synchronize();
  tel.end("steps");
  const hwt::WindowStats w = tel.stats("steps");
  const auto num = [](const std::optional<double>& v) {
    return v ? fmt::format("{:.2f}", *v) : std::string("null");
  };
  return fmt::format(
      ", \"power_steps\": {}, \"power_s\": {:.3f}, \"gpu_power_w\": {}, \"gpu_util_pct\": {}, "
      "\"energy_j_per_step\": {}, \"energy_method\": \"{}\", \"gpu_name\": \"{}\"",
      n, w.seconds, num(w.gpu_power_mean_w), num(w.gpu_util_mean_pct),
      w.gpu_energy_j ? fmt::format("{:.4f}", *w.gpu_energy_j / static_cast<double>(n)) : "null",
      w.gpu_energy_method, *tel.gpu_name());
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hwt;
  using namespace hwt::bench;
  CLI::App app{"Training-step throughput of a config on the GPU", "bench_train_step"};
  std::string config = "gpt2_124m";
  std::vector<std::string> sets;
  int64_t batch = 0, seq = 0;
  int steps = 20;
  bool profile = false;
  double power_seconds = 0;
  app.add_option("--config", config, "Config TOML or name in configs/")->capture_default_str();
  app.add_option("--set", sets, "Override a config key (repeatable)");
  app.add_option("--batch", batch, "Micro-batch (default: train.batch_size)");
  app.add_option("--seq", seq, "Sequence length (default: data.max_len)");
  app.add_option("--steps", steps, "Timed steps")->capture_default_str();
  app.add_flag("--profile", profile, "Time each op of one step (synchronising around each)");
  app.add_option("--power-seconds", power_seconds,
                 "Then step this long with NVML telemetry: GPU power and energy per step")
      ->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);
  if (!cuda_available()) {
    std::puts("{\"skipped\": \"no GPU\"}");
    return 0;
  }
  RunConfig cfg = load_run_config(config, sets);
  cfg.train.device = DeviceChoice::Cuda;
  const StepSpec spec = step_spec(cfg, batch, seq);
  cfg.model = spec.config.model;  // vocabulary and labels as the trace has them
  const bool graph = cfg.train.cuda_graph;
  if (graph && profile) {
    std::fputs("bench_train_step: train.cuda_graph and --profile cannot be combined\n", stderr);
    return 2;
  }
  const bool lm = cfg.model.head == Task::Lm;

  const double used0 = device_used_bytes();
  auto cuda = make_backend(cfg.train);
  ProfilingBackend prof(*cuda);
  Backend& be = profile ? static_cast<Backend&>(prof) : *cuda;
  // fp8: the layers' products that training would run in fp8 (the shape model's choice).
  TrainingModel training(cfg, be, spec.batch, spec.seq, 1, fp8_chooser(load_gpu_catalog()));
  for (const std::string& note : training.fp8_notes()) std::fprintf(stderr, "%s\n", note.c_str());
  Model& model = training.model();
  model.init_parameters(1);

  Batch b;
  b.batch = spec.batch;
  b.seq = spec.seq;
  uint64_t x = 88172645463325252ull;  // xorshift: random tokens and labels
  auto next = [&](int64_t n) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return static_cast<int32_t>(x % static_cast<uint64_t>(n));
  };
  const int64_t rows = spec.batch * spec.seq;
  for (int64_t i = 0; i < rows; ++i)
    b.ids.push_back(
        next(lm ? cfg.model.vocab_size : std::min<int64_t>(cfg.model.vocab_size, 30000)));
  b.lengths.assign(static_cast<size_t>(spec.batch), static_cast<int32_t>(spec.seq));
  if (lm || has_token_labels(cfg.model.head)) {  // next-token targets, or tags (slot filling)
    const int64_t classes = lm ? cfg.model.vocab_size : cfg.model.num_token_labels;
    for (int64_t i = 0; i < rows; ++i) b.token_labels.push_back(next(classes));
  }
  if (has_sequence_labels(cfg.model.head))
    for (int64_t i = 0; i < spec.batch; ++i) b.seq_labels.push_back(next(cfg.model.num_labels));
  int64_t k = 0;
  auto step = [&] {
    ++k;
    model.params().zero_grads();
    model.set_batch(b);
    CaptureScope capture(be, graph && k > 1);  // the first step is the warm-up
    model.forward(true, static_cast<uint64_t>(k));
    model.backward();
    capture.launch();
    training.update(k, 1e-4);
  };
  step();
  model.set_batch(b);
  model.forward(false, 0);
  const double loss0 = model.losses().mean();
  if (profile) prof.clear();
  DeviceTiming timing;
  timing.warm = profile ? 0 : 3;
  timing.batches = profile ? 1 : steps;
  timing.max_calls_per_batch = 200;
  const double ms = 1e3 * median_seconds(be, step, timing);
  const auto step_ops = prof.totals();  // the one profiled step, before the evaluation below
  std::string power;
  if (power_seconds > 0 && !profile) power = measure_power(be, step, power_seconds);
  model.forward(false, 0);
  const double loss = model.losses().mean();
  const double used = device_used_bytes() - used0;

  // Model FLOPs: a recomputed forward (train.recompute) is extra work, not the model's.
  StepSpec model_step = spec;
  model_step.config.train.recompute = Recompute::None;
  const Workload w = trace_step(model_step);
  double gemm_flops = 0;
  for (Phase p : {Phase::Forward, Phase::Backward}) gemm_flops += w.gemm_flops(p);
  if (cfg.model.causal) {  // the trace counts full S×S attention products; causal does half
    double attn = 0;
    for (const OpRecord& op : w.ops)
      if (op.kind == OpKind::Attention) attn += op.gemm_flops();
    gemm_flops -= attn / 2;
  }
  const double per_s = 1000.0 / ms;
  const auto flag = [](bool v) { return v ? "true" : "false"; };
  emit(fmt::format(
      "{{\"bench\": \"train_step\", \"impl\": \"hwt\", \"config\": \"{}\", \"dtype\": \"{}\", "
      "\"optim\": \"{}\", \"batch\": {}, \"seq\": {}, \"vocab\": {}, \"stored_vocab\": {}, \"ms\": "
      "{:.3f}, "
      "\"tokens_per_s\": {:.0f}, \"seq_per_s\": {:.1f}, \"tflops\": {:.1f}, "
      "\"mfu_vs_989\": {:.3f}, \"peak_mem_GB\": {:.3f}, \"params\": {}, \"loss_before\": {:.4f}, "
      "\"loss_after\": {:.4f}, \"profiled\": {}, \"gemm_autotune\": {}, "
      "\"atomic_attention\": {}, \"cuda_graph\": {}, \"recompute\": \"{}\"{}}}",
      config, precision_name(cfg.train.precision), to_json(cfg)["optim.name"].get<std::string>(),
      spec.batch, spec.seq, cfg.model.vocab_size, cfg.model.padded_vocab(), ms,
      per_s * static_cast<double>(rows), per_s * static_cast<double>(spec.batch),
      gemm_flops * per_s / 1e12, gemm_flops * per_s / 989e12, used / 1e9,
      model.params().parameters(), loss0, loss, flag(profile), flag(cfg.train.gemm_autotune),
      flag(!cfg.train.deterministic_attention), flag(graph),
      to_json(cfg)["train.recompute"].get<std::string>(), power));
  if (!std::isfinite(loss)) return 1;
  if (profile) {
    double total = 0;
    for (const auto& [key, v] : step_ops) total += v.first;
    std::vector<std::pair<double, std::string>> ops;
    for (const auto& [key, v] : step_ops) ops.emplace_back(v.first, key);
    std::sort(ops.rbegin(), ops.rend());
    for (const auto& [t, key] : ops)
      emit(
          fmt::format("{{\"profile\": \"{}\", \"op\": \"{}\", \"ms\": {:.3f}, \"share\": {:.3f}, "
                      "\"calls\": {}}}",
                      config, key, t, t / total, step_ops.at(key).second));
  }
  return 0;
}
