// `--set key=value` overrides: each line of the input is one --set, applied in order to the
// defaults and validated as `hwt train` does, then the config written as JSON, as run.json and
// checkpoints keep it.
#include "config/run_config.h"
#include "data/text_io.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> overrides;
  for (std::string_view line : hwt::split_lines(hwt::fuzz::as_text(data, size)))
    overrides.emplace_back(line);
  hwt::fuzz::expect_input_errors(
      [&] { (void)hwt::to_json(hwt::load_run_config("", overrides)).dump(); });
  return 0;
}
