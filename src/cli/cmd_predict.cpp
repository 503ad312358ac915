// `hwt predict`: classify or tag text lines, or generate text, with a checkpoint.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/checkpoint_config.h"
#include "cli/commands.h"
#include "cli/generation_run.h"
#include "train/inference.h"

namespace hwt {
namespace {

nlohmann::json to_json(const std::string& text, const TextPrediction& p) {
  nlohmann::json out = {{"text", text}};
  if (p.label) {
    out["label"] = *p.label;
    out["probability"] = p.probability;
  }
  if (p.tags) {
    out["tags"] = nlohmann::json::array();
    for (const auto& [token, tag] : *p.tags)
      out["tags"].push_back({{"token", token}, {"tag", tag}});
  }
  return out;
}

std::string to_text(const TextPrediction& p) {
  std::string s;
  if (p.label) s += fmt::format("{} ({:.3f})", *p.label, p.probability);
  if (p.tags)
    for (const auto& [token, tag] : *p.tags) s += fmt::format(" {}/{}", token, tag);
  return s;
}

}  // namespace

void add_predict_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "predict",
      "Classify or tag text (arguments or stdin lines), or continue a prompt with an LM (as "
      "hwt generate)");
  struct Opts {
    std::string checkpoint, prompt;
    std::vector<std::string> texts;
    int64_t tokens = 200;
    double temperature = 0.8;
    uint64_t seed = 1;
    std::vector<std::string> sets;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("checkpoint", o->checkpoint, "checkpoint.safetensors or best.safetensors")
      ->required();
  cmd->add_option("--text", o->texts, "Text to classify/tag (repeatable; default: lines of stdin)");
  cmd->add_option("--prompt", o->prompt, "LM: text to continue");
  cmd->add_option("--tokens", o->tokens, "LM: tokens to generate (up to the model's context)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--temperature", o->temperature, "LM: sampling temperature; 0 = greedy")
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--seed", o->seed, "LM: sampling seed");
  cmd->add_option("--set", o->sets,
                  "Override a key of the saved config, e.g. model.prune.tau_infer (repeatable; "
                  "the model's shape is the checkpoint's)");
  cmd->add_flag("--json", o->json, "One JSON object per input line");
  cmd->callback([o] {
    const Checkpoint ckpt(o->checkpoint);
    const RunConfig cfg = checkpoint_config(ckpt, o->checkpoint, o->sets);
    if (cfg.model.head == Task::Lm) {  // the generator of `hwt generate`, one prompt
      GenerateOptions gen;
      gen.max_new_tokens = o->tokens;
      gen.sampling.temperature = o->temperature;
      gen.sampling.seed = o->seed;
      run_generation(ckpt, o->checkpoint, cfg, {o->prompt.empty() ? "\n" : o->prompt}, gen,
                     {false, false});
      return;
    }
    LoadedModel m =
        load_model(ckpt, cfg.train.device, static_cast<int>(cfg.train.threads), 1, cfg.model.prune);
    std::vector<std::string> lines = o->texts;
    if (lines.empty())
      for (std::string l; std::getline(std::cin, l);) lines.push_back(l);
    for (const std::string& text : lines) {
      const TextPrediction p = predict_text(m, text);
      fmt::print("{}\n", o->json ? to_json(text, p).dump() : to_text(p));
    }
  });
}

}  // namespace hwt
