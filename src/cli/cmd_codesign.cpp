// `hwt codesign`: search model shapes x accelerator designs for accuracy, latency, energy and
// area (TransCODE). The search lives in src/codesign; details: docs/codesign.md.
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/config_options.h"
#include "codesign/report.h"
#include "codesign/search.h"
#include "core/error.h"
#include "core/files.h"
#include "core/paths.h"
#include "report/progress_meter.h"

namespace hwt {
namespace {

using namespace hwt::codesign;

struct Opts {
  ConfigOptions config;
  std::string space = "codesign_space", accel_space = "acceltran", baseline_accel = "edge", out,
              mode = "pareto";
  int64_t steps = 200;
  SearchOptions search;
  bool quiet = false, keep_checkpoints = false;
};

Goal parse_mode(const std::string& m) {
  if (m == "pareto") return Goal::Pareto;
  if (m == "weighted") return Goal::Weighted;
  fail_input("--mode must be pareto or weighted, got '{}'", m);
}

void run(Opts o) {
  if (o.out.empty()) fail_input("codesign needs --out DIR (its cache of runs lives there)");
  o.search.mode = parse_mode(o.mode);
  const accel::HardwareLibrary& lib = accel::default_hardware_library();
  SearchInputs in;
  const std::string space_file = resolve_named_file(o.space, "configs", "--space");
  const RunConfig config = o.config.load();
  in.space = load_model_space(space_file, config);
  const RunConfig base = in.space.pruned(config);  // what every run trains, baseline included
  accel::DesignSpace designs = accel::load_design_space(
      resolve_named_file(o.accel_space, "hardware/accel/spaces", "--accel-space"), lib);
  in.baseline_shape = shape_of(base.model);
  in.baseline_design = accel::load_accel_config(
      resolve_named_file(o.baseline_accel, "hardware/accel/designs", "--baseline-accel"), lib);
  in.baseline_batch = base.train.batch_size;
  const nlohmann::json meta = {{"space", in.space.name},
                               {"space_file", space_file},
                               {"shapes", in.space.size()},
                               {"accel_space", designs.name},
                               {"designs", designs.size()},
                               {"baseline_design", in.baseline_design.name},
                               {"mode", o.mode},
                               {"runs", o.search.runs},
                               {"steps", o.steps},
                               {"time_budget_s", o.search.time_budget_s},
                               {"initial", o.search.initial},
                               {"per_round", o.search.per_round},
                               {"kappa", o.search.kappa},
                               {"population", o.search.evolve.population},
                               {"generations", o.search.evolve.generations},
                               {"seed", o.search.evolve.seed},
                               {"prune",
                                {{"tau_infer", base.model.prune.tau_infer},
                                 {"tau_train", base.model.prune.tau_train},
                                 {"tau_act_grad", base.model.prune.tau_act_grad}}}};
  in.make_hardware = [&base, &lib, designs](int64_t vocab) {
    RunConfig c = base;
    if (c.model.vocab_size == 0) c.model.vocab_size = vocab;
    return HardwareEvaluator(c, designs, lib);
  };
  TrainingSource source(base, o.steps, o.out + "/runs", o.keep_checkpoints);
  make_output_folder(o.out);
  RunCache cache(o.out + "/runs.jsonl", source.settings());
  // On a terminal a meter under the log lines counts the runs and estimates the time left.
  ProgressMeter meter("codesign", "runs", !o.quiet);
  int64_t done = 0;
  auto log = [&](const std::string& line) {
    if (o.quiet) return;
    meter.finish();
    fmt::print(stderr, "{}\n", line);
    if (done > 0) meter.update(done, o.search.runs);
  };
  auto progress = [&](int64_t n, int64_t total) {
    done = n;
    meter.update(n, total);
  };
  log(fmt::format("codesign: {} shapes x {} designs ({}), baseline {} on {}; {} runs of {} steps{}",
                  in.space.size(), designs.size(), designs.name, in.baseline_shape.key(),
                  in.baseline_design.name, o.search.runs, o.steps,
                  cache.runs().empty() ? ""
                                       : fmt::format("; resuming: {} runs in {}",
                                                     cache.runs().size(), cache.path())));
  const SearchResult r = run_search(in, source, cache, o.search, log, progress);
  meter.finish();
  write_report(o.out, r, meta);
  fmt::print("{}wrote {}/front.csv, codesign.json, accuracy_latency.svg, accuracy_energy.svg\n",
             summary_text(r), o.out);
}

}  // namespace

void add_codesign_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "codesign", "Search model shapes x accelerator designs (accuracy from real training runs)");
  auto o = std::make_shared<Opts>();
  add_config_options(cmd, o->config);
  cmd->add_option("--space", o->space, "Model-shape space TOML, or its name in configs/")
      ->capture_default_str();
  cmd->add_option("--accel-space", o->accel_space,
                  "Accelerator design space, or its name in hardware/accel/spaces")
      ->capture_default_str();
  cmd->add_option("--baseline-accel", o->baseline_accel,
                  "Design the config's own model is compared on (hardware/accel/designs)")
      ->capture_default_str();
  cmd->add_option("--out", o->out, "Output folder; a search there is resumed from its cache");
  cmd->add_option("--runs", o->search.runs, "Training runs in all, baseline and cached included")
      ->capture_default_str();
  cmd->add_option("--steps", o->steps, "Training steps per run")->capture_default_str();
  cmd->add_option("--time-budget", o->search.time_budget_s,
                  "Seconds after which no run starts (0: none)")
      ->capture_default_str();
  cmd->add_option("--initial", o->search.initial, "Random shapes before the surrogate is used")
      ->capture_default_str();
  cmd->add_option("--per-round", o->search.per_round, "Shapes trained per round")
      ->capture_default_str();
  cmd->add_option("--mode", o->mode,
                  "pareto (NSGA-II proposes) or weighted (BOSHCODE's weighted score)")
      ->capture_default_str();
  cmd->add_option("--kappa", o->search.kappa, "Optimism: shapes count with mean + kappa * std")
      ->capture_default_str();
  cmd->add_option("--population", o->search.evolve.population, "Optimiser population")
      ->capture_default_str();
  cmd->add_option("--generations", o->search.evolve.generations, "Optimiser generations")
      ->capture_default_str();
  cmd->add_option("--seed", o->search.evolve.seed, "Seed of the shape order and the optimisers")
      ->capture_default_str();
  cmd->add_flag("--keep-checkpoints", o->keep_checkpoints,
                "Keep each run's checkpoints (deleted once its accuracy is read)");
  cmd->add_flag("--quiet", o->quiet, "No progress output");
  cmd->callback([o] { run(*o); });
}

}  // namespace hwt
