#include "data/hf_decoder.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data/byte_level_alphabet.h"
#include "data/hf_json.h"
#include "data/hf_normalizer.h"
#include "data/text_io.h"

namespace hwt {
namespace {

constexpr std::string_view kSupported =
    "Sequence, ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace";

// Token text in GPT-2's byte alphabet back to bytes; other characters stay as they are.
std::string byte_level_bytes(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const size_t len = lead < 0x80 ? 1 : utf8_length(text, i);
    if (len == 2) {
      const uint32_t cp = (lead & 0x1Fu) << 6 | (static_cast<unsigned char>(text[i + 1]) & 0x3Fu);
      if (const int b = byte_level_byte(cp); b >= 0) {
        out += static_cast<char>(b);
        i += 2;
        continue;
      }
    } else if (len == 1) {
      if (const int b = byte_level_byte(lead); b >= 0) {
        out += static_cast<char>(b);
        ++i;
        continue;
      }
    }
    const size_t n = std::max<size_t>(len, 1);
    out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

// The byte of a "<0xNN>" token, -1 for any other token.
int fallback_byte(std::string_view t) {
  if (t.size() != 6 || !t.starts_with("<0x") || t.back() != '>') return -1;
  int value = 0;
  for (char c : t.substr(3, 2)) {
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    value = value * 16 + d;
  }
  return value;
}

// The first `n` UTF-8 characters of `s` equal to `c`, in bytes.
size_t strip_count(std::string_view s, std::string_view c, size_t n, bool from_end) {
  size_t cut = 0;
  for (size_t k = 0; k < n; ++k) {
    const std::string_view rest = from_end ? s.substr(0, s.size() - cut) : s.substr(cut);
    if (from_end ? !rest.ends_with(c) : !rest.starts_with(c)) break;
    cut += c.size();
  }
  return cut;
}

}  // namespace

HfDecoder::HfDecoder(const nlohmann::json& j, const std::string& file) {
  if (j.is_null())
    join_with_spaces_ = true;
  else
    add(j, file);
}

void HfDecoder::add(const nlohmann::json& j, const std::string& file) {
  const std::string type = hf_type(j, file, "decoder");
  Step step;
  if (type == "Sequence") {
    const auto it = j.find("decoders");
    if (it == j.end() || !it->is_array())
      fail_input("tokenizer.json {}: decoder Sequence has no \"decoders\" list", file);
    for (const nlohmann::json& s : *it) add(s, file);
    return;
  }
  if (type == "ByteLevel") {
    step.kind = Kind::ByteLevel;
  } else if (type == "Replace") {
    step.kind = Kind::Replace;
    step.from = hf_string_pattern(j.value("pattern", nlohmann::json()), file, "decoder Replace");
    step.to = hf_value<std::string>(j, "content", "", file, "decoder Replace");
  } else if (type == "ByteFallback") {
    step.kind = Kind::ByteFallback;
  } else if (type == "Fuse") {
    step.kind = Kind::Fuse;
  } else if (type == "Strip") {
    step.kind = Kind::Strip;
    step.to = hf_value<std::string>(j, "content", " ", file, "decoder Strip");
    step.start = static_cast<size_t>(
        std::max<int64_t>(0, hf_value<int64_t>(j, "start", 0, file, "decoder Strip")));
    step.stop = static_cast<size_t>(
        std::max<int64_t>(0, hf_value<int64_t>(j, "stop", 0, file, "decoder Strip")));
  } else if (type == "Metaspace") {
    step.kind = Kind::Metaspace;
    step.from = hf_value<std::string>(j, "replacement", "\u2581", file, "decoder Metaspace");
    const bool add_prefix = hf_value<bool>(j, "add_prefix_space", true, file, "decoder Metaspace");
    step.strip_first_space =
        hf_value<std::string>(j, "prepend_scheme", add_prefix ? "always" : "never", file,
                              "decoder Metaspace") != "never";
  } else {
    fail_unsupported(file, "decoder", type, kSupported);
  }
  steps_.push_back(std::move(step));
}

void HfDecoder::apply(const Step& step, std::vector<Token>& tokens) {
  switch (step.kind) {
    case Kind::ByteLevel:
      for (Token& t : tokens)
        if (!t.added) t.text = byte_level_bytes(t.text);
      return;
    case Kind::Replace:
      for (Token& t : tokens) t.text = replace_all(t.text, step.from, step.to);
      return;
    case Kind::ByteFallback: {
      std::vector<Token> out;
      bool in_bytes = false;  // out.back() gathers a run of byte tokens
      for (Token& t : tokens) {
        const int b = fallback_byte(t.text);
        if (b < 0) {
          out.push_back(std::move(t));
          in_bytes = false;
          continue;
        }
        if (!in_bytes) out.push_back({});
        out.back().text += static_cast<char>(b);
        in_bytes = true;
      }
      tokens = std::move(out);
      return;
    }
    case Kind::Fuse: {
      Token all;
      for (const Token& t : tokens) all.text += t.text;
      tokens.assign(1, std::move(all));
      return;
    }
    case Kind::Strip:
      for (Token& t : tokens) {
        const size_t head = strip_count(t.text, step.to, step.start, false);
        t.text.erase(0, head);
        t.text.resize(t.text.size() - strip_count(t.text, step.to, step.stop, true));
      }
      return;
    case Kind::Metaspace:
      for (size_t i = 0; i < tokens.size(); ++i) {
        tokens[i].text = replace_all(tokens[i].text, step.from, " ");
        if (i == 0 && step.strip_first_space && tokens[i].text.starts_with(' '))
          tokens[i].text.erase(0, 1);
      }
      return;
  }
}

std::string HfDecoder::decode(std::vector<Token> tokens) const {
  std::string out;
  if (join_with_spaces_) {
    for (size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i].text;
    return out;
  }
  for (const Step& step : steps_) apply(step, tokens);
  for (const Token& t : tokens) out += t.text;
  return out;
}

}  // namespace hwt
