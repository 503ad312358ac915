// BertModel, BertForSequenceClassification, BertForTokenClassification and BertForMaskedLM
// (transformers' models/bert): post-LN encoder, learned positions plus token type embeddings,
// separate query/key/value. hwt's model holds the encoder and a token classifier; it has no
// pooler (dense + tanh on [CLS]) and no masked-LM head (dense, GELU, LayerNorm, decoder), so an
// import reads past those and gives the model a fresh sequence classifier to fine-tune.
#include <fmt/format.h>

#include "interop/hf_architecture.h"

namespace hwt {
namespace {

enum class Head : uint8_t { None, Sequence, Token, MaskedLm };

HfModel read_bert(const HfConfig& c, Head head) {
  HfModel r;
  ModelConfig& m = r.model;
  m.causal = false;
  m.norm = NormPlacement::Post;
  m.position = Position::Learned;
  m.pooling = Pooling::First;
  m.vocab_size = c.integer("vocab_size", 30522);
  m.hidden = c.integer("hidden_size", 768);
  m.layers = c.integer("num_hidden_layers", 12);
  m.heads = c.integer("num_attention_heads", 12);
  m.ffn = c.integer("intermediate_size", 3072);
  m.activation = hf_activation(c, "hidden_act", "gelu", false);
  m.dropout = c.number("hidden_dropout_prob", 0.1);
  m.attn_dropout = c.number("attention_probs_dropout_prob", 0.1);
  m.max_seq = c.integer("max_position_embeddings", 512);
  m.ln_eps = c.number("layer_norm_eps", 1e-12);
  m.init_std = c.number("initializer_range", 0.02);
  if (c.string("position_embedding_type", "absolute") != "absolute")
    c.unsupported("position_embedding_type", "hwt's learned positions are absolute");
  if (c.boolean("is_decoder", false)) c.unsupported("is_decoder", "hwt's BERT is an encoder");
  if (c.integer("type_vocab_size", 2) < 1)
    c.unsupported("type_vocab_size", "the import needs token type 0's embedding");
  std::vector<std::string> labels = hf_labels(c);
  if (labels.empty())
    for (int64_t i = 0; i < c.integer("num_labels", 2); ++i)
      labels.push_back(fmt::format("LABEL_{}", i));
  if (head == Head::Token) {
    m.head = Task::Tokens;
    m.num_token_labels = static_cast<int64_t>(labels.size());
    r.token_labels = labels;
  } else {
    m.head = Task::Classify;
    m.num_labels = static_cast<int64_t>(labels.size());
    r.labels = labels;
  }
  return r;
}

nlohmann::ordered_json write_config(const ModelConfig& m, const std::vector<std::string>& labels) {
  nlohmann::ordered_json j = {
      {"vocab_size", m.vocab_size},           {"hidden_size", m.hidden},
      {"num_hidden_layers", m.layers},        {"num_attention_heads", m.heads},
      {"intermediate_size", m.ffn},           {"hidden_act", hf_activation_name(m.activation)},
      {"hidden_dropout_prob", m.dropout},     {"attention_probs_dropout_prob", m.attn_dropout},
      {"max_position_embeddings", m.max_seq}, {"type_vocab_size", 2},
      {"layer_norm_eps", m.ln_eps},           {"initializer_range", m.init_std},
      {"position_embedding_type", "absolute"}};
  write_labels(j, labels);
  return j;
}

std::optional<std::string> cannot_hold_encoder(const ModelConfig& m) {
  if (m.causal) return key_value(m, "model.causal");
  if (m.position != Position::Learned) return key_value(m, "model.position");
  if (m.norm != NormPlacement::Post) return key_value(m, "model.norm");
  if (m.norm_kind != NormKind::LayerNorm) return key_value(m, "model.norm_kind");
  if (!m.bias) return key_value(m, "model.bias");
  if (m.kv() != m.heads) return key_value(m, "model.kv_heads");
  if (m.gated()) return key_value(m, "model.activation");
  if (m.head != Task::Tokens)
    return fmt::format(
        "{}: BERT's sequence classifier reads a pooler (dense + tanh on [CLS]) that "
        "hwt's model lacks; token classifiers (model.head=\"tokens\") export",
        key_value(m, "model.head"));
  return std::nullopt;
}

// Import only: hwt's model has none of these heads to export.
std::optional<std::string> cannot_hold_import_only(const ModelConfig&) {
  return "hwt exports BERT as BertForTokenClassification only";
}

HfTensorPlan bert_tensors(const ModelConfig& m, Head head) {
  const int64_t n = m.hidden, f = m.ffn;
  const std::string b = head == Head::None ? "" : "bert.";
  HfTensorPlan p;
  auto same = [&](std::string hwt, std::string hf, std::vector<int64_t> shape) {
    p.links.push_back({std::move(hwt), HfLayout::Same, {{std::move(hf), std::move(shape)}}});
  };
  auto linear = [&](const std::string& hwt, const std::string& hf, int64_t out, int64_t in) {
    same(hwt + ".weight", hf + ".weight", {out, in});
    same(hwt + ".bias", hf + ".bias", {out});
  };
  auto norm = [&](const std::string& hwt, const std::string& hf) {
    same(hwt + ".weight", hf + ".weight", {n});
    same(hwt + ".bias", hf + ".bias", {n});
  };
  const std::string e = b + "embeddings.";
  same("embed.tokens", e + "word_embeddings.weight", {m.vocab_size, n});
  // Token types: any number of rows (type_vocab_size), of which hwt adds row 0.
  p.links.push_back({"embed.positions",
                     HfLayout::PlusFirstRow,
                     {{e + "position_embeddings.weight", {m.max_seq, n}},
                      {e + "token_type_embeddings.weight", {-1, n}}}});
  norm("embed.ln", e + "LayerNorm");
  for (int64_t i = 0; i < m.layers; ++i) {
    const std::string h = fmt::format("{}encoder.layer.{}.", b, i),
                      l = fmt::format("layers.{}.", i);
    const std::string s = h + "attention.self.";
    for (const char* part : {"weight", "bias"}) {
      std::vector<HfTensor> qkv;
      for (const char* proj : {"query", "key", "value"})
        qkv.push_back({fmt::format("{}{}.{}", s, proj, part), part == std::string_view("weight")
                                                                  ? std::vector<int64_t>{n, n}
                                                                  : std::vector<int64_t>{n}});
      p.links.push_back({l + "attn.qkv." + part, HfLayout::Stacked, std::move(qkv)});
    }
    linear(l + "attn.out", h + "attention.output.dense", n, n);
    norm(l + "ln1", h + "attention.output.LayerNorm");
    linear(l + "mlp.fc1", h + "intermediate.dense", f, n);
    linear(l + "mlp.fc2", h + "output.dense", n, f);
    norm(l + "ln2", h + "output.LayerNorm");
  }
  if (head == Head::Token) {
    linear("head.tokens", "classifier", m.num_token_labels, n);
  } else {
    p.fresh = {"head.classifier.weight", "head.classifier.bias"};
    p.dropped = {"pooler.", "bert.pooler.", "cls.", "classifier."};
  }
  return p;
}

// position_ids, which files saved before transformers 4.31 kept as a buffer.
bool is_buffer(std::string_view name) {
  return name.ends_with("embeddings.position_ids");
}

template <Head H>
HfModel read_config(const HfConfig& c) {
  return read_bert(c, H);
}
template <Head H>
HfTensorPlan tensors(const ModelConfig& m) {
  return bert_tensors(m, H);
}

}  // namespace

const HfArchitecture kBertModel = {"BertModel",
                                   "bert",
                                   "bert.",
                                   read_config<Head::None>,
                                   write_config,
                                   cannot_hold_import_only,
                                   tensors<Head::None>,
                                   is_buffer};
const HfArchitecture kBertSequenceClassifier = {
    "BertForSequenceClassification", "bert",       "bert.",
    read_config<Head::Sequence>,     write_config, cannot_hold_import_only,
    tensors<Head::Sequence>,         is_buffer};
const HfArchitecture kBertTokenClassifier = {
    "BertForTokenClassification", "bert",       "bert.",
    read_config<Head::Token>,     write_config, cannot_hold_encoder,
    tensors<Head::Token>,         is_buffer};
const HfArchitecture kBertMaskedLm = {
    "BertForMaskedLM",           "bert",       "bert.",
    read_config<Head::MaskedLm>, write_config, cannot_hold_import_only,
    tensors<Head::MaskedLm>,     is_buffer};

}  // namespace hwt
