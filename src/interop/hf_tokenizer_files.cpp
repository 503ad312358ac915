#include "interop/hf_tokenizer_files.h"

#include <fmt/format.h>

#include <filesystem>
#include <utility>

#include "core/error.h"
#include "core/files.h"
#include "data/gpt2_tokenizer.h"
#include "data/gpt2_vocabulary.h"
#include "data/hf_tokenizer.h"
#include "data/text_io.h"
#include "data/wordpiece_tokenizer.h"

namespace hwt {
namespace {

namespace fs = std::filesystem;

// The model's end-of-generation ids: eos_token_id of generation_config.json, else of
// config.json (an id or a list of them; an instruction-tuned model names its end of turn there),
// and the file they came from; none when neither names any.
std::pair<std::vector<int32_t>, std::string> folder_stop_ids(const fs::path& dir) {
  for (const char* name : {"generation_config.json", "config.json"}) {
    const fs::path file = dir / name;
    if (!fs::exists(file)) continue;
    nlohmann::json eos;
    try {
      const nlohmann::json j = nlohmann::json::parse(read_file(file.string(), name));
      if (!j.is_object() || !j.contains("eos_token_id") || j["eos_token_id"].is_null()) continue;
      eos = j["eos_token_id"];
    } catch (const nlohmann::json::exception& e) {
      fail_input("import {}: {}: {}", dir.string(), name, e.what());
    }
    const std::optional<std::vector<int32_t>> ids = json_token_ids(eos);
    if (!ids)
      fail_input("import {}: {}: eos_token_id must be a token id or a list of them, got {}",
                 dir.string(), name, eos.dump());
    if (!ids->empty()) return {*ids, name};
  }
  return {};
}

// tokenizer_config.json's do_lower_case; BertTokenizer's default (true) without the file or key.
bool lower_case(const fs::path& dir) {
  const fs::path file = dir / "tokenizer_config.json";
  if (!fs::exists(file)) return true;
  try {
    const nlohmann::json j = nlohmann::json::parse(read_file(file.string(), "tokenizer config"));
    const auto it = j.find("do_lower_case");
    return it == j.end() || it->is_null() ? true : it->get<bool>();
  } catch (const nlohmann::json::exception& e) {
    fail_input("import {}: tokenizer_config.json: {}", dir.string(), e.what());
  }
}

std::unique_ptr<Tokenizer> read_tokenizer(const fs::path& dir, std::string& note) {
  if (const fs::path vocab = dir / "vocab.txt"; fs::exists(vocab)) {
    const bool lowercase = lower_case(dir);
    note = fmt::format("tokenizer: WordPiece from vocab.txt ({})",
                       lowercase ? "lower-cased" : "cased");
    return std::make_unique<WordPieceTokenizer>(read_file(vocab.string(), "WordPiece vocabulary"),
                                                vocab.string(), lowercase);
  }
  if (const fs::path json = dir / "tokenizer.json"; fs::exists(json)) {
    note = "tokenizer: tokenizer.json";
    return std::make_unique<HfTokenizer>(read_file(json.string(), "tokenizer.json"), json.string(),
                                         false);
  }
  const fs::path vocab = dir / "vocab.json", merges = dir / "merges.txt";
  if (fs::exists(vocab) && fs::exists(merges)) {
    const Gpt2Vocabulary theirs = parse_gpt2_vocabulary(
        read_text_file(vocab.string()), read_text_file(merges.string()), dir.string());
    if (!same_vocabulary(theirs, read_installed_gpt2_vocabulary())) {
      note =
          "no tokenizer imported: vocab.json and merges.txt are not GPT-2's own vocabulary, the "
          "only byte-level BPE hwt reads without a tokenizer.json";
      return nullptr;
    }
    note = "tokenizer: GPT-2's vocab.json and merges.txt";
    return Gpt2Tokenizer::load_installed(false);
  }
  note =
      "no tokenizer imported: the folder has no vocab.txt, tokenizer.json or vocab.json and "
      "merges.txt (hwt eval and predict need one: train with --init and a data.tokenizer)";
  return nullptr;
}

// The roles a tokenizer.json states itself: its special added tokens, and under a
// TemplateProcessing post-processor the special token before the sequence ($A) as bos and the
// one after it as eos (Llama's "<s> $A", BERT's "[CLS] $A [SEP]"). Roles the file does not
// state are left out rather than guessed.
nlohmann::ordered_json hf_special_tokens(const std::string& tokenizer_json) {
  const nlohmann::json j = nlohmann::json::parse(tokenizer_json);
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  const nlohmann::json& post = j.value("post_processor", nlohmann::json());
  if (post.is_object() && post.value("type", "") == "TemplateProcessing") {
    const nlohmann::json& single = post.at("single");
    bool before = true;
    for (const nlohmann::json& piece : single) {
      if (piece.contains("Sequence")) {
        before = false;
      } else if (piece.contains("SpecialToken")) {
        const std::string token = piece["SpecialToken"].at("id").get<std::string>();
        out[before ? "bos_token" : "eos_token"] = token;
      }
    }
  }
  nlohmann::ordered_json additional = nlohmann::ordered_json::array();
  for (const nlohmann::json& t : j.value("added_tokens", nlohmann::json::array()))
    if (t.value("special", false)) additional.push_back(t.at("content").get<std::string>());
  if (!additional.empty()) out["additional_special_tokens"] = additional;
  return out;
}

// BERT's five roles, those the vocabulary has.
nlohmann::ordered_json wordpiece_special_tokens(const WordPieceTokenizer& wp) {
  nlohmann::ordered_json out = {{"cls_token", wp.token(wp.cls_id())}};
  if (wp.mask_id() >= 0) out["mask_token"] = wp.token(wp.mask_id());
  out["pad_token"] = wp.token(wp.pad_id());
  out["sep_token"] = wp.token(wp.sep_id());
  out["unk_token"] = wp.token(wp.unk_id());
  return out;
}

// <|endoftext|> as bos, eos and unk, as OpenAI's files define it.
nlohmann::ordered_json gpt2_special_tokens() {
  return {{"bos_token", "<|endoftext|>"},
          {"eos_token", "<|endoftext|>"},
          {"unk_token", "<|endoftext|>"}};
}

}  // namespace

FolderTokenizer read_folder_tokenizer(const std::string& dir, int64_t vocab_size) {
  FolderTokenizer out;
  std::unique_ptr<Tokenizer> tok;
  try {
    tok = read_tokenizer(dir, out.note);
  } catch (const InputError& e) {
    // The weights are still worth importing; the tokenizer can come from elsewhere.
    out.note = fmt::format("no tokenizer imported: {}", e.what());
    return out;
  }
  if (!tok) return out;
  if (tok->vocab_size() > vocab_size)
    fail_input("import {}: its tokenizer has {} tokens, more than config.json's vocab_size {}", dir,
               tok->vocab_size(), vocab_size);
  if (auto* hf = dynamic_cast<HfTokenizer*>(tok.get())) {
    const auto [named, file] = folder_stop_ids(dir);
    std::vector<int32_t> stops;  // the named ids the tokenizer has (a random test model's
                                 // config may name an id past a small tokenizer)
    for (const int32_t id : named)
      if (id < tok->vocab_size()) stops.push_back(id);
    if (!stops.empty()) {
      hf->set_stop_ids(stops);
      out.note +=
          fmt::format(", generation ends at ids {} ({})", nlohmann::json(stops).dump(), file);
    }
  }
  out.json = tok->to_json();
  out.note += fmt::format(", {} tokens, stored in the checkpoint", tok->vocab_size());
  return out;
}

std::vector<std::string> write_folder_tokenizer(const Tokenizer& tok, const std::string& dir,
                                                int64_t max_length, std::string& note) {
  const fs::path d(dir);
  const auto write = [&](const char* name, const std::string& text) {
    write_file_atomic((d / name).string(), text);
  };
  // special_tokens_map.json: which tokens play which role, as transformers' tokenizers save it.
  const auto write_map = [&](const nlohmann::ordered_json& roles) {
    write("special_tokens_map.json", roles.dump(2) + "\n");
  };
  if (const auto* wp = dynamic_cast<const WordPieceTokenizer*>(&tok)) {
    write("vocab.txt", wp->text());
    const nlohmann::ordered_json config = {{"tokenizer_class", "BertTokenizer"},
                                           {"do_lower_case", wp->lowercase()},
                                           {"model_max_length", max_length}};
    write("tokenizer_config.json", config.dump(2) + "\n");
    write_map(wordpiece_special_tokens(*wp));
    return {"vocab.txt", "tokenizer_config.json", "special_tokens_map.json"};
  }
  if (const auto* hf = dynamic_cast<const HfTokenizer*>(&tok)) {
    write("tokenizer.json", hf->text());
    write_map(hf_special_tokens(hf->text()));
    return {"tokenizer.json", "special_tokens_map.json"};
  }
  if (dynamic_cast<const Gpt2Tokenizer*>(&tok)) {
    const Gpt2Files f = read_installed_gpt2_files();
    write("vocab.json", f.encoder_json);
    write("merges.txt", f.vocab_bpe);
    write_map(gpt2_special_tokens());
    return {"vocab.json", "merges.txt", "special_tokens_map.json"};
  }
  note = fmt::format(
      "no tokenizer files written: hwt's {} tokenizer has no Hugging Face format (train with "
      "data.tokenizer = \"wordpiece\" or \"hf\" for one that does)",
      tok.to_json().at("kind").get<std::string>());
  return {};
}

}  // namespace hwt
