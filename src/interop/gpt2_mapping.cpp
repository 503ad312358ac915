// GPT2LMHeadModel (transformers' models/gpt2): learned positions, pre-LN, fused c_attn whose
// Conv1D weights are stored [in, out], the transpose of hwt's [out, in].
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
  m.position = Position::Learned;
  m.vocab_size = c.integer("vocab_size", 50257);
  m.max_seq = c.integer("n_positions", 1024);
  m.hidden = c.integer("n_embd", 768);
  m.layers = c.integer("n_layer", 12);
  m.heads = c.integer("n_head", 12);
  m.ffn = c.integer("n_inner", 4 * m.hidden);
  m.activation = hf_activation(c, "activation_function", "gelu_new", false);
  m.dropout = c.number("resid_pdrop", 0.1);
  m.attn_dropout = c.number("attn_pdrop", 0.1);
  m.ln_eps = c.number("layer_norm_epsilon", 1e-5);
  m.init_std = c.number("initializer_range", 0.02);
  m.tie_embeddings = c.boolean("tie_word_embeddings", true);
  if (!c.boolean("scale_attn_weights", true))
    c.unsupported("scale_attn_weights", "hwt always scales attention by 1/sqrt(head_dim)");
  if (c.boolean("scale_attn_by_inverse_layer_idx", false))
    c.unsupported("scale_attn_by_inverse_layer_idx", "hwt scales every layer alike");
  if (c.number("embd_pdrop", m.dropout) != m.dropout)
    r.notes.push_back(
        fmt::format("embd_pdrop={} differs from resid_pdrop: hwt's model.dropout={} "
                    "applies to both",
                    c.number("embd_pdrop", 0), m.dropout));
  return r;
}

nlohmann::ordered_json write_config(const ModelConfig& m, const std::vector<std::string>&) {
  return {{"vocab_size", m.vocab_size},
          {"n_positions", m.max_seq},
          {"n_embd", m.hidden},
          {"n_layer", m.layers},
          {"n_head", m.heads},
          {"n_inner", m.ffn},
          {"activation_function", hf_activation_name(m.activation)},
          {"resid_pdrop", m.dropout},
          {"embd_pdrop", m.dropout},
          {"attn_pdrop", m.attn_dropout},
          {"layer_norm_epsilon", m.ln_eps},
          {"initializer_range", m.init_std},
          {"scale_attn_weights", true},
          {"tie_word_embeddings", m.tie_embeddings}};
}

std::optional<std::string> cannot_hold(const ModelConfig& m) {
  if (!m.causal || m.head != Task::Lm) return "it is not a causal LM (model.head=\"lm\")";
  if (m.position != Position::Learned) return key_value(m, "model.position");
  if (m.norm != NormPlacement::Pre) return key_value(m, "model.norm");
  if (m.norm_kind != NormKind::LayerNorm) return key_value(m, "model.norm_kind");
  if (m.parallel_residual) return key_value(m, "model.parallel_residual");
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
  auto conv1d = [&](std::string hwt, std::string hf, std::vector<int64_t> in_out) {
    p.links.push_back({std::move(hwt), HfLayout::Transposed, {{std::move(hf), std::move(in_out)}}});
  };
  same("embed.tokens", "transformer.wte.weight", {v, n});
  same("embed.positions", "transformer.wpe.weight", {m.max_seq, n});
  for (int64_t i = 0; i < m.layers; ++i) {
    const std::string h = fmt::format("transformer.h.{}.", i), l = fmt::format("layers.{}.", i);
    for (const auto& [ours, theirs] : {std::pair{"ln1", "ln_1"}, std::pair{"ln2", "ln_2"}}) {
      same(l + ours + ".weight", h + theirs + ".weight", {n});
      same(l + ours + ".bias", h + theirs + ".bias", {n});
    }
    conv1d(l + "attn.qkv.weight", h + "attn.c_attn.weight", {n, 3 * n});
    same(l + "attn.qkv.bias", h + "attn.c_attn.bias", {3 * n});
    conv1d(l + "attn.out.weight", h + "attn.c_proj.weight", {n, n});
    same(l + "attn.out.bias", h + "attn.c_proj.bias", {n});
    conv1d(l + "mlp.fc1.weight", h + "mlp.c_fc.weight", {n, f});
    same(l + "mlp.fc1.bias", h + "mlp.c_fc.bias", {f});
    conv1d(l + "mlp.fc2.weight", h + "mlp.c_proj.weight", {f, n});
    same(l + "mlp.fc2.bias", h + "mlp.c_proj.bias", {n});
  }
  same("final_ln.weight", "transformer.ln_f.weight", {n});
  same("final_ln.bias", "transformer.ln_f.bias", {n});
  if (m.tie_embeddings)
    p.ignored.push_back("lm_head.weight");
  else
    same("head.lm.weight", "lm_head.weight", {v, n});
  return p;
}

// The causal mask (attn.bias) and its fill value (attn.masked_bias) that files saved before
// transformers 4.x kept as buffers.
bool is_buffer(std::string_view name) {
  return name.ends_with(".attn.bias") || name.ends_with(".attn.masked_bias");
}

}  // namespace

const HfArchitecture kGpt2LmHead = {"GPT2LMHeadModel", "gpt2",      "transformer.", read_config,
                                    write_config,      cannot_hold, tensors,        is_buffer};

}  // namespace hwt
