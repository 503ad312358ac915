#include "data/hf_pretokenizer.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "core/error.h"
#include "data/hf_json.h"
#include "data/hf_normalizer.h"

namespace hwt {
namespace {

constexpr std::string_view kSupported = "Sequence, ByteLevel, Split, Digits, Metaspace";

HfPreTokenizer::Behavior parse_behavior(const std::string& name, const std::string& file) {
  using B = HfPreTokenizer::Behavior;
  if (name == "Isolated") return B::Isolated;
  if (name == "Removed") return B::Removed;
  if (name == "MergedWithPrevious") return B::MergedWithPrevious;
  if (name == "MergedWithNext") return B::MergedWithNext;
  if (name == "Contiguous") return B::Contiguous;
  fail_unsupported(file, "Split behavior", name,
                   "Isolated, Removed, MergedWithPrevious, MergedWithNext, Contiguous");
}

// The pieces of `text` given its matches, as tokenizers' NormalizedString::split keeps them;
// empty pieces are dropped.
void split_at(std::string_view text, const std::vector<std::pair<size_t, size_t>>& matches,
              HfPreTokenizer::Behavior behavior, bool invert, std::vector<std::string>& out) {
  struct Segment {
    size_t begin, end;
    bool match;
  };
  std::vector<Segment> segments;
  size_t pos = 0;
  for (const auto& [begin, end] : matches) {
    if (begin > pos) segments.push_back({pos, begin, invert});
    segments.push_back({begin, end, !invert});
    pos = end;
  }
  if (pos < text.size()) segments.push_back({pos, text.size(), invert});
  using B = HfPreTokenizer::Behavior;
  std::vector<std::pair<size_t, size_t>> pieces;
  if (behavior == B::MergedWithNext) {  // a match joins the piece after it
    bool next_match = false;
    for (auto it = segments.rbegin(); it != segments.rend(); ++it) {
      if (it->match && !next_match && !pieces.empty())
        pieces.back().first = it->begin;
      else
        pieces.emplace_back(it->begin, it->end);
      next_match = it->match;
    }
    std::reverse(pieces.begin(), pieces.end());
  } else {
    bool previous_match = false;
    for (const Segment& s : segments) {
      const bool join = !pieces.empty() && s.match &&
                        ((behavior == B::MergedWithPrevious && !previous_match) ||
                         (behavior == B::Contiguous && previous_match));
      if (behavior == B::Removed && s.match) {
        // dropped
      } else if (join) {
        pieces.back().second = s.end;
      } else {
        pieces.emplace_back(s.begin, s.end);
      }
      previous_match = s.match;
    }
  }
  for (const auto& [begin, end] : pieces)
    if (end > begin) out.emplace_back(text.substr(begin, end - begin));
}

}  // namespace

HfPreTokenizer::HfPreTokenizer(const nlohmann::json& j, const std::string& file) {
  if (!j.is_null()) add(j, file);
}

void HfPreTokenizer::add(const nlohmann::json& j, const std::string& file) {
  const std::string type = hf_type(j, file, "pre_tokenizer");
  if (byte_level_)
    fail_input("tokenizer.json {}: pre_tokenizer {} after ByteLevel is not supported", file, type);
  Step step;
  if (type == "Sequence") {
    const auto it = j.find("pretokenizers");
    if (it == j.end() || !it->is_array())
      fail_input("tokenizer.json {}: pre_tokenizer Sequence has no \"pretokenizers\" list", file);
    for (const nlohmann::json& s : *it) add(s, file);
    return;
  }
  if (type == "Split") {
    step.kind = Kind::Split;
    const nlohmann::json pattern = j.value("pattern", nlohmann::json());
    const std::string where = "tokenizer.json " + file + ": pre_tokenizer Split";
    if (pattern.is_object() && pattern.contains("Regex") && pattern["Regex"].is_string())
      step.regex = std::make_shared<HfRegex>(pattern["Regex"].get<std::string>(), false, where);
    else
      step.regex = std::make_shared<HfRegex>(
          hf_string_pattern(pattern, file, "pre_tokenizer Split"), true, where);
    step.behavior = parse_behavior(hf_value<std::string>(j, "behavior", "", file, "Split"), file);
    step.invert = hf_value<bool>(j, "invert", false, file, "Split");
  } else if (type == "Digits") {
    // tokenizers splits at char::is_numeric: the Unicode categories Nd, Nl and No.
    step.kind = Kind::Split;
    const bool individual = hf_value<bool>(j, "individual_digits", false, file, "Digits");
    step.regex = std::make_shared<HfRegex>(R"(\p{N})", false, "Digits");
    step.behavior = individual ? Behavior::Isolated : Behavior::Contiguous;
  } else if (type == "Metaspace") {
    step.kind = Kind::Metaspace;
    step.replacement = hf_value<std::string>(j, "replacement", "\u2581", file, "Metaspace");
    const std::string scheme = hf_value<std::string>(
        j, "prepend_scheme",
        hf_value<bool>(j, "add_prefix_space", true, file, "Metaspace") ? "always" : "never", file,
        "Metaspace");
    if (scheme == "always")
      step.prepend = Prepend::Always;
    else if (scheme == "first")
      step.prepend = Prepend::First;
    else if (scheme == "never")
      step.prepend = Prepend::Never;
    else
      fail_unsupported(file, "Metaspace prepend_scheme", scheme, "always, first, never");
    if (hf_value<bool>(j, "split", true, file, "Metaspace"))
      step.regex = std::make_shared<HfRegex>(step.replacement, true, "Metaspace");
  } else if (type == "ByteLevel") {
    step.kind = Kind::ByteLevel;
    step.add_prefix_space = hf_value<bool>(j, "add_prefix_space", true, file, "ByteLevel");
    step.use_regex = hf_value<bool>(j, "use_regex", true, file, "ByteLevel");
    if (step.use_regex && gpt2_ == nullptr) gpt2_ = std::make_shared<Gpt2Pretokenizer>();
    byte_level_ = true;
  } else {
    fail_unsupported(file, "pre_tokenizer", type, kSupported);
  }
  steps_.push_back(std::move(step));
}

void HfPreTokenizer::apply(const Step& step, std::string_view piece, bool at_text_start,
                           std::vector<std::string>& out) const {
  switch (step.kind) {
    case Kind::Split:
      split_at(piece, step.regex->matches(piece), step.behavior, step.invert, out);
      return;
    case Kind::Metaspace: {
      std::string s = replace_all(piece, " ", step.replacement);
      const bool prepend =
          step.prepend == Prepend::Always || (step.prepend == Prepend::First && at_text_start);
      if (prepend && !s.starts_with(step.replacement)) s = step.replacement + s;
      if (step.regex == nullptr)
        out.push_back(std::move(s));
      else
        split_at(s, step.regex->matches(s), Behavior::MergedWithNext, false, out);
      return;
    }
    case Kind::ByteLevel: {
      std::string s(piece);
      if (step.add_prefix_space && !s.starts_with(' ')) s = " " + s;
      if (!step.use_regex) {
        out.push_back(std::move(s));
        return;
      }
      Gpt2Pretokenizer::Cursor cursor(*gpt2_, s);
      std::string_view p;
      while (cursor.next(p)) out.emplace_back(p);
      return;
    }
  }
}

void HfPreTokenizer::split(std::string_view text, bool at_text_start,
                           std::vector<std::string>& pieces) const {
  std::vector<std::string> current{std::string(text)}, next;
  for (const Step& step : steps_) {
    next.clear();
    for (size_t i = 0; i < current.size(); ++i)
      apply(step, current[i], at_text_start && i == 0, next);
    current.swap(next);
  }
  for (std::string& p : current) pieces.push_back(std::move(p));
}

}  // namespace hwt
