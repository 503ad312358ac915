// `hwt generate`: continue prompts with a language model checkpoint, with a KV cache.
#include <fmt/format.h>

#include "cli/checkpoint_config.h"
#include "cli/commands.h"
#include "cli/generation_run.h"
#include "core/files.h"

namespace hwt {
namespace {

// One prompt per line of the file (a final newline ends the last line; "\r\n" counts as one).
std::vector<std::string> prompt_lines(const std::string& path) {
  const std::string text = read_file(path, "prompt file");
  std::vector<std::string> lines;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    if (line.ends_with('\r')) line.pop_back();
    lines.push_back(std::move(line));
    at = end + 1;
  }
  return lines;
}

}  // namespace

void add_generate_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "generate",
      "Continue prompts with a language model checkpoint (KV cache; greedy or sampled)");
  struct Opts {
    std::string checkpoint, prompt_file;
    std::vector<std::string> prompts, sets;
    GenerateOptions gen;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  o->gen.sampling.temperature = 0.8;
  cmd->add_option("checkpoint", o->checkpoint, "checkpoint.safetensors of a causal LM")->required();
  cmd->add_option("--prompt", o->prompts, "Text to continue (repeatable: a batch)");
  cmd->add_option("--prompt-file", o->prompt_file, "A file of prompts, one per line");
  cmd->add_option("--max-new-tokens", o->gen.max_new_tokens, "Tokens to generate per prompt")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  cmd->add_option("--temperature", o->gen.sampling.temperature, "Sampling temperature; 0 = greedy")
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--top-k", o->gen.sampling.top_k, "Sample among the k most likely; 0 = all")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--top-p", o->gen.sampling.top_p,
                  "Sample among the most likely tokens holding this probability, in (0, 1]");
  cmd->add_option("--seed", o->gen.sampling.seed, "Sampling seed");
  cmd->add_option("--stop", o->gen.stop,
                  "End a sequence before this text (repeatable); the tokenizer's end-of-text "
                  "token always ends one");
  cmd->add_option("--set", o->sets,
                  "Override a key of the saved config, e.g. train.device (repeatable; the "
                  "model's shape is the checkpoint's)");
  cmd->add_flag("--json", o->json, "One JSON object per prompt: prompt, text, tokens, finish");
  cmd->callback([o] {
    if (!(o->gen.sampling.top_p > 0 && o->gen.sampling.top_p <= 1))
      fail_input("--top-p must be in (0, 1], got {}", o->gen.sampling.top_p);
    std::vector<std::string> prompts = o->prompts;
    if (!o->prompt_file.empty())
      for (std::string& line : prompt_lines(o->prompt_file)) prompts.push_back(std::move(line));
    const Checkpoint ckpt(o->checkpoint);
    const RunConfig cfg = checkpoint_config(ckpt, o->checkpoint, o->sets);
    run_generation(ckpt, o->checkpoint, cfg, prompts, o->gen, {o->json});
  });
}

}  // namespace hwt
