// LlamaForCausalLM, MistralForCausalLM and Qwen2ForCausalLM (transformers' models/llama,
// mistral, qwen2), which name their tensors alike: RMSNorm, rotary positions on whole heads in
// rotate_half order (the first half of each head turns with the second, as hwt's rope does, so
// q and k rows keep their order), separate q/k/v projections (grouped K/V heads) and a SwiGLU
// MLP of gate, up and down projections.
#include <fmt/format.h>

#include "interop/hf_architecture.h"

namespace hwt {
namespace {

enum class Family : uint8_t { Llama, Mistral, Qwen2 };

// rope_theta and rope_scaling, or transformers 5's rope_parameters holding both.
void read_rope(const HfConfig& c, RopeConfig& rope) {
  const bool v5 = c.has("rope_parameters");
  const char* scaling_key = v5 ? "rope_parameters" : "rope_scaling";
  const HfConfig scaling(c.object(scaling_key), c.path());
  rope.theta = v5 ? scaling.number("rope_theta", 10000) : c.number("rope_theta", 10000);
  if (scaling.json().is_null()) return;
  const std::string type = scaling.string("rope_type", scaling.string("type", "default"));
  if (type == "default") return;
  if (type != "llama3")
    c.unsupported(scaling_key, fmt::format("rope scaling type '{}' is not supported (hwt "
                                           "knows llama3)",
                                           type));
  rope.scaling_factor = scaling.number("factor", 8);
  rope.low_freq_factor = scaling.number("low_freq_factor", 1);
  rope.high_freq_factor = scaling.number("high_freq_factor", 4);
  rope.original_max_seq = scaling.integer("original_max_position_embeddings", 8192);
}

HfModel read_family(const HfConfig& c, Family family) {
  HfModel r;
  ModelConfig& m = r.model;
  m.head = Task::Lm;
  m.causal = true;
  m.norm = NormPlacement::Pre;
  m.norm_kind = NormKind::RmsNorm;
  m.position = Position::Rope;
  const bool qwen = family == Family::Qwen2, mistral = family == Family::Mistral;
  m.vocab_size = c.integer("vocab_size", qwen ? 151936 : 32000);
  m.hidden = c.integer("hidden_size", 4096);
  m.ffn = c.integer("intermediate_size", qwen ? 22016 : mistral ? 14336 : 11008);
  m.layers = c.integer("num_hidden_layers", 32);
  m.heads = c.integer("num_attention_heads", 32);
  m.kv_heads = c.integer("num_key_value_heads", mistral ? 8 : m.heads);
  if (m.kv_heads == m.heads) m.kv_heads = 0;  // hwt's "as many as heads"
  m.max_seq = c.integer("max_position_embeddings", qwen ? 32768 : mistral ? 131072 : 2048);
  m.activation = hf_activation(c, "hidden_act", "silu", true);
  m.ln_eps = c.number("rms_norm_eps", 1e-6);
  m.init_std = c.number("initializer_range", 0.02);
  m.tie_embeddings = c.boolean("tie_word_embeddings", false);
  m.dropout = 0;  // these models have no dropout on the residual stream
  m.attn_dropout = c.number("attention_dropout", 0);
  read_rope(c, m.rope);
  if (m.heads > 0 && m.hidden % m.heads == 0 &&
      c.integer("head_dim", m.hidden / m.heads) != m.hidden / m.heads)
    c.unsupported("head_dim", fmt::format("hwt's heads are hidden_size / num_attention_heads = {} "
                                          "wide",
                                          m.hidden / m.heads));
  if (qwen) {  // Qwen2's q, k and v projections have biases, nothing else has
    m.bias = false;
    m.qkv_bias = true;
    if (c.boolean("use_sliding_window", false))
      c.unsupported("use_sliding_window", "hwt's attention has no sliding window");
  } else {
    const bool attention_bias = c.boolean("attention_bias", false);
    if (c.boolean("mlp_bias", false) != attention_bias)
      c.unsupported("mlp_bias",
                    "hwt's model.bias gives the attention and the MLP biases alike, "
                    "so mlp_bias must equal attention_bias");
    m.bias = attention_bias;
  }
  // Mistral attends to the last sliding_window tokens only: identical for sequences no longer
  // than the window, so the import keeps its sequences that short.
  if (mistral && c.has("sliding_window") && c.integer("sliding_window", 0) < m.max_seq) {
    m.max_seq = c.integer("sliding_window", 0);
    r.notes.push_back(
        fmt::format("model.max_seq={}: Mistral's sliding window, within which its "
                    "attention is hwt's",
                    m.max_seq));
  }
  return r;
}

nlohmann::ordered_json write_family(const ModelConfig& m, Family family) {
  nlohmann::ordered_json j = {{"vocab_size", m.vocab_size},
                              {"hidden_size", m.hidden},
                              {"intermediate_size", m.ffn},
                              {"num_hidden_layers", m.layers},
                              {"num_attention_heads", m.heads},
                              {"num_key_value_heads", m.kv()},
                              {"head_dim", m.head_dim()},
                              {"hidden_act", hf_activation_name(m.activation)},
                              {"max_position_embeddings", m.max_seq},
                              {"rms_norm_eps", m.ln_eps},
                              {"initializer_range", m.init_std},
                              {"tie_word_embeddings", m.tie_embeddings},
                              {"attention_dropout", m.attn_dropout},
                              {"rope_theta", m.rope.theta}};
  const RopeConfig& r = m.rope;
  j["rope_scaling"] =
      r.scaling_factor > 0
          ? nlohmann::ordered_json{{"rope_type", "llama3"},
                                   {"factor", r.scaling_factor},
                                   {"low_freq_factor", r.low_freq_factor},
                                   {"high_freq_factor", r.high_freq_factor},
                                   {"original_max_position_embeddings", r.original_max_seq}}
          : nullptr;
  if (family == Family::Qwen2) {
    j["use_sliding_window"] = false;
  } else {
    j["attention_bias"] = m.bias;
    j["mlp_bias"] = m.bias;
  }
  if (family == Family::Mistral) j["sliding_window"] = nullptr;
  return j;
}

std::optional<std::string> cannot_hold_family(const ModelConfig& m, Family family) {
  if (!m.causal || m.head != Task::Lm) return "it is not a causal LM (model.head=\"lm\")";
  if (m.position != Position::Rope) return key_value(m, "model.position");
  if (m.rope.fraction != 1.0) return key_value(m, "model.rotary_fraction");
  if (m.norm != NormPlacement::Pre) return key_value(m, "model.norm");
  if (m.norm_kind != NormKind::RmsNorm) return key_value(m, "model.norm_kind");
  if (m.parallel_residual) return key_value(m, "model.parallel_residual");
  if (!m.gated()) return key_value(m, "model.activation");
  const bool qkv_only = !m.bias && m.qkv_bias;
  if (family == Family::Qwen2 && !qkv_only) return "Qwen2 has biases on q, k and v only";
  if (family != Family::Qwen2 && qkv_only)
    return "biases on q, k and v only are Qwen2's (model.qkv_bias=true with model.bias=false)";
  if (family == Family::Mistral && m.bias) return key_value(m, "model.bias");
  return std::nullopt;
}

HfTensorPlan family_tensors(const ModelConfig& m) {
  const int64_t n = m.hidden, f = m.ffn, v = m.vocab_size, q = m.heads * m.head_dim(),
                kv = m.kv() * m.head_dim();
  HfTensorPlan p;
  auto same = [&](std::string hwt, std::string hf, std::vector<int64_t> shape) {
    p.links.push_back({std::move(hwt), HfLayout::Same, {{std::move(hf), std::move(shape)}}});
  };
  auto stacked = [&](std::string hwt, std::vector<HfTensor> parts) {
    p.links.push_back({std::move(hwt), HfLayout::Stacked, std::move(parts)});
  };
  same("embed.tokens", "model.embed_tokens.weight", {v, n});
  for (int64_t i = 0; i < m.layers; ++i) {
    const std::string h = fmt::format("model.layers.{}.", i), l = fmt::format("layers.{}.", i);
    const std::string a = h + "self_attn.", mlp = h + "mlp.";
    same(l + "ln1.weight", h + "input_layernorm.weight", {n});
    stacked(l + "attn.qkv.weight", {{a + "q_proj.weight", {q, n}},
                                    {a + "k_proj.weight", {kv, n}},
                                    {a + "v_proj.weight", {kv, n}}});
    if (m.has_qkv_bias())
      stacked(l + "attn.qkv.bias",
              {{a + "q_proj.bias", {q}}, {a + "k_proj.bias", {kv}}, {a + "v_proj.bias", {kv}}});
    same(l + "attn.out.weight", a + "o_proj.weight", {n, q});
    if (m.bias) same(l + "attn.out.bias", a + "o_proj.bias", {n});
    same(l + "ln2.weight", h + "post_attention_layernorm.weight", {n});
    stacked(l + "mlp.fc1.weight",
            {{mlp + "gate_proj.weight", {f, n}}, {mlp + "up_proj.weight", {f, n}}});
    if (m.bias)
      stacked(l + "mlp.fc1.bias", {{mlp + "gate_proj.bias", {f}}, {mlp + "up_proj.bias", {f}}});
    same(l + "mlp.fc2.weight", mlp + "down_proj.weight", {n, f});
    if (m.bias) same(l + "mlp.fc2.bias", mlp + "down_proj.bias", {n});
  }
  same("final_ln.weight", "model.norm.weight", {n});
  if (m.tie_embeddings)
    p.ignored.push_back("lm_head.weight");
  else
    same("head.lm.weight", "lm_head.weight", {v, n});
  return p;
}

// The rotary inverse frequencies files saved before transformers 4.31 kept as buffers.
bool is_buffer(std::string_view name) {
  return name.ends_with(".rotary_emb.inv_freq");
}

template <Family F>
HfModel read_config(const HfConfig& c) {
  return read_family(c, F);
}
template <Family F>
nlohmann::ordered_json write_config(const ModelConfig& m, const std::vector<std::string>&) {
  return write_family(m, F);
}
template <Family F>
std::optional<std::string> cannot_hold(const ModelConfig& m) {
  return cannot_hold_family(m, F);
}

}  // namespace

const HfArchitecture kLlamaCausalLm = {"LlamaForCausalLM",
                                       "llama",
                                       "model.",
                                       read_config<Family::Llama>,
                                       write_config<Family::Llama>,
                                       cannot_hold<Family::Llama>,
                                       family_tensors,
                                       is_buffer};
const HfArchitecture kMistralCausalLm = {"MistralForCausalLM",
                                         "mistral",
                                         "model.",
                                         read_config<Family::Mistral>,
                                         write_config<Family::Mistral>,
                                         cannot_hold<Family::Mistral>,
                                         family_tensors,
                                         is_buffer};
const HfArchitecture kQwen2CausalLm = {"Qwen2ForCausalLM",
                                       "qwen2",
                                       "model.",
                                       read_config<Family::Qwen2>,
                                       write_config<Family::Qwen2>,
                                       cannot_hold<Family::Qwen2>,
                                       family_tensors,
                                       is_buffer};

}  // namespace hwt
