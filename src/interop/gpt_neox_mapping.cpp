// GPTNeoXForCausalLM (transformers' models/gpt_neox; Pythia): LayerNorm, parallel residual,
// rotary positions on the first rotary_pct of each head (rotate_half order, as hwt's), and one
// query_key_value projection whose rows are interleaved per head: head h's q, k, v rows.
#include <fmt/format.h>

#include "interop/hf_architecture.h"

namespace hwt {
namespace {

HfModel read_config(const HfConfig& c) {
  HfModel r;
  ModelConfig& m = r.model;
  m.head = Task::Lm;
  m.causal = true;
  m.norm = NormPlacement::Pre;
  m.position = Position::Rope;
  m.vocab_size = c.integer("vocab_size", 50432);
  m.hidden = c.integer("hidden_size", 6144);
  m.layers = c.integer("num_hidden_layers", 44);
  m.heads = c.integer("num_attention_heads", 64);
  m.ffn = c.integer("intermediate_size", 24576);
  m.activation = hf_activation(c, "hidden_act", "gelu", false);
  m.max_seq = c.integer("max_position_embeddings", 2048);
  m.ln_eps = c.number("layer_norm_eps", 1e-5);
  m.init_std = c.number("initializer_range", 0.02);
  m.tie_embeddings = c.boolean("tie_word_embeddings", false);
  m.parallel_residual = c.boolean("use_parallel_residual", true);
  m.dropout = c.number("hidden_dropout", 0);
  m.attn_dropout = c.number("attention_dropout", 0);
  // transformers 5 moves the rotary settings into rope_parameters.
  const HfConfig rope(c.object("rope_parameters"), c.path());
  m.rope.theta =
      rope.number("rope_theta", c.number("rotary_emb_base", c.number("rope_theta", 10000)));
  m.rope.fraction = rope.number("partial_rotary_factor",
                                c.number("rotary_pct", c.number("partial_rotary_factor", 0.25)));
  const HfConfig scaling(c.object("rope_scaling"), c.path());
  if (!scaling.json().is_null() &&
      scaling.string("rope_type", scaling.string("type", "default")) != "default")
    c.unsupported("rope_scaling", "hwt scales GPT-NeoX's rotary frequencies in no way");
  if (rope.string("rope_type", "default") != "default")
    c.unsupported("rope_parameters", "hwt scales GPT-NeoX's rotary frequencies in no way");
  if (!c.boolean("attention_bias", true))
    c.unsupported("attention_bias", "hwt's model.bias gives attention and MLP biases alike");
  return r;
}

nlohmann::ordered_json write_config(const ModelConfig& m, const std::vector<std::string>&) {
  return {{"vocab_size", m.vocab_size},
          {"hidden_size", m.hidden},
          {"num_hidden_layers", m.layers},
          {"num_attention_heads", m.heads},
          {"intermediate_size", m.ffn},
          {"hidden_act", hf_activation_name(m.activation)},
          {"rotary_pct", m.rope.fraction},
          {"rotary_emb_base", m.rope.theta},
          {"max_position_embeddings", m.max_seq},
          {"layer_norm_eps", m.ln_eps},
          {"initializer_range", m.init_std},
          {"use_parallel_residual", m.parallel_residual},
          {"tie_word_embeddings", m.tie_embeddings},
          {"hidden_dropout", m.dropout},
          {"attention_dropout", m.attn_dropout},
          {"attention_bias", true}};
}

std::optional<std::string> cannot_hold(const ModelConfig& m) {
  if (!m.causal || m.head != Task::Lm) return "it is not a causal LM (model.head=\"lm\")";
  if (m.position != Position::Rope) return key_value(m, "model.position");
  if (m.rope.scaling_factor > 0) return key_value(m, "model.rope_scaling_factor");
  if (m.norm != NormPlacement::Pre) return key_value(m, "model.norm");
  if (m.norm_kind != NormKind::LayerNorm) return key_value(m, "model.norm_kind");
  if (!m.bias) return key_value(m, "model.bias");
  if (m.kv() != m.heads) return key_value(m, "model.kv_heads");
  if (m.gated()) return key_value(m, "model.activation");
  return std::nullopt;
}

HfTensorPlan tensors(const ModelConfig& m) {
  const int64_t n = m.hidden, f = m.ffn, v = m.vocab_size;
  HfTensorPlan p;
  auto same = [&](std::string hwt, std::string hf, std::vector<int64_t> shape) {
    p.links.push_back({std::move(hwt), HfLayout::Same, {{std::move(hf), std::move(shape)}}});
  };
  auto interleaved = [&](std::string hwt, std::string hf, std::vector<int64_t> shape) {
    p.links.push_back(
        {std::move(hwt), HfLayout::HeadsInterleaved, {{std::move(hf), std::move(shape)}}, m.heads});
  };
  auto norm = [&](const std::string& hwt, const std::string& hf) {
    same(hwt + ".weight", hf + ".weight", {n});
    same(hwt + ".bias", hf + ".bias", {n});
  };
  same("embed.tokens", "gpt_neox.embed_in.weight", {v, n});
  for (int64_t i = 0; i < m.layers; ++i) {
    const std::string h = fmt::format("gpt_neox.layers.{}.", i), l = fmt::format("layers.{}.", i);
    norm(l + "ln1", h + "input_layernorm");
    interleaved(l + "attn.qkv.weight", h + "attention.query_key_value.weight", {3 * n, n});
    interleaved(l + "attn.qkv.bias", h + "attention.query_key_value.bias", {3 * n});
    same(l + "attn.out.weight", h + "attention.dense.weight", {n, n});
    same(l + "attn.out.bias", h + "attention.dense.bias", {n});
    norm(l + "ln2", h + "post_attention_layernorm");
    same(l + "mlp.fc1.weight", h + "mlp.dense_h_to_4h.weight", {f, n});
    same(l + "mlp.fc1.bias", h + "mlp.dense_h_to_4h.bias", {f});
    same(l + "mlp.fc2.weight", h + "mlp.dense_4h_to_h.weight", {n, f});
    same(l + "mlp.fc2.bias", h + "mlp.dense_4h_to_h.bias", {n});
  }
  norm("final_ln", "gpt_neox.final_layer_norm");
  if (m.tie_embeddings)
    p.ignored.push_back("embed_out.weight");
  else
    same("head.lm.weight", "embed_out.weight", {v, n});
  return p;
}

// The causal mask, its fill value and the rotary inverse frequencies older files kept.
bool is_buffer(std::string_view name) {
  return name.ends_with(".attention.bias") || name.ends_with(".attention.masked_bias") ||
         name.ends_with(".rotary_emb.inv_freq");
}

}  // namespace

const HfArchitecture kGptNeoXCausalLm = {
    "GPTNeoXForCausalLM", "gpt_neox",  "gpt_neox.", read_config,
    write_config,         cannot_hold, tensors,     is_buffer};

}  // namespace hwt
