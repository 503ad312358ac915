// GPT-2's encoder.json and vocab.bpe (cut at fuzz_input.h's separator), then a text (the third
// part) merged with the byte-pair encoder they make. Gpt2Tokenizer itself takes only the full
// 50,257-token vocabulary, far beyond what a fuzzer's inputs hold, so the encoder is built here.
#include "data/byte_pair_encoder.h"
#include "data/gpt2_vocabulary.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = hwt::fuzz::split_parts(hwt::fuzz::as_text(data, size), 3);
  hwt::fuzz::expect_input_errors([&] {
    const hwt::Gpt2Vocabulary v =
        hwt::parse_gpt2_vocabulary(std::string(parts[0]), std::string(parts[1]), "fuzz input");
    const hwt::BytePairEncoder bpe(v.byte_ids, v.merges, std::ssize(v.token_bytes));
    std::vector<int32_t> ids;
    bpe.encode(parts[2], ids);
  });
  return 0;
}
