#include "data/hf_bpe_model.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <limits>

#include "core/error.h"
#include "data/byte_level_alphabet.h"
#include "data/hf_json.h"
#include "data/text_io.h"

namespace hwt {
namespace {

// The BPE model's vocabulary and merges, read once to build the encoder.
struct Parsed {
  std::unordered_map<std::string, int32_t> ids;
  std::vector<std::string> tokens;
  std::vector<BytePairEncoder::Merge> merges;
};

Parsed parse_vocabulary(const nlohmann::json& j, const std::string& file) {
  Parsed p;
  const auto vocab = j.find("vocab");
  if (vocab == j.end() || !vocab->is_object())
    fail_input("tokenizer.json {}: model has no \"vocab\" object", file);
  for (const auto& [token, id_json] : vocab->items()) {
    if (!id_json.is_number_integer() || id_json.get<int64_t>() < 0 ||
        id_json.get<int64_t>() >= std::numeric_limits<int32_t>::max())
      fail_input("tokenizer.json {}: model vocab token '{}' has no valid id", file, token);
    const auto id = id_json.get<int32_t>();
    if (static_cast<size_t>(id) >= p.tokens.size()) p.tokens.resize(static_cast<size_t>(id) + 1);
    if (!p.tokens[static_cast<size_t>(id)].empty() || token.empty())
      fail_input("tokenizer.json {}: model vocab id {} is used twice or names an empty token", file,
                 id);
    p.tokens[static_cast<size_t>(id)] = token;
    p.ids.emplace(token, id);
  }
  const auto merges = j.find("merges");
  if (merges == j.end() || !merges->is_array())
    fail_input("tokenizer.json {}: model has no \"merges\" list", file);
  const auto id_of = [&](const std::string& token, size_t r) {
    const auto it = p.ids.find(token);
    if (it == p.ids.end())
      fail_input("tokenizer.json {}: merge {} names '{}', which is not in the vocab", file, r,
                 to_valid_utf8(token));
    return it->second;
  };
  p.merges.reserve(merges->size());
  for (size_t r = 0; r < merges->size(); ++r) {
    const nlohmann::json& m = (*merges)[r];
    std::string left, right;
    if (m.is_string()) {  // "left right"
      const std::string s = m.get<std::string>();
      const size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
        fail_input("tokenizer.json {}: merge {} '{}' is not two tokens and a space", file, r, s);
      left = s.substr(0, space);
      right = s.substr(space + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      left = m[0].get<std::string>();
      right = m[1].get<std::string>();
    } else {
      fail_input("tokenizer.json {}: merge {} is neither \"a b\" nor [a, b]", file, r);
    }
    p.merges.push_back({id_of(left, r), id_of(right, r), id_of(left + right, r)});
  }
  return p;
}

}  // namespace

HfBpeModel::HfBpeModel(const nlohmann::json& j, bool byte_level, const std::string& file)
    : byte_level_(byte_level) {
  const std::string type = hf_type(j, file, "model");
  if (type != "BPE") fail_unsupported(file, "model", type, "BPE");
  if (hf_value<double>(j, "dropout", 0.0, file, "model") != 0.0)
    fail_unsupported(file, "model option", "dropout", "dropout null");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (!hf_value<std::string>(j, key, "", file, "model").empty())
      fail_unsupported(file, "model option", key, "an empty or null one");
  byte_fallback_ = hf_value<bool>(j, "byte_fallback", false, file, "model");
  fuse_unk_ = hf_value<bool>(j, "fuse_unk", false, file, "model");
  ignore_merges_ = hf_value<bool>(j, "ignore_merges", false, file, "model");

  Parsed p = parse_vocabulary(j, file);
  const std::string unk = hf_value<std::string>(j, "unk_token", "", file, "model");
  if (!unk.empty()) {
    const auto it = p.ids.find(unk);
    if (it == p.ids.end())
      fail_input("tokenizer.json {}: model unk_token '{}' is not in the vocab", file, unk);
    unk_ = it->second;
  }
  for (int b = 0; b < 256; ++b) {
    const std::string text = byte_level ? byte_level_text(std::string(1, static_cast<char>(b)))
                                        : fmt::format("<0x{:02X}>", b);
    const auto it = p.ids.find(text);
    if (it == p.ids.end()) {
      if (byte_level)
        fail_input("tokenizer.json {}: byte-level model vocab has no token for byte {}", file, b);
      if (byte_fallback_)
        fail_input("tokenizer.json {}: model has byte_fallback but no token {}", file, text);
      continue;
    }
    byte_tokens_[static_cast<size_t>(b)] = it->second;
  }
  if (!byte_level && !byte_fallback_ && unk_ < 0)
    fail_input(
        "tokenizer.json {}: a character-level BPE model needs byte_fallback or an unk_token "
        "(for characters its vocab lacks)",
        file);
  bpe_.emplace(byte_tokens_, p.merges, std::ssize(p.tokens), BytePairEncoder::AnyOrder{});
  for (auto& [token, id] : p.ids) ids_.emplace(token, id);
  tokens_ = std::move(p.tokens);
}

int32_t HfBpeModel::id(std::string_view token) const {
  const auto it = ids_.find(token);
  return it == ids_.end() ? -1 : it->second;
}

void HfBpeModel::encode(std::string_view piece, std::vector<int32_t>& out) const {
  if (piece.empty()) return;
  if (byte_level_) {
    if (ignore_merges_)
      if (const int32_t whole = id(byte_level_text(piece)); whole >= 0) {
        out.push_back(whole);
        return;
      }
    bpe_->encode(piece, out);
    return;
  }
  if (ignore_merges_)
    if (const int32_t whole = id(piece); whole >= 0) {
      out.push_back(whole);
      return;
    }
  std::vector<int32_t> symbols;
  symbols.reserve(piece.size());
  for (size_t i = 0; i < piece.size();) {
    const auto lead = static_cast<unsigned char>(piece[i]);
    const size_t len = lead < 0x80 ? 1 : std::max<size_t>(1, utf8_length(piece, i));
    const std::string_view ch = piece.substr(i, len);
    i += len;
    if (const int32_t t = id(ch); t >= 0) {
      symbols.push_back(t);
    } else if (byte_fallback_) {
      for (unsigned char b : ch) symbols.push_back(byte_tokens_[b]);
    } else if (!(fuse_unk_ && !symbols.empty() && symbols.back() == unk_)) {
      symbols.push_back(unk_);
    }
  }
  bpe_->merge(std::move(symbols), out);
}

}  // namespace hwt
