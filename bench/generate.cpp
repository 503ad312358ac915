// Generation speed: prefill and decode tokens/s of a GPT-2-small-shaped random model (or the
// model of a config or a checkpoint), greedy, with the KV cache (train/generate.h, as
// `hwt generate` runs it) and, beside it in the same run, by recomputing the whole sequence for
// every token (what `hwt predict` did before the cache) as the baseline.
//   bench_generate --device cpu --threads 2 --batch 1,16 --prompt 32 --new 8
//   bench_generate --device cuda --dtype bf16 --batch 1,16 --prompt 32 --new 256
//   bench_generate --device cuda --dtype bf16 --checkpoint smollm.safetensors --tokens-out t.json
//   bench_generate --device cuda --dtype bf16 --config llama3_8b --skip-recompute
//   bench_generate --device cuda --dtype bf16 --batch 1 --skip-recompute --profile 64
// Prints one JSON line per (path, batch) and one with the decode speed-up per batch; the two
// paths must produce the same tokens ("same_tokens"). --profile N then runs N more decode steps
// uncaptured, each op bracketed by CUDA events (op_events.h), and prints one line per op with
// its device microseconds per step, heaviest first, and the steps' wall time. Prompt i's token t is
// (7919 * (i * prompt + t) + 13) mod vocabulary, so another program can feed the same prompts.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "config/run_config.h"
#include "model/model.h"
#include "op_events.h"
#include "train/checkpoint.h"
#include "train/generate.h"
#include "train/run_setup.h"

namespace {

using namespace hwt;
using Clock = std::chrono::steady_clock;

// Token ids as text: "<id>" each (the generator decodes as it goes; this keeps that cheap).
class IdTokenizer final : public Tokenizer {
 public:
  explicit IdTokenizer(int64_t vocab) : vocab_(vocab) {}
  int64_t vocab_size() const override { return vocab_; }
  std::vector<int32_t> encode_prefix(std::string_view, int64_t) const override { return {}; }
  std::string decode(const std::vector<int32_t>& ids) const override {
    return fmt::format("{}", fmt::join(ids, " "));
  }
  nlohmann::json to_json() const override { return {}; }

 private:
  int64_t vocab_;
};

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

#ifdef HWT_WITH_CUDA
// Device time of each op of `steps` decode steps of batch `batch`, replayed without a CUDA graph
// after a generation (the cache full: every step attends over its whole capacity).
void profile_decode(Model& model, bench::EventProfilingBackend& events, int64_t batch,
                    int64_t steps) {
  const std::vector<int32_t> ids(static_cast<size_t>(batch), 13);
  events.clear();
  const auto t = Clock::now();
  for (int64_t s = 0; s < steps; ++s) {
    model.decode(ids);
    (void)model.predictions();
  }
  const double wall_us = 1e6 * since(t) / static_cast<double>(steps);
  std::vector<std::pair<double, std::string>> ops;
  double sum = 0;
  int calls = 0;
  for (const auto& [op, total] : events.totals()) {
    ops.emplace_back(total.first / static_cast<double>(steps), op);
    sum += total.first;
    calls += total.second;
  }
  std::sort(ops.rbegin(), ops.rend());
  for (const auto& [us, op] : ops)
    fmt::print("{}\n",
               nlohmann::json{{"profile_batch", batch}, {"op", op}, {"us_per_step", us}}.dump());
  fmt::print("{}\n", nlohmann::json{{"profile_batch", batch},
                                    {"ops_per_step", calls / steps},
                                    {"ops_device_us_per_step", sum / static_cast<double>(steps)},
                                    {"wall_us_per_step_uncaptured", wall_us}}
                         .dump());
}
#endif

struct Result {
  std::vector<std::vector<int32_t>> tokens;
  GenerationSpeed speed;
};

// Greedy by a full forward over each whole sequence per new token (no cache).
Result recompute(Model& m, const std::vector<std::vector<int32_t>>& prompts, int64_t count) {
  const int64_t vocab = m.config().vocab_size, batch = std::ssize(prompts);
  std::vector<std::vector<int32_t>> seqs = prompts;
  Result r;
  r.tokens.resize(prompts.size());
  for (int64_t n = 0; n < count; ++n) {
    const auto t = Clock::now();
    Batch b;
    b.batch = batch;
    b.seq = std::ssize(seqs[0]);
    for (const auto& s : seqs) {
      b.ids.insert(b.ids.end(), s.begin(), s.end());
      b.lengths.push_back(static_cast<int32_t>(s.size()));
    }
    b.token_labels.assign(b.ids.size(), -1);
    m.set_batch(b);
    m.forward(false, 0);
    const Tensor logits = m.token_logits();
    std::vector<float> row(static_cast<size_t>(logits.cols()));
    for (int64_t i = 0; i < batch; ++i) {
      m.backend().download(row.data(), logits.row_slice(i * b.seq + b.seq - 1, 1));
      const auto next =
          static_cast<int32_t>(std::max_element(row.begin(), row.begin() + vocab) - row.begin());
      seqs[static_cast<size_t>(i)].push_back(next);
      r.tokens[static_cast<size_t>(i)].push_back(next);
    }
    (n == 0 ? r.speed.prefill_seconds : r.speed.decode_seconds) += since(t);
    (n == 0 ? r.speed.prefill_tokens : r.speed.decode_tokens) += n == 0 ? b.tokens() : batch;
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hwt generation speed: KV cache against full recompute", "bench_generate"};
  std::string device = "cpu", dtype = "f32", batches = "1,16";
  int64_t prompt = 32, count = 8, threads = 0;
  std::string config, checkpoint, tokens_out;
  bool skip_recompute = false;
  int64_t profile_steps = 0;
  ModelConfig m;  // GPT-2 small: 124M parameters
  m.vocab_size = 50257;
  m.max_seq = 1024;
  m.hidden = 768;
  m.heads = 12;
  m.ffn = 3072;
  m.layers = 12;
  app.add_option("--device", device)->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  app.add_option("--dtype", dtype, "Activations: f32, or bf16 on the GPU")
      ->check(CLI::IsMember({"f32", "bf16"}))
      ->capture_default_str();
  app.add_option("--threads", threads, "CPU threads; 0: all")->capture_default_str();
  app.add_option("--batch", batches, "Comma-separated batch sizes")->capture_default_str();
  app.add_option("--prompt", prompt, "Prompt tokens")->capture_default_str();
  app.add_option("--new", count, "New tokens per sequence")->capture_default_str();
  // Shape flags: the default model's, or changes to a config's (a checkpoint's shape is fixed).
  ModelConfig shape = m;
  auto* layers = app.add_option("--layers", shape.layers)->capture_default_str();
  app.add_option("--hidden", shape.hidden)->capture_default_str();
  app.add_option("--heads", shape.heads)->capture_default_str();
  app.add_option("--kv-heads", shape.kv_heads)->capture_default_str();
  app.add_option("--ffn", shape.ffn)->capture_default_str();
  app.add_option("--vocab", shape.vocab_size)->capture_default_str();
  app.add_option("--config", config, "The model of a config (TOML or name in configs/), random");
  app.add_option("--checkpoint", checkpoint, "The model and weights of an hwt checkpoint")
      ->excludes("--config")
      ->excludes("--hidden")
      ->excludes("--heads")
      ->excludes("--kv-heads")
      ->excludes("--ffn")
      ->excludes("--vocab")
      ->excludes(layers);
  app.add_option("--tokens-out", tokens_out, "Write the KV-cache path's tokens (JSON, per batch)");
  app.add_flag("--skip-recompute", skip_recompute, "Time the KV cache only");
  app.add_option("--profile", profile_steps, "Decode steps to profile op by op (CUDA)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  std::unique_ptr<Checkpoint> ckpt;
  if (!checkpoint.empty()) {
    ckpt = std::make_unique<Checkpoint>(checkpoint);
    m = ckpt->info().config.model;
  } else {
    if (!config.empty()) m = load_run_config(config, {}).model;
    using Flag = std::tuple<const char*, const int64_t*, int64_t*>;
    for (const auto& [flag, from, to] :
         std::initializer_list<Flag>{{"--layers", &shape.layers, &m.layers},
                                     {"--hidden", &shape.hidden, &m.hidden},
                                     {"--heads", &shape.heads, &m.heads},
                                     {"--kv-heads", &shape.kv_heads, &m.kv_heads},
                                     {"--ffn", &shape.ffn, &m.ffn},
                                     {"--vocab", &shape.vocab_size, &m.vocab_size}})
      if (config.empty() || app.count(flag) > 0) *to = *from;
    if (config.empty()) m.activation = Activation::GeluTanh;
  }
  m.dropout = m.attn_dropout = 0;
  m.causal = true;
  m.head = Task::Lm;
  // Weights: the checkpoint's, else random (seed 1).
  auto load_weights = [&](Model& model) {
    if (ckpt)
      ckpt->load_parameters(model.params(), m);
    else
      model.init_parameters(1);
  };
  TrainConfig tc;
  tc.device = device == "cuda" ? DeviceChoice::Cuda : DeviceChoice::Cpu;
  tc.threads = threads;
  const std::unique_ptr<Backend> be = make_backend(tc);
  const DType act = dtype == "bf16" ? DType::BF16 : DType::F32;
  const IdTokenizer tok(m.vocab_size);
  GenerateOptions o;
  o.max_new_tokens = count;  // greedy (temperature 0)

  nlohmann::json all_tokens = nlohmann::json::object();
  for (const std::string& item : CLI::detail::split(batches, ',')) {
    const int64_t batch = std::stoll(item);
    std::vector<std::vector<int32_t>> prompts;
    for (int64_t i = 0; i < batch; ++i) {
      prompts.emplace_back();
      for (int64_t t = 0; t < prompt; ++t)
        prompts.back().push_back(
            static_cast<int32_t>((7919 * (i * prompt + t) + 13) % m.vocab_size));
    }
    auto report = [&](const char* path, const GenerationSpeed& s, bool same) {
      nlohmann::json j = {{"path", path},
                          {"device", device},
                          {"dtype", dtype},
                          {"batch", batch},
                          {"layers", m.layers},
                          {"hidden", m.hidden},
                          {"vocab", m.vocab_size},
                          {"prompt", prompt},
                          {"new", count},
                          {"prefill_tokens_per_s", s.prefill_tokens / s.prefill_seconds},
                          {"decode_tokens_per_s", s.decode_tokens / s.decode_seconds}};
      if (!skip_recompute) j["same_tokens"] = same;
      fmt::print("{}\n", j.dump());
      std::fflush(stdout);
    };
    GenerationSpeed cached;
    std::vector<Generation> gens;
    {
      Model model(m, *be, act);
      load_weights(model);
      const GenerationPlan p = plan_generation(prompts, count, m.max_seq);
      model.plan(p.batch, p.prompt_seq, p.kv_capacity);
      generate(model, tok, prompts, o);  // warm-up: first-touch allocations, autotuning
      gens = generate(model, tok, prompts, o, {}, &cached);
    }
    for (const Generation& g : gens) all_tokens[item].push_back(g.tokens);
#ifdef HWT_WITH_CUDA
    if (profile_steps > 0 && device == "cuda") {
      bench::EventProfilingBackend events(dynamic_cast<CudaBackend&>(*be));
      Model model(m, events, act);
      load_weights(model);
      const GenerationPlan p = plan_generation(prompts, count, m.max_seq);
      model.plan(p.batch, p.prompt_seq, p.kv_capacity);
      generate(model, tok, prompts, o);
      profile_decode(model, events, batch, profile_steps);
    }
#endif
    if (skip_recompute) {
      report("kv_cache", cached, true);
      continue;
    }
    Model model(m, *be, act);
    load_weights(model);
    model.plan(batch, prompt + count);
    const Result full = recompute(model, prompts, count);
    bool same = true;
    for (size_t i = 0; i < gens.size(); ++i) same = same && gens[i].tokens == full.tokens[i];
    report("kv_cache", cached, same);
    report("recompute", full.speed, same);
    const double ratio = (cached.decode_tokens / cached.decode_seconds) /
                         (full.speed.decode_tokens / full.speed.decode_seconds);
    fmt::print("{}\n", nlohmann::json{{"batch", batch}, {"decode_speedup", ratio}}.dump());
  }
  if (!tokens_out.empty()) std::ofstream(tokens_out) << all_tokens.dump() << "\n";
  return 0;
}
