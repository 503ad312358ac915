// A safetensors file: header length, JSON header, tensor table, checksums; every tensor it
// accepts is read to its last byte (ASan checks that the view lies inside the file).
#include <numeric>

#include "core/safetensors.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path =
      hwt::fuzz::write_input("model.safetensors", hwt::fuzz::as_text(data, size));
  hwt::fuzz::expect_input_errors([&] {
    const hwt::SafetensorsFile file = hwt::SafetensorsFile::open(path);
    for (const std::string& name : file.names()) {
      const hwt::SafetensorsFile::View v = file.get(name);
      const auto* bytes = static_cast<const unsigned char*>(v.data);
      volatile unsigned sum = std::accumulate(bytes, bytes + v.bytes, 0u);
      (void)sum;
    }
  });
  return 0;
}
