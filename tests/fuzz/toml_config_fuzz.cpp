// A run config file (`--config FILE.toml`): TOML syntax, the key table's types and validate(),
// then the config written as JSON, as run.json and checkpoints keep it.
#include "config/run_config.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = hwt::fuzz::write_input("config.toml", hwt::fuzz::as_text(data, size));
  hwt::fuzz::expect_input_errors(
      [&] { (void)hwt::to_json(hwt::load_run_config(path, {})).dump(); });
  return 0;
}
