// `hwt config`: print the resolved configuration, or the key reference (docs/config.md).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "config/run_config.h"

namespace hwt {

void add_config_command(CLI::App& app) {
  CLI::App* cmd =
      app.add_subcommand("config", "Print the resolved configuration or the key reference");
  struct Opts {
    std::string config;
    std::vector<std::string> sets;
    bool reference = false;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--config", o->config, "TOML config file");
  cmd->add_option("--set", o->sets, "Override a key: --set model.hidden=512 (repeatable)");
  cmd->add_flag("--reference", o->reference, "Print every key with its type, default and meaning");
  cmd->add_flag("--json", o->json, "Print the resolved configuration as JSON");
  cmd->callback([o] {
    if (o->reference) {
      fmt::print("{}", config_reference_markdown());
      return;
    }
    const RunConfig c = load_run_config(o->config, o->sets);
    fmt::print("{}", o->json ? to_json(c).dump(2) + "\n" : to_toml(c));
  });
}

}  // namespace hwt
