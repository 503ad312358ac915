#include "interop/hf_architecture.h"

#include <fmt/format.h>

#include "config/run_config.h"
#include "core/error.h"

namespace hwt {

const std::vector<const HfArchitecture*>& hf_architectures() {
  // Exports try them in this order: Llama before Mistral (which it equals for hwt's models).
  static const std::vector<const HfArchitecture*> all = {
      &kGpt2LmHead,          &kLlamaCausalLm, &kQwen2CausalLm,          &kGptNeoXCausalLm,
      &kBertTokenClassifier, &kBertModel,     &kBertSequenceClassifier, &kBertMaskedLm,
      &kMistralCausalLm};
  return all;
}

const HfArchitecture& hf_architecture(std::string_view name, const std::string& config_path) {
  std::string known;
  for (const HfArchitecture* a : hf_architectures()) {
    if (a->name == name) return *a;
    known += fmt::format("{}{}", known.empty() ? "" : ", ", a->name);
  }
  fail_input("config.json {}: architecture '{}' is not supported (hwt reads {})", config_path, name,
             known);
}

const HfArchitecture& hf_architecture_for(const ModelConfig& m) {
  if (const std::optional<std::string> why = not_plain(m))
    fail_input("export: no Hugging Face architecture holds this model: {}", *why);
  // The family a model belongs to decides whose reason an unexportable model hears.
  const HfArchitecture* family = !m.causal                          ? &kBertTokenClassifier
                                 : m.position == Position::Learned  ? &kGpt2LmHead
                                 : m.norm_kind == NormKind::RmsNorm ? &kLlamaCausalLm
                                                                    : &kGptNeoXCausalLm;
  for (const HfArchitecture* a : hf_architectures())
    if (!a->cannot_hold(m)) return *a;
  fail_input("export: no Hugging Face architecture holds this model ({} cannot: {})", family->name,
             *family->cannot_hold(m));
}

Activation hf_activation(const HfConfig& c, std::string_view key, const std::string& fallback,
                         bool gated) {
  const std::string name = c.string(key, fallback);
  if (gated) {
    if (name == "silu" || name == "swish") return Activation::SwiGlu;
    if (name == "gelu_pytorch_tanh" || name == "gelu_new") return Activation::GeGlu;
    c.unsupported(key, "hwt's gated MLPs use silu or gelu_pytorch_tanh");
  }
  if (name == "gelu") return Activation::Gelu;
  // The tanh approximation under its names (gelu_fast writes the same formula).
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast")
    return Activation::GeluTanh;
  if (name == "relu") return Activation::Relu;
  c.unsupported(key, "hwt's MLPs use gelu, gelu_new (tanh) or relu");
}

std::string hf_activation_name(Activation a) {
  switch (a) {
    case Activation::Gelu:
      return "gelu";
    case Activation::GeluTanh:
      return "gelu_new";
    case Activation::Relu:
      return "relu";
    case Activation::SwiGlu:
      return "silu";
    case Activation::GeGlu:
      return "gelu_pytorch_tanh";
    case Activation::None:
      break;
  }
  HWT_CHECK(false, "activation without a Hugging Face name");
  return "";
}

std::vector<std::string> hf_labels(const HfConfig& c) {
  const nlohmann::json& id2label = c.object("id2label");
  std::vector<std::string> names(id2label.is_null() ? 0 : id2label.size());
  if (id2label.is_null()) return names;
  for (const auto& [id, label] : id2label.items()) {
    size_t at = names.size();
    try {
      at = std::stoul(id);
    } catch (const std::exception&) {
    }
    if (at >= names.size() || !label.is_string() || !names[at].empty())
      c.unsupported("id2label", "ids must be 0..n-1, each with a label name");
    names[at] = label.get<std::string>();
  }
  return names;
}

void write_labels(nlohmann::ordered_json& j, const std::vector<std::string>& labels) {
  nlohmann::ordered_json id2label = nlohmann::ordered_json::object(),
                         label2id = nlohmann::ordered_json::object();
  for (size_t i = 0; i < labels.size(); ++i) {
    id2label[std::to_string(i)] = labels[i];
    label2id[labels[i]] = i;
  }
  j["id2label"] = id2label;
  j["label2id"] = label2id;
}

std::string key_value(const ModelConfig& m, const char* key) {
  RunConfig c;
  c.model = m;
  return fmt::format("{}={}", key, to_json(c).at(key).dump());
}

std::optional<std::string> not_plain(const ModelConfig& m) {
  if (m.tt.embedding.enabled() || m.tt.attention.enabled() || m.tt.ffn.enabled())
    return "its layers are tensor trains (model.tt); Hugging Face models are dense";
  if (m.qk_norm) return key_value(m, "model.qk_norm");
  return std::nullopt;
}

}  // namespace hwt
