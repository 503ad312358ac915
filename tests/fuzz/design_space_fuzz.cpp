// A design-space file (hardware/accel/spaces/*.toml), and a sample of its points.
#include "accel/design_space.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = hwt::fuzz::write_input("space.toml", hwt::fuzz::as_text(data, size));
  hwt::fuzz::expect_input_errors([&] {
    const hwt::accel::DesignSpace space =
        hwt::accel::load_design_space(path, hwt::accel::default_hardware_library());
    (void)hwt::accel::sample_indices(space, 4, 1);
  });
  return 0;
}
