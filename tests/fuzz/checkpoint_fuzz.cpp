// An hwt checkpoint as `hwt eval` and `--resume` open it: the safetensors file, its metadata
// (config, training state, vocabulary) and the tokenizer and labels rebuilt from it.
#include "data/dataset.h"
#include "fuzz_input.h"
#include "train/checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path =
      hwt::fuzz::write_input("checkpoint.safetensors", hwt::fuzz::as_text(data, size));
  hwt::fuzz::expect_input_errors([&] {
    const hwt::Checkpoint checkpoint(path);
    (void)hwt::dataset_from_vocab_json(checkpoint.info().vocab,
                                       checkpoint.info().config.model.head);
  });
  return 0;
}
