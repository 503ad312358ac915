// Shared pieces of the CUDA benchmarks: the GPT-2 / BERT configurations, wall-clock timing of
// device work (synchronised before and after), device memory in use, and JSON-line output.
#pragma once

#include <fmt/format.h>
#ifdef HWT_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "config/model_config.h"

namespace hwt::bench {

inline ModelConfig gpt2_124m() {
  ModelConfig m;
  m.vocab_size = 50304;
  m.max_seq = 1024;
  m.hidden = 768;
  m.heads = 12;
  m.ffn = 3072;
  m.layers = 12;
  m.dropout = 0.0;
  m.attn_dropout = 0.0;
  m.norm = NormPlacement::Pre;
  m.causal = true;
  m.activation = Activation::GeluTanh;
  m.tie_embeddings = true;
  m.head = Task::Lm;
  return m;
}

// BERT-base as HF BertForSequenceClassification trains it (dropout 0.1, exact GELU, post-LN),
// without token-type embeddings and the pooler's dense layer.
inline ModelConfig bert_base() {
  ModelConfig m;
  m.vocab_size = 30522;
  m.max_seq = 512;
  m.hidden = 768;
  m.heads = 12;
  m.ffn = 3072;
  m.layers = 12;
  m.dropout = 0.1;
  m.attn_dropout = 0.1;
  m.norm = NormPlacement::Post;
  m.causal = false;
  m.activation = Activation::Gelu;
  m.head = Task::Classify;
  m.num_labels = 2;
  m.pooling = Pooling::First;
  m.ln_eps = 1e-12;
  return m;
}

#ifdef HWT_WITH_CUDA
// Bytes of device memory in use (all processes' allocations on this device included).
inline double device_used_bytes() {
  size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  return static_cast<double>(total_b - free_b);
}
#endif

// Median wall-clock milliseconds of one `fn` over `reps` timings, after `warm` calls. Calls
// shorter than about 2 ms are timed in back-to-back batches (one synchronisation per batch), so
// that the 10-20 us of a host synchronisation does not count as kernel time.
inline double time_ms(Backend& be, const std::function<void()>& fn, int warm, int reps) {
  using Clock = std::chrono::steady_clock;
  auto elapsed_ms = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  for (int i = 0; i < warm; ++i) fn();
  be.synchronize();
  auto t0 = Clock::now();
  fn();
  be.synchronize();
  const int batch = static_cast<int>(std::clamp(2.0 / std::max(elapsed_ms(t0), 1e-3), 1.0, 200.0));
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    t0 = Clock::now();
    for (int k = 0; k < batch; ++k) fn();
    be.synchronize();
    ms.push_back(elapsed_ms(t0) / batch);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

inline std::string arg(int argc, char** argv, const char* name, const char* fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return fallback;
}

inline bool flag(int argc, char** argv, const char* name) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return true;
  return false;
}

inline void emit(const std::string& json) {
  std::printf("%s\n", json.c_str());
  std::fflush(stdout);
}

}  // namespace hwt::bench
