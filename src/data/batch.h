// Batch: one padded micro-batch on the host, the hand-off between data and model.
#pragma once

#include <cstdint>
#include <vector>

namespace hwt {

struct Batch {
  int64_t batch = 0, seq = 0;         // padded shape
  std::vector<int32_t> ids;           // [batch*seq], padding is the tokenizer's [PAD]
  std::vector<int32_t> lengths;       // [batch], tokens before padding (>= 1)
  std::vector<int32_t> seq_labels;    // [batch], class per example; empty without a sequence task
  std::vector<int32_t> token_labels;  // [batch*seq], class or next token; -1 = ignored; empty
                                      // without a token task

  int64_t tokens() const {
    int64_t n = 0;
    for (int32_t l : lengths) n += l;
    return n;
  }
  static int64_t count_valid(const std::vector<int32_t>& labels) {
    int64_t n = 0;
    for (int32_t l : labels) n += l >= 0;
    return n;
  }
};

}  // namespace hwt
