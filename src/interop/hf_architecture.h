// The Hugging Face architectures hwt reads and writes: for each, how its config.json maps onto
// hwt's ModelConfig and how its tensors (names, shapes, layouts) map onto hwt's parameters.
// One file per family holds its mapping (gpt2_mapping.cpp, bert_mapping.cpp,
// llama_mapping.cpp for Llama, Mistral and Qwen2, gpt_neox_mapping.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/model_config.h"
#include "interop/hf_config.h"

namespace hwt {

// How an hwt parameter's values lie in the Hugging Face tensors it is made of.
enum class HfLayout : uint8_t {
  Same,        // one tensor of the same shape
  Transposed,  // one matrix stored [in, out] (GPT-2's Conv1D)
  Stacked,     // several tensors whose rows follow one another (q | k | v, gate | up)
  // One tensor whose rows are, head by head, that head's q, k and v rows (GPT-NeoX's
  // query_key_value); hwt's are all q heads, then all k, then all v.
  HeadsInterleaved,
  // The first tensor plus row 0 of the second added to each row (BERT's positions plus the
  // token type 0 embedding, which every single-segment input adds); written back as the first
  // tensor and zero token type rows.
  PlusFirstRow,
};

struct HfTensor {
  std::string name;
  std::vector<int64_t> shape;
};

// One hwt parameter and the Hugging Face tensors it comes from.
struct TensorLink {
  std::string hwt;
  HfLayout layout = HfLayout::Same;
  std::vector<HfTensor> hf;
  int64_t heads = 0;  // HeadsInterleaved
};

struct HfTensorPlan {
  std::vector<TensorLink> links;
  // Name prefixes of Hugging Face tensors that hwt's model has no place for (a head it lacks):
  // an import reads past them and says so.
  std::vector<std::string> dropped;
  // hwt parameters no Hugging Face tensor holds (a head the architecture lacks): an import
  // initialises them as `hwt train` would and says so.
  std::vector<std::string> fresh;
  // Names a file may hold that carry nothing new (a tied LM head stored anyway): skipped.
  std::vector<std::string> ignored;
};

// What a config.json describes, in hwt's terms.
struct HfModel {
  ModelConfig model;
  std::vector<std::string> labels, token_labels;  // id2label, for the head that has them
  std::vector<std::string> notes;                 // what the import changed or left out
};

struct HfArchitecture {
  std::string_view name;        // config.json "architectures": "LlamaForCausalLM"
  std::string_view model_type;  // config.json "model_type": "llama"
  // Where the model's base lies in tensor names ("model.", "bert."); files saved from the base
  // class alone ("gpt2", BertModel) leave it off, and an import accepts both.
  std::string_view base_prefix;
  // config.json into hwt's model; InputError naming a field whose value hwt cannot hold.
  HfModel (*read_config)(const HfConfig& c);
  // hwt's model into config.json's fields (without architectures, model_type, torch_dtype).
  nlohmann::ordered_json (*write_config)(const ModelConfig& m,
                                         const std::vector<std::string>& labels);
  // Why this architecture cannot hold `m`, or nullopt when it can.
  std::optional<std::string> (*cannot_hold)(const ModelConfig& m);
  HfTensorPlan (*tensors)(const ModelConfig& m);
  // Non-parameter tensors that older files hold (GPT-2's attn.bias mask, rotary inv_freq).
  bool (*is_buffer)(std::string_view name);
};

// The architecture named by config.json's "architectures"; InputError when hwt has no mapping.
const HfArchitecture& hf_architecture(std::string_view name, const std::string& config_path);

// The architecture an export writes `m` as; InputError saying why none holds it.
const HfArchitecture& hf_architecture_for(const ModelConfig& m);

// The architectures, in the order exports try them.
const std::vector<const HfArchitecture*>& hf_architectures();

// Shared pieces of the mappings.

// hidden_act / activation_function into hwt's activation; gated: the MLP multiplies by an up
// projection (Llama's family), so "silu" is SwiGLU.
Activation hf_activation(const HfConfig& c, std::string_view key, const std::string& fallback,
                         bool gated);
std::string hf_activation_name(Activation a);
// id2label as names in id order (empty when absent).
std::vector<std::string> hf_labels(const HfConfig& c);
void write_labels(nlohmann::ordered_json& j, const std::vector<std::string>& labels);
// "model.activation=\"swiglu\"": a model key and its value as hwt's config shows them, for
// the reasons cannot_hold gives.
std::string key_value(const ModelConfig& m, const char* key);
// The reason a model that is not a plain dense transformer cannot be exported (tensor-train
// layers, QK-norm), or nullopt.
std::optional<std::string> not_plain(const ModelConfig& m);

// The architectures (defined in their mapping files).
extern const HfArchitecture kGpt2LmHead, kBertModel, kBertSequenceClassifier, kBertTokenClassifier,
    kBertMaskedLm, kLlamaCausalLm, kMistralCausalLm, kQwen2CausalLm, kGptNeoXCausalLm;

}  // namespace hwt
