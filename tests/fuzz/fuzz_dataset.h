// The data-file targets load their input as `hwt train` does (load_dataset: read, split, labels,
// tokenizer, encode), on small settings so that each input is quick: a word tokenizer, short
// examples, no token cache, one thread.
#pragma once
#include "config/data_config.h"
#include "data/dataset.h"
#include "data/token_cache.h"
#include "fuzz_input.h"

namespace hwt::fuzz {

inline DataConfig small_data_config(DataFormat format, const std::string& path) {
  DataConfig c;
  c.format = format;
  c.path = path;
  c.tokenizer = TokenizerKind::Word;
  c.min_freq = 1;
  c.max_vocab = 64;
  c.max_len = 8;
  c.cache_dir = std::string(kTokenCacheOff);
  return c;
}

inline void load_small_dataset(const DataConfig& c, Task task) {
  expect_input_errors([&] { (void)load_dataset(c, task, TokenizeOptions{1, {}}); });
}

}  // namespace hwt::fuzz
