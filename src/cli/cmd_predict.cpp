// `hwt predict`: classify or tag text lines, or generate text, with a checkpoint.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/philox.h"
#include "train/inference.h"

namespace hwt {
namespace {

std::vector<float> download(Backend& be, Tensor t) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  be.download(v.data(), t);
  return v;
}

// Softmax of one row, in place.
void softmax(float* x, int64_t n) {
  const float mx = *std::max_element(x, x + n);
  double z = 0;
  for (int64_t i = 0; i < n; ++i) z += std::exp(static_cast<double>(x[i] - mx));
  for (int64_t i = 0; i < n; ++i)
    x[i] = static_cast<float>(std::exp(static_cast<double>(x[i] - mx)) / z);
}

nlohmann::json predict_line(LoadedModel& m, const std::string& text) {
  const Tokenizer& tok = *m.vocab.tokenizer;
  const int64_t max_len = m.config.data.max_len;
  Batch b;
  b.ids = {Tokenizer::kCls};
  for (int32_t id : tok.encode_prefix(text, max_len - 1)) b.ids.push_back(id);
  b.batch = 1;
  b.seq = std::ssize(b.ids);
  b.lengths = {static_cast<int32_t>(b.seq)};
  b.seq_labels = {-1};
  b.token_labels.assign(b.ids.size(), -1);
  m.model->set_batch(b);
  m.model->forward(false, 0);
  nlohmann::json out = {{"text", text}};
  Model& model = *m.model;
  if (has_sequence_labels(model.config().head)) {
    std::vector<float> p = download(model.backend(), model.seq_logits());
    softmax(p.data(), std::ssize(p));
    const int64_t best = std::max_element(p.begin(), p.end()) - p.begin();
    out["label"] = m.vocab.labels.name(static_cast<int32_t>(best));
    out["probability"] = p[static_cast<size_t>(best)];
  }
  if (has_token_labels(model.config().head)) {
    const Predictions pred = model.predictions();
    nlohmann::json tags = nlohmann::json::array();
    for (int64_t t = 1; t < b.seq; ++t)
      tags.push_back({{"token", tok.decode({b.ids[static_cast<size_t>(t)]})},
                      {"tag", m.vocab.token_labels.name(pred.tokens[static_cast<size_t>(t)])}});
    out["tags"] = tags;
  }
  return out;
}

std::string generate(LoadedModel& m, const std::string& prompt, int64_t count, double temperature,
                     uint64_t seed) {
  const int64_t window = m.config.data.max_len;
  std::vector<int32_t> ids = m.vocab.tokenizer->encode(prompt);
  if (ids.empty()) fail_input("--prompt must contain at least one known token");
  const int64_t vocab = m.config.model.vocab_size;
  for (int64_t n = 0; n < count; ++n) {
    Batch b;
    const int64_t start = std::max<int64_t>(0, std::ssize(ids) - window);
    b.ids.assign(ids.begin() + start, ids.end());
    b.batch = 1;
    b.seq = std::ssize(b.ids);
    b.lengths = {static_cast<int32_t>(b.seq)};
    b.token_labels.assign(b.ids.size(), -1);
    m.model->set_batch(b);
    m.model->forward(false, 0);
    const Tensor last = m.model->token_logits().row_slice(b.seq - 1, 1);
    std::vector<float> p = download(m.model->backend(), last);
    int64_t next = 0;
    if (temperature <= 0) {
      next = std::max_element(p.begin(), p.end()) - p.begin();
    } else {
      for (float& v : p) v = static_cast<float>(v / temperature);
      softmax(p.data(), vocab);
      double u = philox_uniform(seed, static_cast<uint64_t>(n)), acc = 0;
      for (next = 0; next < vocab - 1; ++next)
        if ((acc += p[static_cast<size_t>(next)]) > u) break;
    }
    ids.push_back(static_cast<int32_t>(next));
  }
  return m.vocab.tokenizer->decode(ids);
}

}  // namespace

void add_predict_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "predict", "Classify or tag text (arguments or stdin lines), or generate text with an LM");
  struct Opts {
    std::string checkpoint, prompt;
    std::vector<std::string> texts;
    int64_t tokens = 200;
    double temperature = 0.8;
    uint64_t seed = 1;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("checkpoint", o->checkpoint, "checkpoint.safetensors or best.safetensors")
      ->required();
  cmd->add_option("--text", o->texts, "Text to classify/tag (repeatable; default: lines of stdin)");
  cmd->add_option("--prompt", o->prompt, "LM: text to continue");
  cmd->add_option("--tokens", o->tokens, "LM: tokens to generate")->check(CLI::Range(1, 100000));
  cmd->add_option("--temperature", o->temperature, "LM: sampling temperature; 0 = greedy")
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--seed", o->seed, "LM: sampling seed");
  cmd->add_flag("--json", o->json, "One JSON object per input line");
  cmd->callback([o] {
    const Checkpoint ckpt(o->checkpoint);
    LoadedModel m = load_model(ckpt, ckpt.info().config.train.device,
                               static_cast<int>(ckpt.info().config.train.threads), 1);
    if (m.config.model.head == Task::Lm) {
      fmt::print("{}\n", generate(m, o->prompt.empty() ? "\n" : o->prompt, o->tokens,
                                  o->temperature, o->seed));
      return;
    }
    std::vector<std::string> lines = o->texts;
    if (lines.empty())
      for (std::string l; std::getline(std::cin, l);) lines.push_back(l);
    for (const std::string& text : lines) {
      const nlohmann::json r = predict_line(m, text);
      if (o->json) {
        fmt::print("{}\n", r.dump());
        continue;
      }
      std::string s;
      if (r.contains("label"))
        s += fmt::format("{} ({:.3f})", r["label"].get<std::string>(),
                         r["probability"].get<double>());
      if (r.contains("tags"))
        for (const auto& t : r["tags"])
          s += fmt::format(" {}/{}", t["token"].get<std::string>(), t["tag"].get<std::string>());
      fmt::print("{}\n", s);
    }
  });
}

}  // namespace hwt
