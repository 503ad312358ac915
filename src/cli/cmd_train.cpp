// `hwt train`: train a model (by default the default model on the default dataset).
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <ctime>

#include "cli/commands.h"
#include "config/run_config.h"
#include "train/trainer.h"

namespace hwt {
namespace {

std::string default_out_dir() {
  const std::time_t now = std::time(nullptr);
  return fmt::format("runs/{:%Y%m%d-%H%M%S}", fmt::localtime(now));
}

void print_results(const nlohmann::json& run, const std::string& dir) {
  const auto& r = run["results"];
  auto line = [](const char* name, const nlohmann::json& m) {
    std::string s = fmt::format("{:<10} loss {:.4f}", name, m["loss"].get<double>());
    if (m.contains("accuracy"))
      s += fmt::format("  accuracy {:.2f}%", 100 * m["accuracy"].get<double>());
    if (m.contains("slot_f1"))
      s += fmt::format("  slot F1 {:.2f}", 100 * m["slot_f1"].get<double>());
    if (m.contains("sentence_accuracy"))
      s += fmt::format("  sentence accuracy {:.2f}%", 100 * m["sentence_accuracy"].get<double>());
    if (m.contains("perplexity"))
      s += fmt::format("  perplexity {:.3f}", m["perplexity"].get<double>());
    fmt::print("{}\n", s);
  };
  fmt::print("\ntrained {} steps ({}) in {:.1f} s on {}; {:.1f} ms/step\n",
             r["steps"].get<int64_t>(), r["stopped_by"].get<std::string>(),
             run["timing"]["total_s"].get<double>(), run["hardware"]["backend"].get<std::string>(),
             run["timing"]["step_ms"].get<double>());
  if (r["valid"]["examples"].get<int64_t>() > 0) line("valid", r["valid"]);
  if (r.contains("test")) line("test", r["test"]);
  fmt::print("wrote {0}/run.json, {0}/metrics.jsonl, {0}/loss.svg, {0}/checkpoint.safetensors\n",
             dir);
}

}  // namespace

void add_train_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "train", "Train a model; with no options, the default model on the default dataset");
  struct Opts {
    std::string config, out, resume;
    std::vector<std::string> sets;
    bool quiet = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--config", o->config, "TOML config file (keys: docs/config.md)");
  cmd->add_option("--set", o->sets, "Override a key: --set train.epochs=5 (repeatable)");
  cmd->add_option("--out", o->out, "Output folder (default runs/<date-time>)");
  cmd->add_option("--resume", o->resume, "Continue from a checkpoint.safetensors");
  cmd->add_flag("--quiet", o->quiet, "No progress output");
  cmd->callback([o] {
    TrainRequest r;
    r.config = load_run_config(o->config, o->sets);
    r.out_dir = o->out.empty() ? default_out_dir() : o->out;
    r.resume = o->resume;
    r.progress = !o->quiet;
    const nlohmann::json run = train(r);
    print_results(run, r.out_dir);
  });
}

}  // namespace hwt
