// `hwt shape`: the GEMMs of a config's training step on a GPU, the sizing rules it breaks and
// nearby faster shapes (--measure times them as training runs them); `--sweep` fits the GEMM
// model's constants to the GPU present. docs/shape.md describes the model and every option.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "analysis/gemm_calibration.h"
#include "analysis/gemm_validation.h"
#include "analysis/shape_plots.h"
#include "analysis/shape_report.h"
#include "analysis/sweep_fit.h"
#include "cli/commands.h"
#include "cli/config_options.h"
#include "core/error.h"
#include "core/files.h"
#include "hw/gpu_catalog.h"
#include "measure/gemm_timer.h"
#include "train/run_setup.h"

namespace hwt {
namespace {

struct Opts {
  ConfigOptions config;
  std::string gpu, precision, out, calibration;
  std::vector<std::string> catalogs;
  double tolerance = 0.05;
  int top = 8, tp = 1;
  bool json = false, measure = false, sweep = false, validate = false, list = false;
};

// GEMM times on the GPU present, as `hwt train` with this config runs them (measure/
// gemm_timer.h); a GEMM cuBLASLt cannot run is left out with a warning (NaN), not fatal.
class Measurer {
 public:
  explicit Measurer(TrainConfig train) {
    if (!cuda_available())
      fail_input(
          "--measure, --sweep and --validate need a CUDA GPU (none is visible, or this hwt "
          "was built without CUDA)");
    if (train.precision == Precision::Fp8)
      fail_input(
          "--precision fp8 cannot be measured: GEMMs are timed as training runs them, in "
          "fp32, tf32, bf16 or fp16");
    train.device = DeviceChoice::Cuda;
    backend_ = make_backend(train);
    timer_ = std::make_unique<GemmTimer>(*backend_);
  }
  std::string device() const { return backend_->name(); }
  double operator()(const GemmCall& g) {
    try {
      return timer_->seconds(g);
    } catch (const InputError&) {
      throw;
    } catch (const Error& e) {
      fmt::print(stderr, "hwt: warning: GEMM {} not measured: {}\n", shape_label(g.shape),
                 e.what());
    }
    return std::numeric_limits<double>::quiet_NaN();
  }
  const MeasuredTimes& times() const { return timer_->times(); }

 private:
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<GemmTimer> timer_;
};

// The units column names each row's own: SMs (NVIDIA), CUs (AMD), MXUs (TPU).
void list_gpus(const GpuCatalog& cat) {
  fmt::print("{:<10} {:<7} {:>9} {:>9} {:>9} {:>9} {:>8} {:>6} {:>5} {:>7}  {}\n", "gpu", "arch",
             "units", "fp32", "tf32", "bf16", "fp8", "GB/s", "TDP", "$/h", "catalog file");
  for (const GpuSpec& g : cat.gpus()) {
    auto rate = [&](Precision p) {
      const double v = g.peak_tflops(p);
      return v > 0 ? fmt::format("{:.1f}", v) : std::string("-");
    };
    fmt::print("{:<10} {:<7} {:>9} {:>9} {:>9} {:>9} {:>8} {:>6.0f} {:>5.0f} {:>7.2f}  {}\n",
               g.name, arch_name(g.arch), fmt::format("{} {}", g.sms, multiprocessor_name(g.arch)),
               rate(Precision::Fp32), rate(Precision::Tf32), rate(Precision::Bf16),
               rate(Precision::Fp8), g.memory_bandwidth_gbs, g.tdp_w, g.price_per_hour, g.origin);
  }
}

const GpuSpec& pick_gpu(const GpuCatalog& cat, const Opts& o, const Measurer* m) {
  if (!o.gpu.empty()) return cat.find(o.gpu);
  if (!m) return cat.find("H200");
  const std::string dev = m->device();
  if (const GpuSpec* g = cat.match_device(dev)) return *g;
  fail_input(
      "the GPU present ('{}') is not in the catalog: pass --gpu NAME or add it with "
      "--catalog FILE (known: {})",
      dev, cat.known_names());
}

void sweep(const GpuSpec& gpu, Precision p, Measurer& m, const Opts& o) {
  size_t done = 0;
  const size_t total = sweep_grid().size();
  const SweepResult r = run_gemm_sweep(gpu, p, [&](const GemmCall& g) {
    if (++done % 50 == 0) fmt::print(stderr, "measured {}/{} shapes\n", done, total);
    return m(g);
  });
  Calibration c{gpu.name, p, m.device(), r.all.count - r.held_out.count, r.fitted, r.held_out};
  const std::string name = calibration_file_name(gpu.name, p);
  const std::string cached = (std::filesystem::path(calibration_cache_dir()) / name).string();
  save_calibration(cached, c);
  if (!o.out.empty()) {
    save_calibration((std::filesystem::path(o.out) / name).string(), c);
    write_output_file(o.out, "sweep.csv", gemm_sweep_csv(r, gpu, p));
    write_output_file(o.out, "sweep_pred_vs_meas.svg", gemm_sweep_svg(r, gpu, p));
  }
  auto line = [](const char* what, const FitQuality& q) {
    fmt::print("{:<36} {:>6} {:>9.3f} {:>11.1f}% {:>9.1f}%\n", what, q.count, q.spearman,
               100 * q.median_abs_error, 100 * q.max_abs_error);
  };
  fmt::print("GEMM sweep on {} ({}), {}: {} shapes\n", m.device(), gpu.name, precision_name(p),
             r.shapes.size());
  fmt::print("{:<36} {:>6} {:>9} {:>12} {:>10}\n", "model vs measured TFLOP/s", "shapes",
             "Spearman", "median err", "max err");
  line("default constants, held-out shapes", r.held_out_before);
  line("fitted constants, held-out shapes", r.held_out);
  line("fitted constants, all shapes", r.all);
  const GemmConstants& k = r.fitted;
  fmt::print(
      "fitted: peak_fraction {:.3f}, tile_overhead {:.1f}, k_overhead {:.2f}, wave_tail {:.2f}, "
      "kernel_us {:.2f}, launch_us {:.2f}, memory_fraction {:.3f}, align[1..64 B] {:.2f}\n",
      k.peak_fraction, k.tile_overhead, k.k_overhead, k.wave_tail, k.kernel_us, k.launch_us,
      k.memory_fraction, fmt::join(k.align, " "));
  fmt::print("calibration written to {}\n", cached);
}

void validate(const GemmModel& model, const std::string& origin, Measurer& m, const Opts& o) {
  const ValidationResult r = run_validation(model, [&](const GemmCall& g) { return m(g); });
  std::vector<GemmSample> samples;
  for (size_t i = 0; i < r.shapes.size(); ++i)
    if (std::isfinite(r.seconds[i])) samples.push_back({r.shapes[i].gemm.shape, r.seconds[i]});
  const FitQuality before = fit_quality(
      GemmModel(model.gpu(), model.precision(), default_constants(model.gpu().arch)), samples);
  fmt::print("GEMMs of {} training steps measured on {}: {} shapes not in the sweep grid\n",
             validation_cases().size(), m.device(), r.quality.count);
  fmt::print("{:<40} {:>9} {:>11} {:>9}\n", "model vs measured TFLOP/s", "Spearman", "median err",
             "max err");
  fmt::print("{:<40} {:>9.3f} {:>10.1f}% {:>8.1f}%\n", "default constants", before.spearman,
             100 * before.median_abs_error, 100 * before.max_abs_error);
  fmt::print("{:<40} {:>9.3f} {:>10.1f}% {:>8.1f}%\n", origin, r.quality.spearman,
             100 * r.quality.median_abs_error, 100 * r.quality.max_abs_error);
  if (o.out.empty()) return;
  write_output_file(o.out, "validate.csv", validation_csv(r, model));
  write_output_file(
      o.out, "validate_pred_vs_meas.svg",
      pred_vs_meas_svg(fmt::format("GEMMs of {} model configs' training steps on {} ({}): "
                                   "Spearman {:.3f}, median error {:.1f}%",
                                   validation_cases().size(), model.gpu().name,
                                   precision_name(model.precision()), r.quality.spearman,
                                   100 * r.quality.median_abs_error),
                       {{"step GEMMs", samples}}, model));
}

void run(const Opts& o) {
  const GpuCatalog cat = load_gpu_catalog(o.catalogs);
  if (o.list) return list_gpus(cat);
  RunConfig rc = o.config.load();
  if (!o.precision.empty()) {
    const auto p = parse_precision(o.precision);
    if (!p) fail_input("--precision {}: use fp32, tf32, bf16, fp16 or fp8", o.precision);
    rc.train.precision = *p;
  }
  const Precision p = rc.train.precision;
  if (o.tolerance <= 0 || o.tolerance >= 1) fail_input("--tolerance must be in (0, 1)");
  if (o.tp < 1) fail_input("--tp must be at least 1");
  std::unique_ptr<Measurer> m;
  if (o.measure || o.sweep || o.validate) m = std::make_unique<Measurer>(rc.train);
  const GpuSpec& gpu = pick_gpu(cat, o, m.get());
  if (o.sweep) return sweep(gpu, p, *m, o);
  const ResolvedConstants k = resolve_constants(gpu, p, o.calibration);
  const GemmModel model(gpu, p, k.constants);
  if (o.validate) return validate(model, k.origin, *m, o);

  const StepSpec c = o.config.step(rc);
  const AdvisorReport r = advise(c, model, {o.tolerance, o.top, o.tp});

  GemmMeasure measure;
  if (m) {
    measure = [&](const GemmCall& g) { return (*m)(g); };
    for (const GemmGroupPrediction& g : r.current.gemms) measure(g.gemm);
    if (!r.suggestions.empty())
      for (const GemmGroupPrediction& g : r.suggestions.front().prediction.gemms) measure(g.gemm);
  }
  const ModelConfig& mc = c.config.model;
  if (!o.out.empty()) {
    const GemmMeasure* mp = m ? &measure : nullptr;
    write_output_file(
        o.out, "shape_hidden.svg",
        curve_svg(hidden_curve(c, model, mp),
                  fmt::format("Block linear GEMMs (fwd+bwd) on {}, {}, b*s = {}", gpu.name,
                              precision_name(p), c.batch * c.seq),
                  "hidden size h (FFN width scaled with h)", static_cast<double>(mc.hidden)));
    write_output_file(o.out, "shape_head_dim.svg",
                      curve_svg(head_dim_curve(c, model, mp),
                                fmt::format("Block attention GEMMs (fwd+bwd) on {}, {}, h = {}",
                                            gpu.name, precision_name(p), mc.hidden),
                                "head size h/a", static_cast<double>(mc.head_dim())));
  }
  ReportContext ctx{&model, k.origin, m ? m->device() : "", o.tolerance,
                    m ? m->times() : MeasuredTimes{}};
  const nlohmann::json j = shape_json(r, ctx);
  if (!o.out.empty()) write_output_file(o.out, "shape.json", j.dump(1) + "\n");
  if (o.json)
    fmt::print("{}\n", j.dump(1));
  else
    fmt::print("{}", shape_text(r, ctx));
}

}  // namespace

void add_shape_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "shape", "GEMM efficiency of a config's training step on a GPU, and faster nearby shapes");
  auto o = std::make_shared<Opts>();
  add_step_options(cmd, o->config);
  cmd->add_option("--gpu", o->gpu, "GPU from the catalog (default: the GPU present, else H200)");
  cmd->add_option("--catalog", o->catalogs, "Extra GPU catalog file merged by name (repeatable)");
  cmd->add_option(
      "--precision", o->precision,
      "Precision of the GEMMs: fp32, tf32, bf16, fp16 or fp8 (default: train.precision)");
  add_deprecated_alias(cmd, "--dtype", "--precision", o->precision);
  cmd->add_option("--tolerance", o->tolerance, "Largest relative parameter change (default 0.05)");
  cmd->add_option("--top", o->top, "Suggestions to list");
  cmd->add_option("--tp", o->tp, "Tensor-parallel degree the divisibility rules check");
  cmd->add_option("--calibration", o->calibration, "Fitted GEMM constants (JSON from --sweep)");
  cmd->add_option("--out", o->out, "Folder for shape.json and SVG plots (sweep: CSV, SVG, fit)");
  cmd->add_flag("--json", o->json, "Print the report as JSON");
  cmd->add_flag("--measure", o->measure,
                "Time every GEMM on the GPU present, as hwt train runs it (cuBLASLt)");
  cmd->add_flag("--sweep", o->sweep, "Measure a grid of GEMMs and fit the model to this GPU");
  cmd->add_flag("--validate", o->validate,
                "Measure the GEMMs of published configs' steps and compare with the model");
  cmd->add_flag("--list-gpus", o->list, "Print the GPU catalog");
  cmd->callback([o] { run(*o); });
}

}  // namespace hwt
