#include "cli/config_options.h"

#include "interop/hf_model_config.h"

namespace hwt {

RunConfig ConfigOptions::load() const {
  if (config.empty() || !is_hf_config_path(config)) return load_run_config(config, sets);
  RunConfig c = read_hf_config(config).run;
  for (const std::string& kv : sets) apply_override(c, kv);
  validate(c);
  return c;
}

}  // namespace hwt
