// `hwt sim`: simulate a traced training step (or inference pass) on an accelerator design, or
// sweep a design space with the fast model. Details: docs/sim.md.
#include <fmt/format.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "accel/design_space.h"
#include "accel/simulator.h"
#include "accel/sweep.h"
#include "cli/commands.h"
#include "cli/config_options.h"
#include "core/error.h"
#include "core/files.h"
#include "core/paths.h"
#include "report/progress_meter.h"
#include "train/sparsity_log.h"

namespace hwt {
namespace {

using namespace hwt::accel;
using Clock = std::chrono::steady_clock;

struct Opts {
  ConfigOptions config;
  std::string accel = "edge", sweep, out, mode = "train";
  uint64_t samples = 2000, seed = 1;
  std::optional<int64_t> epoch_examples;
  std::optional<double> act, weight, grad;  // set: given on the command line
  std::string sparsity_file;
  bool dense = false, detailed = false, json = false, quiet = false;
};

TraceMode parse_mode(const std::string& m) {
  if (m == "train") return TraceMode::Train;
  if (m == "infer") return TraceMode::Infer;
  fail_input("--mode must be train or infer, got '{}'", m);
}

// Without --sparsity every tensor takes its role's constant (AccelTran's unless given); with it
// the points the run pruned take their measured fractions and every other tensor its role's
// constant only where given, 0 (dense) otherwise: nothing is guessed (docs/sim.md).
Sparsity sparsity(const Opts& o) {
  if (o.dense && !o.sparsity_file.empty())
    fail_input("--sparsity and --dense exclude each other: --dense means no sparsity at all");
  if (o.dense) return Sparsity::dense();
  Sparsity s = o.sparsity_file.empty() ? Sparsity{}
                                       : Sparsity::measured_in(read_run_sparsity(o.sparsity_file));
  for (auto [flag, given, value, source] :
       {std::tuple{"--act-sparsity", o.act, &s.activation, &s.activation_source},
        std::tuple{"--weight-sparsity", o.weight, &s.weight, &s.weight_source},
        std::tuple{"--grad-sparsity", o.grad, &s.gradient, &s.gradient_source}}) {
    if (!given) continue;
    if (!(*given >= 0 && *given < 1))
      fail_input("{} {} must be at least 0 and below 1", flag, *given);
    *value = *given;
    *source = flag;
  }
  return s;
}

// The config's step as the accelerator runs it (trace_sim_workload) with the flags' sparsity.
SimWorkload trace(RunConfig c, const Opts& o, int64_t batch) {
  return trace_sim_workload(std::move(c), batch, o.config.seq, parse_mode(o.mode), sparsity(o));
}

void run_single(const Opts& o) {
  if (o.epoch_examples && *o.epoch_examples < 1)
    fail_input("--epoch-examples {} must be a positive number of examples", *o.epoch_examples);
  const RunConfig c = o.config.load();
  const std::string path = resolve_named_file(o.accel, "hardware/accel/designs", "--accel");
  const HardwareLibrary lib = design_library(path);
  const AccelConfig design = load_accel_config(path, lib);
  const SimWorkload w = trace(c, o, o.config.batch);
  ProgressMeter meter("detailed simulation", "stage classes", !o.quiet);
  auto progress = [&](size_t done, size_t total) {
    meter.update(static_cast<int64_t>(done), static_cast<int64_t>(total));
  };
  const SimResult r =
      simulate(w, design, lib, o.detailed ? Fidelity::Detailed : Fidelity::Fast, progress);
  nlohmann::json j = r;
  std::string epoch;
  if (o.epoch_examples) {
    const EpochCost e = epoch_cost(r, *o.epoch_examples);
    j["epoch"] = e;
    epoch = fmt::format("\nepoch of {} examples ({} steps): latency {:.4g} s, energy {:.4g} J\n",
                        e.examples, e.steps, e.latency_s, e.energy_j);
  }
  if (!o.out.empty()) {
    write_output_file(o.out, "sim.json", j.dump(1) + "\n");
    write_output_file(o.out, "sim.txt", format_result(r, r.ops.size()) + epoch);
  }
  if (o.json)
    fmt::print("{}\n", j.dump(1));
  else
    fmt::print("{}{}", format_result(r), epoch);
  if (!o.out.empty() && !o.json) fmt::print("\nwrote {0}/sim.json, {0}/sim.txt\n", o.out);
}

void run_sweep_command(const Opts& o) {
  if (o.out.empty()) fail_input("--sweep needs --out DIR for its CSV and plots");
  if (o.epoch_examples) fail_input("--epoch-examples is for one design, not with --sweep");
  const RunConfig c = o.config.load();
  const HardwareLibrary& lib = default_hardware_library();
  const DesignSpace space =
      load_design_space(resolve_named_file(o.sweep, "hardware/accel/spaces", "--sweep"), lib);
  const uint64_t size = space.size();
  constexpr uint64_t kMaxEnumerated = 10'000'000;
  const uint64_t n = o.samples == 0 ? size : std::min(o.samples, size);
  if (n > kMaxEnumerated)
    fail_input("--sweep {}: {} designs requested; pass --samples N (at most {})", o.sweep, n,
               kMaxEnumerated);
  std::map<int64_t, SimWorkload> workloads;
  for (int64_t b : space.batch) workloads.emplace(b, trace(c, o, b));
  const std::vector<uint64_t> indices = sample_indices(space, n, o.seed);
  if (!o.quiet)
    fmt::print(stderr, "sweep {}: {} of {} designs, {} batch sizes, fast model\n", space.name, n,
               size, space.batch.size());

  const auto t0 = Clock::now();
  ProgressMeter meter("sweep", "designs", !o.quiet);
  auto progress = [&](size_t done, size_t total) {
    meter.update(static_cast<int64_t>(done), static_cast<int64_t>(total));
  };
  std::vector<SweepPoint> points = run_design_sweep(space, workloads, lib, indices, progress);
  meter.finish();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  mark_pareto(points);
  const auto front =
      std::count_if(points.begin(), points.end(), [](const SweepPoint& p) { return p.pareto; });

  write_output_file(o.out, "sweep.csv", design_sweep_csv(space, points));
  write_output_file(
      o.out, "pareto_latency_energy.svg",
      pareto_svg(points, Metric::Latency, Metric::Energy, space.name + ": latency vs energy"));
  write_output_file(
      o.out, "pareto_latency_area.svg",
      pareto_svg(points, Metric::Latency, Metric::Area, space.name + ": latency vs area"));
  write_output_file(
      o.out, "pareto_energy_area.svg",
      pareto_svg(points, Metric::Energy, Metric::Area, space.name + ": energy vs area"));
  const nlohmann::json summary = {{"space", space.name},
                                  {"space_size", size},
                                  {"designs", n},
                                  {"seed", o.seed},
                                  {"mode", o.mode},
                                  {"seconds", seconds},
                                  {"designs_per_second", static_cast<double>(n) / seconds},
                                  {"pareto_designs", front}};
  write_output_file(o.out, "sweep.json", summary.dump(1) + "\n");
  fmt::print(
      "{} designs in {:.2f} s ({:.0f}/s); {} on the Pareto front (latency, energy, area "
      "per sequence)\nwrote {}/sweep.csv, sweep.json and pareto_*.svg\n",
      n, seconds, static_cast<double>(n) / seconds, front, o.out);
}

}  // namespace

void add_sim_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "sim", "Simulate a model on an accelerator design, or sweep a design space");
  auto o = std::make_shared<Opts>();
  add_step_options(cmd, o->config);
  cmd->add_option("--accel", o->accel,
                  "Accelerator TOML, or a design in hardware/accel/designs (edge, server, u50)")
      ->capture_default_str();
  cmd->add_option("--sweep", o->sweep,
                  "Design-space TOML, or a space in hardware/accel/spaces (acceltran)");
  cmd->add_option("--mode", o->mode, "train (forward, backward, optimizer) or infer")
      ->capture_default_str();
  cmd->add_option("--sparsity", o->sparsity_file,
                  "A run's sparsity.json (or its folder): measured per-op sparsity; tensors the "
                  "run did not prune are dense unless a constant below is given");
  cmd->add_option("--act-sparsity", o->act,
                  "Fraction of zero activations (default 0.5, AccelTran's; with --sparsity: 0)");
  cmd->add_option("--weight-sparsity", o->weight,
                  "Fraction of zero weights (default 0.5, AccelTran's; with --sparsity: 0)");
  cmd->add_option("--grad-sparsity", o->grad,
                  "Fraction of zero gradients (default 0.9, AccelTran's; with --sparsity: 0)");
  cmd->add_option("--epoch-examples", o->epoch_examples,
                  "Examples in an epoch: also give its latency and energy (steps of --batch)");
  cmd->add_flag("--dense", o->dense, "No sparsity at all (overrides the three above)");
  cmd->add_flag("--detailed", o->detailed, "Tile-level simulation instead of the fast model");
  cmd->add_option("--samples", o->samples, "Designs to sample in a sweep (0: all)")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Sampling seed")->capture_default_str();
  cmd->add_flag("--json", o->json, "Print the full result as JSON");
  cmd->add_option("--out", o->out, "Output folder");
  cmd->add_flag("--quiet", o->quiet, "No progress output");
  cmd->callback([o] {
    if (o->sweep.empty())
      run_single(*o);
    else
      run_sweep_command(*o);
  });
}

}  // namespace hwt
