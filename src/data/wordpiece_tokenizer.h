// BERT's WordPiece tokenizer: BERT's basic tokenisation (bert_basic_tokenizer.h), then each
// word cut greedily into the longest vocabulary pieces from its start, later pieces written with
// "##" in the vocabulary. A vocab.txt holds one token a line; a token's id is its line number
// (from 0), so a BERT vocabulary keeps BERT's ids ([PAD] 0, [UNK] 100, [CLS] 101, [SEP] 102).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/bert_basic_tokenizer.h"
#include "data/tokenizer.h"

namespace hwt {

// Token strings to ids, keyed by views into the vocabulary text (no copies, no allocation per
// lookup): open addressing over a power-of-two table.
class WordPieceMap {
 public:
  void reserve(size_t n);
  // A later insert of the same key wins, as a later vocab.txt line does in BERT's reader.
  void insert(std::string_view key, int32_t id);
  int32_t find(std::string_view key) const;  // -1 when absent
  size_t longest() const { return longest_; }

 private:
  struct Slot {
    const char* data = nullptr;
    uint32_t size = 0;
    int32_t id = -1;
  };
  std::vector<Slot> slots_;
  size_t count_ = 0, longest_ = 0;
};

class WordPieceTokenizer final : public Tokenizer {
 public:
  // BERT's tokenizer makes a word of more than this many code points one [UNK].
  static constexpr int64_t kMaxWordChars = 100;

  // `vocab_text` is a vocab.txt's content, `source` its path (for messages and to_json).
  // InputError when [PAD], [UNK], [CLS] or [SEP] is missing.
  WordPieceTokenizer(std::string vocab_text, std::string source, bool lowercase);
  WordPieceTokenizer(const WordPieceTokenizer&) = delete;
  WordPieceTokenizer& operator=(const WordPieceTokenizer&) = delete;
  // Reads vocab.txt at `path`; InputError naming it when it cannot be read or lacks a special.
  static std::unique_ptr<WordPieceTokenizer> load(const std::string& path, bool lowercase);

  int64_t vocab_size() const override { return std::ssize(tokens_); }
  int32_t pad_id() const override { return pad_; }
  int32_t unk_id() const override { return unk_; }
  int32_t cls_id() const override { return cls_; }
  int32_t sep_id() const override { return sep_; }
  int32_t mask_id() const { return mask_; }  // -1 when the vocabulary has no [MASK]

  // Word pieces only: [CLS] and [SEP] are never produced from text ("[CLS]" written in the text
  // is the pieces of "[", "cls" and "]").
  std::vector<int32_t> encode_prefix(std::string_view text, int64_t max_tokens) const override;
  // Pieces joined with a space before each one that does not start with "##" (whose "##" is
  // dropped); [PAD], [CLS] and [SEP] are left out.
  std::string decode(const std::vector<int32_t>& ids) const override;
  // {"kind": "wordpiece", "vocab": path, "lowercase", "fingerprint", "text": the vocab.txt}:
  // rebuilt from the text, so a checkpoint does not need the file (JSON without "text", as
  // older checkpoints hold it, reads the file again, which must be the same).
  nlohmann::json to_json() const override;
  static std::unique_ptr<WordPieceTokenizer> from_json(const nlohmann::json& j);

  // BERT's inputs: [CLS] a [SEP] (type ids 0), or [CLS] a [SEP] b [SEP] (0 up to the first
  // [SEP] included, 1 after).
  struct Encoding {
    std::vector<int32_t> ids, type_ids;
  };
  Encoding encode_single(std::string_view a) const;
  Encoding encode_pair(std::string_view a, std::string_view b) const;

  std::string_view token(int32_t id) const;
  bool lowercase() const { return basic_.lowercase(); }
  const std::string& source() const { return source_; }
  const std::string& text() const { return vocab_text_; }  // the vocab.txt as read

 private:
  // Appends the pieces of one normalised word of `chars` code points.
  void encode_word(std::string_view word, int64_t chars, std::vector<int32_t>& out) const;

  std::string vocab_text_;
  std::string source_;
  std::vector<std::string_view> tokens_;  // by id, into vocab_text_
  WordPieceMap first_;                    // pieces that start a word
  WordPieceMap rest_;                     // "##" pieces, keyed without the "##"
  BertBasicTokenizer basic_;
  int32_t pad_ = -1, unk_ = -1, cls_ = -1, sep_ = -1, mask_ = -1;
  uint64_t fingerprint_ = 0;
};

}  // namespace hwt
