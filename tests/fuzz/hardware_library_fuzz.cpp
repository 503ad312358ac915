// The module library and the memory table (hardware/accel/modules_14nm.toml, memories.toml):
// the input is the two files, cut at fuzz_input.h's separator.
#include "accel/hardware_library.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = hwt::fuzz::split_parts(hwt::fuzz::as_text(data, size), 2);
  const std::string modules = hwt::fuzz::write_input("modules.toml", parts[0]);
  const std::string memories = hwt::fuzz::write_input("memories.toml", parts[1]);
  hwt::fuzz::expect_input_errors(
      [&] { (void)hwt::accel::load_hardware_library(modules, memories); });
  return 0;
}
