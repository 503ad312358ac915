#include "config/model_config.h"

#include "core/error.h"

namespace hwt {

std::string_view task_name(Task t) {
  switch (t) {
    case Task::Classify:
      return "classify";
    case Task::Tokens:
      return "tokens";
    case Task::Joint:
      return "joint";
    case Task::Lm:
      return "lm";
  }
  return "?";
}

void validate(const ModelConfig& c) {
  auto positive = [](int64_t v, const char* key) {
    if (v < 1) fail_input("config {}={} must be positive", key, v);
  };
  positive(c.max_seq, "model.max_seq");
  positive(c.hidden, "model.hidden");
  positive(c.heads, "model.heads");
  positive(c.ffn, "model.ffn");
  positive(c.layers, "model.layers");
  if (c.hidden % c.heads != 0)
    fail_input("config model.heads={} does not divide model.hidden={}", c.heads, c.hidden);
  positive(c.vocab_multiple, "model.vocab_multiple");
  positive(c.ffn_multiple, "model.ffn_multiple");
  if (c.vocab_size < 0 || c.num_labels < 0 || c.num_token_labels < 0)
    fail_input("config model.vocab_size, num_labels and num_token_labels must not be negative");
  if (c.dropout < 0 || c.dropout >= 1)
    fail_input("config model.dropout={} must be in [0, 1)", c.dropout);
  if (c.attn_dropout < 0 || c.attn_dropout >= 1)
    fail_input("config model.attn_dropout={} must be in [0, 1)", c.attn_dropout);
  if (!(c.ln_eps > 0)) fail_input("config model.ln_eps must be positive");
  if (!(c.init_std > 0)) fail_input("config model.init_std must be positive");
  if (c.head == Task::Lm && !c.causal)
    fail_input("config model.head=\"lm\" needs model.causal=true");
}

}  // namespace hwt
