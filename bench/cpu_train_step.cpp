// Training-step time of an hwt model on the CPU backend, for comparison with PyTorch
// (bench/cpu_train_step.py, same model, run by bench/cpu_vs_torch.sh in the same session).
//   bench_cpu_train_step --threads 2 --layers 4 --hidden 256 --heads 4 --ffn 1024
//                        --batch 32 --seq 32 --steps 20 [--profile]
//   bench_cpu_train_step --config shakespeare_char_llama_cpu --vocab 65   (a config's model)
// Prints one JSON line: median and mean milliseconds per step (forward, backward, AdamW);
// --profile adds one line per op with its milliseconds per step.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "backend/cpu/cpu_backend.h"
#include "config/run_config.h"
#include "core/philox.h"
#include "model/model.h"
#include "op_profile.h"
#include "train/optimizer.h"

int main(int argc, char** argv) {
  using namespace hwt;
  CLI::App app{"hwt CPU training-step time (compare: bench/cpu_train_step.py)",
               "bench_cpu_train_step"};
  int threads = 2;
  int64_t B = 32, S = 32, steps = 20;
  ModelConfig m;
  m.vocab_size = 8000;
  m.hidden = 256;
  m.heads = 4;
  m.ffn = 1024;
  m.layers = 4;
  bool profile = false;
  std::string config;
  app.add_option("--config", config,
                 "The model of this config (name in configs/ or TOML; --batch and --seq default "
                 "to its train.batch_size and data.max_len), instead of --layers, --hidden, "
                 "--heads and --ffn");
  app.add_option("--threads", threads)->capture_default_str();
  app.add_option("--batch", B)->capture_default_str();
  app.add_option("--seq", S)->capture_default_str();
  app.add_option("--steps", steps)->capture_default_str();
  app.add_option("--vocab", m.vocab_size)->capture_default_str();
  app.add_option("--hidden", m.hidden)->capture_default_str();
  app.add_option("--heads", m.heads)->capture_default_str();
  app.add_option("--ffn", m.ffn)->capture_default_str();
  app.add_option("--layers", m.layers)->capture_default_str();
  app.add_flag("--profile", profile, "Milliseconds per step by op");
  CLI11_PARSE(app, argc, argv);
  if (config.empty()) {
    m.dropout = m.attn_dropout = 0.1;
  } else {
    const RunConfig run = load_run_config(config, {});
    const int64_t vocab = m.vocab_size;
    m = run.model;
    m.vocab_size = vocab;  // the data's, which the config leaves open
    if (!app.count("--batch")) B = run.train.batch_size;
    if (!app.count("--seq")) S = run.data.max_len;
  }
  m.max_seq = S;
  if (has_sequence_labels(m.head) && m.num_labels == 0) m.num_labels = 2;
  if (has_token_labels(m.head) && m.num_token_labels == 0) m.num_token_labels = 8;
  const bool lm = m.head == Task::Lm;
  CpuBackend cpu(threads);
  bench::ProfilingBackend prof(cpu);
  Backend& be = profile ? static_cast<Backend&>(prof) : cpu;
  Model model(m, be);
  model.plan(B, S);
  model.init_parameters(1);
  OptimConfig oc;
  Optimizer opt(oc, model.params(), 1.0);

  Batch b;
  b.batch = B;
  b.seq = S;
  for (int64_t i = 0; i < B * S; ++i)
    b.ids.push_back(static_cast<int32_t>(3 + mix_seed(static_cast<uint64_t>(i)) %
                                                 static_cast<uint64_t>(m.vocab_size - 3)));
  b.lengths.assign(static_cast<size_t>(B), static_cast<int32_t>(S));
  if (lm)  // next-token targets
    for (int64_t i = 0; i < B * S; ++i)
      b.token_labels.push_back(i % S == S - 1 ? -1 : b.ids[static_cast<size_t>(i + 1)]);
  else if (has_token_labels(m.head))
    for (int64_t i = 0; i < B * S; ++i)
      b.token_labels.push_back(static_cast<int32_t>(i % m.num_token_labels));
  if (has_sequence_labels(m.head))
    for (int64_t i = 0; i < B; ++i) b.seq_labels.push_back(static_cast<int32_t>(i % m.num_labels));

  std::vector<double> ms;
  for (int64_t s = 0; s < steps + 3; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    model.params().zero_grads();
    model.set_batch(b);
    model.forward(true, static_cast<uint64_t>(s));
    model.backward();
    opt.step(s + 1, 1e-4);
    const double t =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (s >= 3) ms.push_back(t);  // the first steps warm caches and thread pools
    if (s == 2) prof.clear();
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  double mean = 0;
  for (double v : ms) mean += v / static_cast<double>(ms.size());
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  nlohmann::json out = {{"impl", "hwt"},
                        {"threads", threads},
                        {"omp_wait_policy", policy ? policy : "default"},
                        {"median_ms", sorted[sorted.size() / 2]},
                        {"mean_ms", mean},
                        {"steps", steps},
                        {"params", model.params().parameters()}};
  fmt::print("{}\n", out.dump());
  if (profile) {  // milliseconds per step by op, largest first
    std::vector<std::pair<double, std::string>> rows;
    for (const auto& [key, v] : prof.totals()) rows.emplace_back(v.first / steps, key);
    std::sort(rows.rbegin(), rows.rend());
    for (const auto& [t, key] : rows)
      fmt::print("{}\n", nlohmann::json{{"op", key}, {"ms_per_step", t}}.dump());
  }
}
