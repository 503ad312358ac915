// `hwt tokenizer train`: a vocabulary learned from a user's corpus, written in the files Hugging
// Face tokenizers reads, so the same tokenizer serves hwt and the Python ecosystem.
//   bpe:       GPT-2-style byte-level BPE (GPT-2's pre-tokenisation, bytes as GPT-2's byte
//              alphabet), as a tokenizer.json.
//   wordpiece: BERT's basic tokenisation, then WordPiece pieces learned by byte-pair merges over
//              characters ("##" inside words, as Hugging Face's WordPiece trainer learns them),
//              as a vocab.txt.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace hwt {

struct TokenizerTrainingOptions {
  std::string kind;        // "bpe" or "wordpiece"
  int64_t vocab_size = 0;  // specials, alphabet and merges together
  int64_t min_count = 2;   // a pair seen fewer times is never merged
  bool lowercase = true;   // wordpiece: an uncased vocabulary (BERT's uncased normalisation)
  // Ids 0.. in order. Empty: bpe takes <|endoftext|>, wordpiece [PAD] [UNK] [CLS] [SEP] [MASK].
  std::vector<std::string> special_tokens;
  // Progress on long corpora: what is being done, how far, out of how much (0: unknown).
  std::function<void(std::string_view stage, int64_t done, int64_t total)> progress;
};

struct TrainedTokenizer {
  std::string file_text;   // tokenizer.json (bpe) or vocab.txt (wordpiece)
  int64_t vocab_size = 0;  // may be below the size asked for when the corpus runs out of pairs
  int64_t merges = 0;
};

// Learns a tokenizer from `texts`. InputError on an unknown kind, a size below the specials and
// the alphabet, a wordpiece special list without [PAD], [UNK], [CLS] and [SEP], or a corpus with
// nothing to learn from.
TrainedTokenizer train_tokenizer_file(const std::vector<std::string_view>& texts,
                                      const TokenizerTrainingOptions& options);

}  // namespace hwt
