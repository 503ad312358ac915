// `hwt train`: train a model (by default the default model on the default dataset).
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/config_options.h"
#include "cli/init_checkpoint.h"
#include "cli/train_run.h"
#include "config/run_config.h"
#include "core/error.h"
#include "core/files.h"
#include "core/interrupt.h"
#include "dist/local_launch.h"
#include "dist/world.h"
#include "train/fine_tune.h"
#include "train/run_files.h"
#include "train/run_setup.h"

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
    ConfigOptions config;
    std::string out, resume, init, price;
    bool quiet = false, overwrite = false;
    int gpus = 0;
  };
  auto o = std::make_shared<Opts>();
  add_config_options(cmd, o->config);
  cmd->add_option("--out", o->out, "Output folder (default runs/<date-time>)");
  cmd->add_option("--resume", o->resume, "Continue from a checkpoint.safetensors");
  cmd->add_option("--init", o->init,
                  "Start from these weights (an hwt checkpoint or a Hugging Face model folder): "
                  "the model's shape and tokenizer come from it, the optimizer starts at step 0");
  cmd->add_flag("--overwrite", o->overwrite, "Replace an earlier run in --out");
  cmd->add_option("--price", o->price,
                  "USD per GPU-hour for the run's cost (default: the GPU catalog's price)");
  cmd->add_flag("--quiet", o->quiet, "No progress output");
  cmd->add_option("--gpus", o->gpus,
                  "Data parallel on this machine's first N GPUs, one process each (under mpirun "
                  "or srun, leave it out: they start the ranks)");
  cmd->callback([o] {
    // Before anything touches CUDA: under mpirun this rank picks its GPU here.
    const World world = join_world();
    if (!o->init.empty() && !o->resume.empty())
      fail_input(
          "--init and --resume: give one (--resume continues a run, whose checkpoint already "
          "holds the weights it started from)");
    RunConfig config = o->config.load();
    const std::string out = o->out.empty() ? default_out_dir() : o->out;
    if (world.leader()) check_output_folder(out);  // before the data and model are loaded
    // Only rank 0 writes the folder, so only its folder counts.
    if (world.leader() && !o->overwrite && o->resume.empty())
      if (const auto files = run_files_in(out); !files.empty())
        fail_input(
            "--out {} holds an earlier run ({}): add --overwrite to replace it, or --resume its "
            "checkpoint to continue it",
            out, fmt::join(files, ", "));
    if (o->gpus < 0) fail_input("--gpus {}: expected a number of GPUs", o->gpus);
    if (o->gpus > 0 && world.launcher == Launcher::Single) {
      const int have = visible_gpu_count();
      if (o->gpus > have) fail_input("--gpus {}: only {} GPU(s) visible", o->gpus, have);
      // Every rank writes to the same folder name (only rank 0 writes it).
      std::vector<std::string> extra;
      if (o->out.empty()) extra = {"--out", out};
      std::exit(run_local_ranks(o->gpus, extra, new_nccl_id_hex()));
    }
    int exit_signal = 0;
    {
      // A Hugging Face folder is imported into a temporary checkpoint for the run's length.
      const InitCheckpoint init(o->init, world.leader() && !o->quiet);
      if (!init.path().empty())
        config = init_run_config(config, Checkpoint(init.path()).info(), o->init);
      TrainRequest r = training_request(config, out, o->price, !o->quiet);
      r.resume = o->resume;
      r.init = init.path();
      r.world = world;
      // SIGINT/SIGTERM: the step in flight finishes, a checkpoint and run.json are written and
      // hwt exits with 128 + the signal (130, 143); a second signal exits at once.
      install_interrupt_handlers();
      const nlohmann::json run = train(r);
      if (world.leader()) print_run_summary(run, r.out_dir);
      if (run["results"]["stopped_by"] == "interrupted")  // the signal every rank agreed on
        exit_signal = signal_number(run["results"]["signal"].get<std::string>());
    }
    if (exit_signal != 0) std::exit(128 + exit_signal);
  });
}

}  // namespace hwt
