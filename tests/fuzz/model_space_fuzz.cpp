// A co-design model-space file (configs/codesign_space.toml), on the default run config.
#include "codesign/model_space.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = hwt::fuzz::write_input("space.toml", hwt::fuzz::as_text(data, size));
  static const hwt::RunConfig base;
  hwt::fuzz::expect_input_errors([&] { (void)hwt::codesign::load_model_space(path, base); });
  return 0;
}
