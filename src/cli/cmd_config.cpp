// `hwt config`: print the resolved configuration, or the key reference (docs/config.md).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/config_options.h"
#include "config/run_config.h"

namespace hwt {

void add_config_command(CLI::App& app) {
  CLI::App* cmd =
      app.add_subcommand("config", "Print the resolved configuration or the key reference");
  struct Opts {
    ConfigOptions config;
    bool reference = false;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  add_config_options(cmd, o->config);
  cmd->add_flag("--reference", o->reference, "Print every key with its type, default and meaning");
  cmd->add_flag("--json", o->json, "Print the resolved configuration as JSON");
  cmd->callback([o] {
    if (o->reference) {
      fmt::print("{}", config_reference_markdown());
      return;
    }
    const RunConfig c = o->config.load();
    fmt::print("{}", o->json ? to_json(c).dump(2) + "\n" : to_toml(c));
  });
}

}  // namespace hwt
