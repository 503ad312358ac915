// BERT's vocab.txt (data.tokenizer = "wordpiece"), then a text encoded and decoded with it: the
// input is the file and the text, cut at fuzz_input.h's separator.
#include "data/wordpiece_tokenizer.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = hwt::fuzz::split_parts(hwt::fuzz::as_text(data, size), 2);
  const std::string path = hwt::fuzz::write_input("vocab.txt", parts[0]);
  hwt::fuzz::expect_input_errors([&] {
    const auto tokenizer = hwt::WordPieceTokenizer::load(path, true);
    (void)tokenizer->decode(tokenizer->encode(parts[1]));
  });
  return 0;
}
