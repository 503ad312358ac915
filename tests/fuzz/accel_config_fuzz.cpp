// An accelerator design file (hardware/accel/designs/*.toml), priced with the shipped library.
#include "accel/accel_config.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = hwt::fuzz::write_input("design.toml", hwt::fuzz::as_text(data, size));
  hwt::fuzz::expect_input_errors(
      [&] { (void)hwt::accel::load_accel_config(path, hwt::accel::default_hardware_library()); });
  return 0;
}
