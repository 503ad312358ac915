#include "data/hf_tokenizer.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <limits>

#include "core/error.h"
#include "core/files.h"
#include "core/fingerprint.h"
#include "data/hf_json.h"
#include "data/text_io.h"

namespace hwt {
namespace {

nlohmann::json parse_root(const std::string& json_text, const std::string& source) {
  try {
    nlohmann::json root = nlohmann::json::parse(json_text);
    if (!root.is_object() || !root.contains("model"))
      fail_input("tokenizer.json {}: not a tokenizer.json (no \"model\")", source);
    return root;
  } catch (const nlohmann::json::exception& e) {
    fail_input("tokenizer.json {}: {}", source, e.what());
  }
}

const nlohmann::json& part(const nlohmann::json& root, const char* key) {
  static const nlohmann::json null;
  const auto it = root.find(key);
  return it == root.end() ? null : *it;
}

}  // namespace

HfTokenizer::HfTokenizer(const std::string& json_text, std::string source, bool special_in_text)
    : HfTokenizer(parse_root(json_text, source), std::move(source), fingerprint(json_text),
                  special_in_text) {
  text_ = json_text;
}

HfTokenizer::HfTokenizer(const nlohmann::json& root, std::string source, uint64_t fingerprint,
                         bool special_in_text)
    : source_(std::move(source)),
      fingerprint_(fingerprint),
      special_in_text_(special_in_text),
      normalizer_(part(root, "normalizer"), source_),
      pre_tokenizer_(part(root, "pre_tokenizer"), source_),
      model_(part(root, "model"), pre_tokenizer_.byte_level(), source_),
      added_(part(root, "added_tokens"), normalizer_, source_),
      decoder_(part(root, "decoder"), source_) {
  vocab_size_ = std::ssize(model_.tokens());
  for (const HfAddedToken& t : added_.tokens())
    vocab_size_ = std::max<int64_t>(vocab_size_, t.id + 1);
  added_index_.assign(static_cast<size_t>(vocab_size_), -1);
  for (size_t k = 0; k < added_.tokens().size(); ++k)
    added_index_[static_cast<size_t>(added_.tokens()[k].id)] = static_cast<int32_t>(k);
  for (std::string_view name : {"<|endoftext|>", "<|end_of_text|>", "</s>"})
    if (end_of_text_ < 0) end_of_text_ = added_.special_id(name);
  for (std::string_view name : {"<pad>", "<|pad|>", "[PAD]", "<|padding|>"})
    if (pad_ < 0) pad_ = added_.special_id(name);
  read_post_processor(part(root, "post_processor"));
}

void HfTokenizer::read_post_processor(const nlohmann::json& j) {
  if (j.is_null()) return;
  const std::string type = hf_type(j, source_, "post_processor");
  // An id the post-processor adds to every encoding: one of this vocabulary's.
  const auto token_id = [&](const nlohmann::json& id) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= vocab_size_)
      fail_input("tokenizer.json {}: post_processor {} adds id {}, not one of the {} tokens",
                 source_, type, id.dump(), vocab_size_);
    return static_cast<int32_t>(id.get<int64_t>());
  };
  const auto id_of = [&](const nlohmann::json& pair, const char* key) {
    // RobertaProcessing's and BertProcessing's ["<s>", 0]
    if (!pair.is_array() || pair.size() != 2 || !pair[1].is_number_integer())
      fail_input("tokenizer.json {}: post_processor {} has no [token, id] '{}'", source_, type,
                 key);
    return token_id(pair[1]);
  };
  if (type == "Sequence") {
    const auto it = j.find("processors");
    if (it == j.end() || !it->is_array())
      fail_input("tokenizer.json {}: post_processor Sequence has no \"processors\" list", source_);
    for (const nlohmann::json& p : *it) read_post_processor(p);  // a later one wraps the earlier
  } else if (type == "ByteLevel") {
    // Offsets only: no tokens.
  } else if (type == "RobertaProcessing" || type == "BertProcessing") {
    prefix_.insert(prefix_.begin(), id_of(j.value("cls", nlohmann::json()), "cls"));
    suffix_.push_back(id_of(j.value("sep", nlohmann::json()), "sep"));
  } else if (type == "TemplateProcessing") {
    const auto single = j.find("single");
    const auto specials = j.find("special_tokens");
    if (single == j.end() || !single->is_array() || specials == j.end() || !specials->is_object())
      fail_input("tokenizer.json {}: post_processor TemplateProcessing has no \"single\" template",
                 source_);
    std::vector<int32_t> before, after;
    bool seen_sequence = false;
    for (const nlohmann::json& item : *single) {
      if (item.contains("Sequence")) {
        if (item["Sequence"].value("id", "") != "A" || seen_sequence)
          fail_input(
              "tokenizer.json {}: post_processor template \"single\" must hold sequence A once",
              source_);
        seen_sequence = true;
      } else if (item.contains("SpecialToken")) {
        const std::string name = item["SpecialToken"].value("id", "");
        const auto it = specials->find(name);
        if (it == specials->end() || !it->contains("ids") || !(*it)["ids"].is_array())
          fail_input("tokenizer.json {}: post_processor special token '{}' has no ids", source_,
                     name);
        for (const nlohmann::json& id : (*it)["ids"])
          (seen_sequence ? after : before).push_back(token_id(id));
      } else {
        fail_input(
            "tokenizer.json {}: post_processor template item is neither Sequence nor "
            "SpecialToken",
            source_);
      }
    }
    prefix_.insert(prefix_.begin(), before.begin(), before.end());
    suffix_.insert(suffix_.end(), after.begin(), after.end());
  } else {
    fail_unsupported(source_, "post_processor", type,
                     "Sequence, ByteLevel, TemplateProcessing, RobertaProcessing, BertProcessing");
  }
  for (int32_t id : prefix_)
    if (id < 0 || id >= vocab_size_)
      fail_input("tokenizer.json {}: post_processor token id {} is outside the vocabulary", source_,
                 id);
  for (int32_t id : suffix_)
    if (id < 0 || id >= vocab_size_)
      fail_input("tokenizer.json {}: post_processor token id {} is outside the vocabulary", source_,
                 id);
}

std::unique_ptr<HfTokenizer> HfTokenizer::load(const std::string& path, bool special_in_text) {
  const std::string found = absolute_data_path(path);
  return std::make_unique<HfTokenizer>(read_file(found, "tokenizer.json"), found, special_in_text);
}

void HfTokenizer::encode_stretch(std::string_view text, bool at_text_start, PieceCache& cache,
                                 std::vector<int32_t>& out) const {
  std::vector<std::string> pieces;
  pre_tokenizer_.split(text, at_text_start, pieces);
  for (const std::string& piece : pieces) {
    if (!model_.byte_level()) {
      model_.encode(piece, out);
      continue;
    }
    if (cache.append(piece, out)) continue;
    const size_t first = out.size();
    model_.encode(piece, out);
    cache.add(piece, out.data() + first, out.size() - first);
  }
}

std::vector<int32_t> HfTokenizer::encode_prefix(std::string_view text, int64_t max_tokens) const {
  std::vector<int32_t> ids;
  if (max_tokens <= 0) return ids;
  const PieceCachePool::Lease lease = caches_.lease();
  for (const HfAddedTokens::Section& raw : added_.split(text, false, special_in_text_)) {
    if (std::ssize(ids) >= max_tokens) break;
    if (raw.id >= 0) {
      ids.push_back(raw.id);
      continue;
    }
    const std::string normalized = normalizer_.apply(raw.text);
    for (const HfAddedTokens::Section& s : added_.split(normalized, true, special_in_text_)) {
      if (std::ssize(ids) >= max_tokens) break;
      if (s.id >= 0)
        ids.push_back(s.id);
      else
        encode_stretch(s.text, raw.offset == 0 && s.offset == 0, lease.cache(), ids);
    }
  }
  if (std::ssize(ids) > max_tokens) ids.resize(static_cast<size_t>(max_tokens));
  return ids;
}

std::vector<int32_t> HfTokenizer::add_special_tokens(const std::vector<int32_t>& ids) const {
  std::vector<int32_t> out = prefix_;
  out.insert(out.end(), ids.begin(), ids.end());
  out.insert(out.end(), suffix_.begin(), suffix_.end());
  return out;
}

std::string HfTokenizer::decode(const std::vector<int32_t>& ids) const {
  std::vector<HfDecoder::Token> tokens;
  tokens.reserve(ids.size());
  const std::vector<std::string>& vocab = model_.tokens();
  for (int32_t id : ids) {
    HWT_CHECK(id >= 0 && id < vocab_size_, "token id {} outside vocabulary of {}", id, vocab_size_);
    const auto i = static_cast<size_t>(id);
    if (const int32_t k = added_index_[i]; k >= 0)
      tokens.push_back({added_.tokens()[static_cast<size_t>(k)].content, true});
    else if (i < vocab.size() && !vocab[i].empty())
      tokens.push_back({vocab[i], false});
  }
  return decoder_.decode(std::move(tokens));
}

std::optional<std::vector<int32_t>> json_token_ids(const nlohmann::json& j) {
  std::vector<int32_t> ids;
  for (const nlohmann::json& id : j.is_array() ? j : nlohmann::json::array({j})) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() > std::numeric_limits<int32_t>::max())
      return std::nullopt;
    ids.push_back(id.get<int32_t>());
  }
  return ids;
}

void HfTokenizer::set_stop_ids(std::vector<int32_t> ids) {
  for (const int32_t id : ids)
    if (id < 0 || id >= vocab_size_)
      fail_input("tokenizer {}: end-of-generation id {} is outside its {} tokens", source_, id,
                 vocab_size_);
  stop_ids_ = std::move(ids);
}

std::vector<int32_t> HfTokenizer::stop_ids() const {
  return stop_ids_.empty() ? Tokenizer::stop_ids() : stop_ids_;
}

nlohmann::json HfTokenizer::to_json() const {
  nlohmann::json j = {{"kind", "hf"},
                      {"vocab", source_},
                      {"special_in_text", special_in_text_},
                      {"fingerprint", fmt::format("{:016x}", fingerprint_)},
                      {"text", text_}};
  if (!stop_ids_.empty()) j["stop_ids"] = stop_ids_;
  return j;
}

std::unique_ptr<HfTokenizer> HfTokenizer::from_json(const nlohmann::json& j) {
  const std::string path = j.at("vocab").get<std::string>();
  const bool special_in_text = j.at("special_in_text").get<bool>();
  // Checkpoints written since tokenizers were embedded carry the file; older ones name it.
  auto tok = j.contains("text") ? std::make_unique<HfTokenizer>(j.at("text").get<std::string>(),
                                                                path, special_in_text)
                                : load(path, special_in_text);
  const std::string stored = j.at("fingerprint").get<std::string>();
  if (stored != fmt::format("{:016x}", tok->fingerprint_))
    fail_input(
        "tokenizer.json {} differs from the one this checkpoint was trained with (fingerprint {} "
        "vs {:016x})",
        tok->source_, stored, tok->fingerprint_);
  if (j.contains("stop_ids")) {
    const nlohmann::json& ids = j.at("stop_ids");
    std::optional<std::vector<int32_t>> stops = json_token_ids(ids);
    if (!ids.is_array() || !stops)
      fail_input("tokenizer {}: stop_ids must be a list of token ids, got {}", tok->source_,
                 ids.dump());
    tok->set_stop_ids(std::move(*stops));  // InputError for an id outside the vocabulary
  }
  return tok;
}

}  // namespace hwt
