// A GPU catalog file (`--catalog FILE`, hardware/gpus.toml's format).
#include "fuzz_input.h"
#include "hw/gpu_catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hwt::fuzz::expect_input_errors([&] {
    hwt::GpuCatalog catalog;
    catalog.load_string(hwt::fuzz::as_text(data, size), "gpus.toml");
  });
  return 0;
}
