// A text file for language modelling (data.format = "text"): one token stream, split by
// fractions into windows.
#include "fuzz_dataset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = hwt::fuzz::write_input("data.txt", hwt::fuzz::as_text(data, size));
  hwt::fuzz::load_small_dataset(hwt::fuzz::small_data_config(hwt::DataFormat::Text, path),
                                hwt::Task::Lm);
  return 0;
}
