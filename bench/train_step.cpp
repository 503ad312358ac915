// Training-step throughput of GPT-2 124M (B16 T1024) or BERT-base classification (B32 T128)
// on the CUDA backend: median step time, tokens or sequences per second, model FLOP
// utilisation and device memory; --profile adds a per-op breakdown of one step.
// bench/train_step.py measures PyTorch on the same shapes; scripts/gpu_bench.sh runs both.
//   bench_train_step --model gpt2|bert [--dtype bf16|f16|f32] [--optim adamw|adan]
//                    [--batch N] [--seq N] [--vocab N] [--steps N] [--profile]
//                    [--gemm-autotune] [--atomic-attention] [--cuda-graph]
// (--atomic-attention: train.deterministic_attention = false, dQ summed with atomics.)
// (--cuda-graph: train.cuda_graph; every step after the first has its forward and backward
// captured and launched as one CUDA graph, zero_grads, set_batch and the optimizer outside it.
// Not with --profile, which synchronises around every op.)
// (--vocab 50257 against the default 50304 measures the shape advisor's vocab padding.)
#include <cmath>
#include <cstdio>

#include "cuda_bench_util.h"
#include "op_profile.h"
#ifdef HWT_WITH_CUDA
#include "backend/cuda/cuda_backend.h"
#include "model/model.h"
#include "train/optimizer.h"
#include "workload/trace_step.h"
#endif

int main(int argc, char** argv) {
  using namespace hwt;
  using namespace hwt::bench;
#ifndef HWT_WITH_CUDA
  (void)argc;
  (void)argv;
  std::puts("{\"skipped\": \"built without CUDA\"}");
  return 0;
#else
  if (cuda_device_count() == 0) {
    std::puts("{\"skipped\": \"no GPU\"}");
    return 0;
  }
  const std::string model_name = arg(argc, argv, "--model", "gpt2");
  const bool gpt = model_name == "gpt2";
  ModelConfig cfg = gpt ? gpt2_124m() : bert_base();
  cfg.vocab_size = std::stoll(arg(argc, argv, "--vocab", std::to_string(cfg.vocab_size).c_str()));
  const int64_t batch = std::stoll(arg(argc, argv, "--batch", gpt ? "16" : "32"));
  const int64_t seq = std::stoll(arg(argc, argv, "--seq", gpt ? "1024" : "128"));
  const int steps = std::stoi(arg(argc, argv, "--steps", "20"));
  const std::string dts = arg(argc, argv, "--dtype", "bf16");
  const DType dt = dts == "f32" ? DType::F32 : dts == "f16" ? DType::F16 : DType::BF16;
  const std::string optim = arg(argc, argv, "--optim", "adamw");

  const double used0 = device_used_bytes();
  const bool autotune = flag(argc, argv, "--gemm-autotune");
  const bool atomic_attention = flag(argc, argv, "--atomic-attention");
  const bool graph = flag(argc, argv, "--cuda-graph");
  const bool profile = flag(argc, argv, "--profile");
  if (graph && profile) {
    std::fputs("bench_train_step: --cuda-graph and --profile cannot be combined\n", stderr);
    return 2;
  }
  CudaOptions options;
  options.tf32 = dts == "f32";
  options.gemm_autotune = autotune;
  options.deterministic_attention = !atomic_attention;
  auto cuda = make_cuda_backend(0, options);
  ProfilingBackend prof(*cuda);
  Backend& be = profile ? static_cast<Backend&>(prof) : *cuda;
  Model model(cfg, be, dt);
  model.plan(batch, seq);
  model.init_parameters(1);
  OptimConfig oc;
  oc.name = optim == "adan" ? OptimizerKind::Adan : OptimizerKind::AdamW;
  oc.weight_decay = 0.1;
  Optimizer opt(oc, model.params(), 1.0);

  Batch b;
  b.batch = batch;
  b.seq = seq;
  uint64_t x = 88172645463325252ull;  // xorshift: random tokens and labels
  auto next = [&](int64_t n) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return static_cast<int32_t>(x % static_cast<uint64_t>(n));
  };
  for (int64_t i = 0; i < batch * seq; ++i) b.ids.push_back(next(gpt ? cfg.vocab_size : 30000));
  b.lengths.assign(static_cast<size_t>(batch), static_cast<int32_t>(seq));
  if (gpt) {
    for (int64_t i = 0; i < batch * seq; ++i) b.token_labels.push_back(next(cfg.vocab_size));
  } else {
    for (int64_t i = 0; i < batch; ++i) b.seq_labels.push_back(next(2));
  }
  int64_t k = 0;
  auto step = [&] {
    ++k;
    model.params().zero_grads();
    model.set_batch(b);
    CaptureScope capture(be, graph && k > 1);  // the first step is the warm-up
    model.forward(true, static_cast<uint64_t>(k));
    model.backward();
    capture.launch();
    opt.step(k, 1e-4);
  };
  step();
  model.set_batch(b);
  model.forward(false, 0);
  const double loss0 = model.losses().mean();
  if (profile) prof.clear();
  const double ms = time_ms(be, step, profile ? 0 : 3, profile ? 1 : steps);
  const auto step_ops = prof.totals();  // the one profiled step, before the evaluation below
  model.forward(false, 0);
  const double loss = model.losses().mean();
  const double used = device_used_bytes() - used0;

  TraceRequest tr;
  tr.model = cfg;
  tr.batch = batch;
  tr.seq = seq;
  tr.dtype = dt;
  tr.optim = oc;
  const Workload w = trace_step(tr);
  double gemm_flops = 0;
  for (Phase p : {Phase::Forward, Phase::Backward}) gemm_flops += w.gemm_flops(p);
  if (cfg.causal) {  // the trace counts full S×S attention products; causal does half
    double attn = 0;
    for (const OpRecord& op : w.ops)
      if (op.kind == OpKind::Attention) attn += op.gemm_flops();
    gemm_flops -= attn / 2;
  }
  const double per_s = 1000.0 / ms;
  emit(fmt::format(
      "{{\"bench\": \"train_step\", \"impl\": \"hwt\", \"model\": \"{}\", \"dtype\": \"{}\", "
      "\"optim\": \"{}\", \"batch\": {}, \"seq\": {}, \"vocab\": {}, \"ms\": {:.3f}, "
      "\"tokens_per_s\": {:.0f}, "
      "\"seq_per_s\": {:.1f}, \"tflops\": {:.1f}, \"mfu_vs_989\": {:.3f}, \"peak_mem_GB\": {:.3f}, "
      "\"params\": {}, \"loss_before\": {:.4f}, \"loss_after\": {:.4f}, \"profiled\": {}, "
      "\"gemm_autotune\": {}, \"atomic_attention\": {}, \"cuda_graph\": {}}}",
      model_name, dts, optim, batch, seq, cfg.vocab_size, ms,
      per_s * static_cast<double>(batch * seq), per_s * static_cast<double>(batch),
      gemm_flops * per_s / 1e12, gemm_flops * per_s / 989e12, used / 1e9, model.params().count(),
      loss0, loss, profile ? "true" : "false", autotune ? "true" : "false",
      atomic_attention ? "true" : "false", graph ? "true" : "false"));
  if (!std::isfinite(loss)) return 1;
  if (profile) {
    double total = 0;
    for (const auto& [key, v] : step_ops) total += v.first;
    std::vector<std::pair<double, std::string> > rows;
    for (const auto& [key, v] : step_ops) rows.emplace_back(v.first, key);
    std::sort(rows.rbegin(), rows.rend());
    for (const auto& [t, key] : rows)
      emit(
          fmt::format("{{\"profile\": \"{}\", \"op\": \"{}\", \"ms\": {:.3f}, \"share\": {:.3f}, "
                      "\"calls\": {}}}",
                      model_name, key, t, t / total, step_ops.at(key).second));
  }
  return 0;
#endif
}
