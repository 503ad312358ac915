#include "cli/generation_run.h"

#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "train/inference.h"

namespace hwt {

void run_generation(const Checkpoint& ckpt, const std::string& path, const RunConfig& cfg,
                    const std::vector<std::string>& prompts, const GenerateOptions& o,
                    const GenerationOutput& out) {
  if (cfg.model.head != Task::Lm || !cfg.model.causal)
    fail_input("{} is not a causal language model (model.head = {}): generation needs one", path,
               task_name(cfg.model.head));
  LoadedModel m = open_model(ckpt, cfg.train.device, static_cast<int>(cfg.train.threads),
                             cfg.model.prune, cfg.train.precision);
  const Tokenizer& tok = *m.vocab.tokenizer;
  const int64_t max_seq = m.config.model.max_seq;
  const auto ids = encode_prompts(tok, prompts, max_seq);
  const GenerationPlan plan = plan_generation(ids, o.max_new_tokens, max_seq);
  m.model->plan(plan.batch, plan.prompt_seq, plan.kv_capacity);
  const bool stream = ids.size() == 1 && !out.json;
  if (stream) {
    fmt::print("{}", tok.decode(ids[0]));
    std::fflush(stdout);
  }
  GenerationSpeed speed;
  const std::vector<Generation> gens =
      generate(*m.model, tok, ids, o,
               stream ? [](size_t, std::string_view piece) {
                 fmt::print("{}", piece);
                 std::fflush(stdout);
               }
                      : std::function<void(size_t, std::string_view)>{},
               &speed);
  for (size_t i = 0; i < gens.size(); ++i) {
    const Generation& g = gens[i];
    if (out.json)
      fmt::print("{}\n", nlohmann::json{{"prompt", prompts[i]},
                                        {"text", g.text},
                                        {"tokens", g.tokens.size()},
                                        {"finish", finish_name(g.finish)}}
                             .dump());
    else
      fmt::print("{}{}\n", stream ? "" : g.prompt_text, stream ? "" : g.text);
  }
  if (out.speeds) {
    auto rate = [](int64_t n, double s) { return s > 0 ? static_cast<double>(n) / s : 0.0; };
    fmt::print(stderr, "prefill: {} tokens, {:.1f} tokens/s; decode: {} tokens, {:.1f} tokens/s\n",
               speed.prefill_tokens, rate(speed.prefill_tokens, speed.prefill_seconds),
               speed.decode_tokens, rate(speed.decode_tokens, speed.decode_seconds));
  }
}

}  // namespace hwt
