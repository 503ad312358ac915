// A JointBERT folder (data.format = "jointbert"): the input is train/seq.in, train/label and
// train/seq.out, cut at fuzz_input.h's separator; dev/ and test/ are links to train/.
#include <filesystem>

#include "fuzz_dataset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fs = std::filesystem;
  const auto parts = hwt::fuzz::split_parts(hwt::fuzz::as_text(data, size), 3);
  hwt::fuzz::write_input("jointbert/train/seq.in", parts[0]);
  hwt::fuzz::write_input("jointbert/train/label", parts[1]);
  hwt::fuzz::write_input("jointbert/train/seq.out", parts[2]);
  const fs::path dir = hwt::fuzz::scratch_dir() / "jointbert";
  for (const char* split : {"dev", "test"})
    if (!fs::exists(dir / split)) fs::create_directory_symlink("train", dir / split);
  hwt::fuzz::load_small_dataset(hwt::fuzz::small_data_config(hwt::DataFormat::JointBert, dir),
                                hwt::Task::Joint);
  return 0;
}
