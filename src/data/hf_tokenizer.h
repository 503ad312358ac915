// A Hugging Face tokenizer.json (data.tokenizer = "hf", data.vocab = the file): the BPE files
// today's checkpoints carry, byte-level (GPT-2, Llama 3, Qwen2, SmolLM) or SentencePiece-style
// with byte fallback (Llama 2, Mistral, TinyLlama). The text is cut at added tokens, normalised,
// pre-tokenised and merged as Hugging Face tokenizers does (hf_*.h); the file's own ids.
// Anything in the file hwt does not implement is an InputError naming the part and the file.
//
// Like GPT-2's tokenizer it serves language modelling: encode() is the text's tokens alone (no
// BOS or EOS: tokenizers' add_special_tokens = false), and documents of an LM stream are joined
// by end_of_text_id().
#pragma once

#include <optional>

#include "data/hf_added_tokens.h"
#include "data/hf_bpe_model.h"
#include "data/hf_decoder.h"
#include "data/hf_normalizer.h"
#include "data/hf_pretokenizer.h"
#include "data/piece_cache.h"
#include "data/tokenizer.h"

namespace hwt {

// JSON token ids: one non-negative integer or a list of them (within int32), as Hugging Face's
// files write eos_token_id; nullopt for anything else.
std::optional<std::vector<int32_t>> json_token_ids(const nlohmann::json& j);

class HfTokenizer final : public Tokenizer {
 public:
  // `json_text` is a tokenizer.json's content, `source` its path. With special_in_text, special
  // added tokens written in the text are matched as tokenizers matches them; without, their
  // strings are plain text and special tokens never come from text. Added tokens that are not
  // special are always matched, as in the file's format.
  HfTokenizer(const std::string& json_text, std::string source, bool special_in_text);
  HfTokenizer(const HfTokenizer&) = delete;
  HfTokenizer& operator=(const HfTokenizer&) = delete;
  // Reads the file at `path` (found as data.path is); InputError naming it.
  static std::unique_ptr<HfTokenizer> load(const std::string& path, bool special_in_text);

  int64_t vocab_size() const override { return vocab_size_; }
  // The file's padding token ("<pad>", "<|pad|>", "[PAD]", "<|padding|>") when it has one, else
  // 0 as for GPT-2 (LM batches are never padded).
  int32_t pad_id() const override { return pad_ >= 0 ? pad_ : kPad; }
  int32_t unk_id() const override { return model_.unk_id(); }  // -1 when none
  // The first special added token among "<|endoftext|>" (GPT-2, Qwen2, SmolLM),
  // "<|end_of_text|>" (Llama 3) and "</s>" (Llama 2, Mistral); -1 when none.
  int32_t end_of_text_id() const override { return end_of_text_; }
  // The model's own end-of-generation ids (a folder's generation_config.json or config.json
  // eos_token_id), kept by to_json; InputError when one is outside the vocabulary. Empty: the
  // end-of-text token ends generation.
  void set_stop_ids(std::vector<int32_t> ids);
  std::vector<int32_t> stop_ids() const override;
  // Safe to call from several threads at once; they do not wait for each other.
  std::vector<int32_t> encode_prefix(std::string_view text, int64_t max_tokens) const override;
  // Each id's token through the file's decoder; ids no token has are left out.
  std::string decode(const std::vector<int32_t>& ids) const override;
  // {"kind": "hf", "vocab": path, "special_in_text", "fingerprint", "text": the file's content,
  // "stop_ids" when set}:
  // rebuilt from the text, so a checkpoint does not need the file (JSON without "text", as
  // older checkpoints hold it, reads the file again, which must be the same).
  nlohmann::json to_json() const override;
  static std::unique_ptr<HfTokenizer> from_json(const nlohmann::json& j);

  // `ids` between the tokens the file's post-processor puts around one sequence (Llama's "<s>"
  // before; RoBERTa's "<s>" and "</s>"): tokenizers' add_special_tokens = true.
  std::vector<int32_t> add_special_tokens(const std::vector<int32_t>& ids) const;
  const std::string& source() const { return source_; }
  const std::string& text() const { return text_; }  // the tokenizer.json as read

 private:
  HfTokenizer(const nlohmann::json& root, std::string source, uint64_t fingerprint,
              bool special_in_text);
  // Appends the ids of one stretch of normalised text with no added token in it.
  void encode_stretch(std::string_view text, bool at_text_start, PieceCache& cache,
                      std::vector<int32_t>& out) const;
  void read_post_processor(const nlohmann::json& j);

  std::string source_, text_;
  uint64_t fingerprint_ = 0;
  bool special_in_text_;
  HfNormalizer normalizer_;
  HfPreTokenizer pre_tokenizer_;
  HfBpeModel model_;
  HfAddedTokens added_;
  HfDecoder decoder_;
  std::vector<int32_t> prefix_, suffix_;  // the post-processor's tokens
  std::vector<int32_t> added_index_;      // by id: its index in added_.tokens(), -1 for none
  int64_t vocab_size_ = 0;
  int32_t pad_ = -1, end_of_text_ = -1;
  std::vector<int32_t> stop_ids_;
  // Byte-level pieces only; each encode takes its own cache, so concurrent encodes never wait.
  PieceCachePool caches_;
};

}  // namespace hwt
