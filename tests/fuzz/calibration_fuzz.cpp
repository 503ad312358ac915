// A GEMM calibration file (`--calibration FILE`, hardware/calibration/*.json).
#include "analysis/gemm_calibration.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path =
      hwt::fuzz::write_input("calibration.json", hwt::fuzz::as_text(data, size));
  hwt::fuzz::expect_input_errors([&] { (void)hwt::load_calibration(path); });
  return 0;
}
