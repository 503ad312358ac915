#include "cli/config_options.h"

#include "core/error.h"
#include "interop/hf_model_config.h"

namespace hwt {

RunConfig ConfigOptions::load() const {
  if (config.empty() || !is_hf_config_path(config)) return load_run_config(config, sets);
  RunConfig c = read_hf_config(config).run;
  for (const std::string& kv : sets) apply_override(c, kv);
  validate(c);
  return c;
}

void add_deprecated_alias(CLI::App* cmd, const std::string& old_name, const std::string& new_name,
                          std::string& target) {
  cmd->add_option_function<std::string>(
         old_name,
         [old_name, new_name, &target](const std::string& v) {
           warn("{} is deprecated and will be removed in the next release: use {}", old_name,
                new_name);
           target = v;
         },
         "Deprecated: " + new_name)
      ->group("");  // hidden from --help
}

}  // namespace hwt
