#include "config/model_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>

#include "core/error.h"

namespace hwt {
namespace {

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// One layer kind's factors: all three lists, positive entries, `cores - 1` ranks.
void check_lists(const TtFactors& t, const std::string& key, size_t cores) {
  if (t.in.empty() || t.out.empty())
    fail_input("config {}: in and out factors must both be given (with ranks)", key);
  for (const auto* list : {&t.in, &t.out})
    for (int64_t f : *list)
      if (f < 1)
        fail_input("config {}.{}={} has a factor below 1", key, list == &t.in ? "in" : "out",
                   *list);
  for (int64_t r : t.ranks)
    if (r < 1) fail_input("config {}.ranks={} has a rank below 1", key, t.ranks);
  if (t.ranks.size() != cores - 1)
    fail_input("config {}.ranks={} has {} ranks; its {} cores need {}", key, t.ranks,
               t.ranks.size(), cores, cores - 1);
}

void check_product(const std::vector<int64_t>& factors, const std::string& key, int64_t dim,
                   const char* dim_key) {
  if (product(factors) != dim)
    fail_input("config {}={} multiplies to {}, not {}={}", key, factors, product(factors), dim_key,
               dim);
}

void validate_tt(const ModelConfig& c) {
  const TtFactors& e = c.tt.embedding;
  if (e.enabled()) {
    const std::string key = "model.tt.embedding";
    if (e.in.size() != e.out.size())
      fail_input("config {}.in={} and .out={} need one factor per core each", key, e.in, e.out);
    check_lists(e, key, e.in.size());
    check_product(e.out, key + ".out", c.hidden, "model.hidden");
    if (c.vocab_size > 0 && product(e.in) < c.vocab_size)
      fail_input("config {}.in={} multiplies to {}, fewer rows than the vocabulary ({})", key, e.in,
                 product(e.in), c.vocab_size);
    if (c.head == Task::Lm && c.tie_embeddings)
      fail_input("config {} needs model.tie_embeddings=false: the LM head reads a dense table",
                 key);
  }
  const auto linear = [&](const TtFactors& t, const std::string& key, int64_t out_dim,
                          const char* out_key) {
    if (!t.enabled()) return;
    check_lists(t, key, t.in.size() + t.out.size());
    check_product(t.in, key + ".in", c.hidden, "model.hidden");
    check_product(t.out, key + ".out", out_dim, out_key);
  };
  linear(c.tt.attention, "model.tt.attention", c.hidden, "model.hidden");
  linear(c.tt.ffn, "model.tt.ffn", c.ffn, "model.ffn");
}

}  // namespace

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
  positive(c.hidden_multiple, "model.hidden_multiple");
  if (c.vocab_size < 0 || c.num_labels < 0 || c.num_token_labels < 0)
    fail_input("config model.vocab_size, num_labels and num_token_labels must not be negative");
  if (c.dropout < 0 || c.dropout >= 1)
    fail_input("config model.dropout={} must be in [0, 1)", c.dropout);
  if (c.attn_dropout < 0 || c.attn_dropout >= 1)
    fail_input("config model.attn_dropout={} must be in [0, 1)", c.attn_dropout);
  if (!(c.ln_eps > 0)) fail_input("config model.ln_eps must be positive");
  if (c.kv_heads < 0 || (c.kv_heads > 0 && c.heads % c.kv_heads != 0))
    fail_input("config model.kv_heads={} must divide model.heads={} (0: as many as heads)",
               c.kv_heads, c.heads);
  if (c.position == Position::Rope) {
    if (!(c.rope.theta > 1)) fail_input("config model.rope_theta={} must exceed 1", c.rope.theta);
    if (!(c.rope.fraction > 0 && c.rope.fraction <= 1))
      fail_input("config model.rotary_fraction={} must be in (0, 1]", c.rope.fraction);
    if (c.rotary_dim() < 2)
      fail_input("config model.rotary_fraction={} turns no pair of a {}-wide head", c.rope.fraction,
                 c.head_dim());
    const RopeConfig& r = c.rope;
    if (r.scaling_factor != 0 &&
        !(r.scaling_factor >= 1 && r.low_freq_factor > 0 &&
          r.high_freq_factor > r.low_freq_factor && r.original_max_seq > 0))
      fail_input(
          "config model.rope_scaling_factor={} needs factor >= 1, 0 < low_freq_factor < "
          "high_freq_factor and a positive rope_original_max_seq",
          r.scaling_factor);
  }
  if (c.parallel_residual && c.norm != NormPlacement::Pre)
    fail_input("config model.parallel_residual=true needs model.norm=\"pre\"");
  if (c.gated() && c.tt.ffn.enabled())
    fail_input("config model.tt.ffn does not factor a gated MLP (model.activation=\"{}\")",
               c.activation == Activation::SwiGlu ? "swiglu" : "geglu");
  if (c.kv() != c.heads && c.tt.attention.enabled())
    fail_input(
        "config model.tt.attention does not factor grouped-query attention (model.kv_heads)");
  if (!(c.init_std > 0)) fail_input("config model.init_std must be positive");
  if (c.head == Task::Lm && !c.causal)
    fail_input("config model.head=\"lm\" needs model.causal=true");
  validate_tt(c);
  for (const auto& [tau, key] : {std::pair{c.prune.tau_infer, "model.prune.tau_infer"},
                                 std::pair{c.prune.tau_train, "model.prune.tau_train"},
                                 std::pair{c.prune.tau_act_grad, "model.prune.tau_act_grad"}})
    if (!(tau >= 0)) fail_input("config {}={} must not be negative (0 turns it off)", key, tau);
}

}  // namespace hwt
