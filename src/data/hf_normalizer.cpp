#include "data/hf_normalizer.h"

#include <utf8proc.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <memory>

#include "core/error.h"
#include "data/hf_json.h"
#include "data/text_io.h"

namespace hwt {
namespace {

constexpr std::string_view kSupported = "Sequence, Prepend, Replace (String), NFC, NFD, NFKC, NFKD";

// Unicode normalisation of the valid UTF-8 runs of `text`; other bytes are kept as they are
// (tokenizers never sees them: it takes decoded strings).
std::string normalize_unicode(std::string_view text, int options) {
  std::string out;
  size_t run = 0;  // start of the current valid run
  const auto flush = [&](size_t end) {
    if (end == run) return;
    utf8proc_uint8_t* mapped = nullptr;
    const utf8proc_ssize_t n = utf8proc_map(
        reinterpret_cast<const utf8proc_uint8_t*>(text.data() + run),
        static_cast<utf8proc_ssize_t>(end - run), &mapped, static_cast<utf8proc_option_t>(options));
    const std::unique_ptr<utf8proc_uint8_t, void (*)(void*)> owned(mapped, std::free);
    HWT_CHECK(n >= 0, "utf8proc_map failed on valid UTF-8: {}", utf8proc_errmsg(n));
    out.append(reinterpret_cast<const char*>(mapped), static_cast<size_t>(n));
  };
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t len = c < 0x80 ? 1 : utf8_length(text, i);
    if (len > 0) {
      i += len;
      continue;
    }
    flush(i);
    out += text[i];
    run = ++i;
  }
  flush(text.size());
  return out;
}

}  // namespace

std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0;;) {
    const size_t at = text.find(from, pos);
    if (at == std::string_view::npos) {
      out.append(text.substr(pos));
      return out;
    }
    out.append(text.substr(pos, at - pos));
    out.append(to);
    pos = at + from.size();
  }
}

std::string hf_string_pattern(const nlohmann::json& pattern, const std::string& file,
                              std::string_view part) {
  if (pattern.is_object() && pattern.contains("String") && pattern["String"].is_string()) {
    std::string s = pattern["String"].get<std::string>();
    if (s.empty()) fail_input("tokenizer.json {}: {} has an empty String pattern", file, part);
    return s;
  }
  if (pattern.is_object() && pattern.contains("Regex"))
    fail_unsupported(file, std::string(part) + " pattern", "Regex", "String");
  fail_input("tokenizer.json {}: {} has no pattern {{\"String\": ...}}", file, part);
}

HfNormalizer::HfNormalizer(const nlohmann::json& j, const std::string& file) {
  if (!j.is_null()) add(j, file);
}

void HfNormalizer::add(const nlohmann::json& j, const std::string& file) {
  const std::string type = hf_type(j, file, "normalizer");
  if (type == "Sequence") {
    const auto it = j.find("normalizers");
    if (it == j.end() || !it->is_array())
      fail_input("tokenizer.json {}: normalizer Sequence has no \"normalizers\" list", file);
    for (const nlohmann::json& step : *it) add(step, file);
  } else if (type == "Prepend") {
    steps_.push_back(
        {Kind::Prepend, hf_value<std::string>(j, "prepend", "", file, "Prepend"), "", 0});
  } else if (type == "Replace") {
    steps_.push_back(
        {Kind::Replace,
         hf_string_pattern(j.value("pattern", nlohmann::json()), file, "normalizer Replace"),
         hf_value<std::string>(j, "content", "", file, "Replace"), 0});
  } else if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    int options =
        UTF8PROC_STABLE | (type[type.size() - 1] == 'C' ? UTF8PROC_COMPOSE : UTF8PROC_DECOMPOSE);
    if (type.size() == 4) options |= UTF8PROC_COMPAT;
    steps_.push_back({Kind::Unicode, "", "", options});
  } else {
    fail_unsupported(file, "normalizer", type, kSupported);
  }
}

std::string HfNormalizer::apply(std::string_view text) const {
  std::string s(text);
  for (const Step& step : steps_) {
    switch (step.kind) {
      case Kind::Prepend:  // tokenizers prepends to non-empty text only
        if (!s.empty()) s = step.text + s;
        break;
      case Kind::Replace:
        s = replace_all(s, step.text, step.content);
        break;
      case Kind::Unicode:
        s = normalize_unicode(s, step.unicode_options);
        break;
    }
  }
  return s;
}

}  // namespace hwt
