// `hwt train`: train a model (by default the default model on the default dataset).
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <ctime>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/train_run.h"
#include "config/run_config.h"

namespace hwt {
namespace {

std::string default_out_dir() {
  const std::time_t now = std::time(nullptr);
  return fmt::format("runs/{:%Y%m%d-%H%M%S}", fmt::localtime(now));
}

}  // namespace

void add_train_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "train", "Train a model; with no options, the default model on the default dataset");
  struct Opts {
    std::string config, out, resume, price;
    std::vector<std::string> sets;
    bool quiet = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--config", o->config, "TOML config file (keys: docs/config.md)");
  cmd->add_option("--set", o->sets, "Override a key: --set train.epochs=5 (repeatable)");
  cmd->add_option("--out", o->out, "Output folder (default runs/<date-time>)");
  cmd->add_option("--resume", o->resume, "Continue from a checkpoint.safetensors");
  cmd->add_option("--price", o->price,
                  "USD per GPU-hour for the run's cost (default: the GPU catalogue's price)");
  cmd->add_flag("--quiet", o->quiet, "No progress output");
  cmd->callback([o] {
    TrainRequest r =
        training_request(load_run_config(o->config, o->sets),
                         o->out.empty() ? default_out_dir() : o->out, o->price, !o->quiet);
    r.resume = o->resume;
    print_run_summary(train(r), r.out_dir);
  });
}

}  // namespace hwt
