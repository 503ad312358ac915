// A csv data file (data.format = "csv"), read, split and encoded for classification.
#include "fuzz_dataset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = hwt::fuzz::write_input("data.csv", hwt::fuzz::as_text(data, size));
  hwt::fuzz::load_small_dataset(hwt::fuzz::small_data_config(hwt::DataFormat::Csv, path),
                                hwt::Task::Classify);
  return 0;
}
