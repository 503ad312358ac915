#include "analysis/sweep_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/csv_writer.h"
#include "report/svg_plot.h"

namespace hwt {
namespace {

std::vector<GemmSample> samples(const SweepResult& r, bool held_out) {
  std::vector<GemmSample> s;
  for (size_t i = 0; i < r.shapes.size(); ++i)
    if (r.shapes[i].held_out == held_out && std::isfinite(r.seconds[i]))
      s.push_back({r.shapes[i].shape, r.seconds[i]});
  return s;
}

}  // namespace

SweepResult run_gemm_sweep(const GpuSpec& gpu, Precision p, const GemmMeasure& measure) {
  SweepResult r;
  r.shapes = sweep_grid();
  for (const SweepShape& s : r.shapes)
    r.seconds.push_back(measure(plain_gemm(s.shape, activation_dtype(p))));
  r.start = default_constants(gpu.arch);
  const std::vector<GemmSample> fit_set = samples(r, false), held = samples(r, true);
  r.held_out_before = fit_quality(GemmModel(gpu, p, r.start), held);
  r.fitted = fit_constants(gpu, p, fit_set, r.start);
  const GemmModel fitted(gpu, p, r.fitted);
  r.held_out = fit_quality(fitted, held);
  std::vector<GemmSample> every = fit_set;
  every.insert(every.end(), held.begin(), held.end());
  r.all = fit_quality(fitted, every);
  return r;
}

std::string gemm_sweep_csv(const SweepResult& r, const GpuSpec& gpu, Precision p) {
  const GemmModel fitted(gpu, p, r.fitted), before(gpu, p, r.start);
  CsvWriter csv({"family", "m", "n", "k", "batch", "trans_a", "trans_b", "held_out", "align_bytes",
                 "measured_us", "measured_tflops", "predicted_tflops", "default_tflops", "tile",
                 "split_k"});
  for (size_t i = 0; i < r.shapes.size(); ++i) {
    const GemmShape& g = r.shapes[i].shape;
    const GemmPrediction f = fitted.predict(g);
    csv.values(r.shapes[i].family, g.m, g.n, g.k, g.batch, int(g.trans_a), int(g.trans_b),
               int(r.shapes[i].held_out), f.align_bytes, fmt::format("{:.2f}", r.seconds[i] * 1e6),
               fmt::format("{:.1f}", g.flops() / r.seconds[i] / 1e12),
               fmt::format("{:.1f}", f.tflops), fmt::format("{:.1f}", before.predict(g).tflops),
               fmt::format("{}x{}", f.tile_m, f.tile_n), f.split_k);
  }
  return csv.text();
}

std::string pred_vs_meas_svg(const std::string& title, const std::vector<SampleGroup>& groups,
                             const GemmModel& model) {
  PlotSpec spec;
  spec.title = title;
  spec.x_label = "measured TFLOP/s";
  spec.y_label = "predicted TFLOP/s";
  spec.log_x = spec.log_y = true;
  spec.width = 820;
  double lo = 1e30, hi = 0;
  for (const SampleGroup& g : groups) {
    PlotSeries s{g.label, {}, {}, false, true, ""};
    for (const GemmSample& x : g.samples) {
      const double m = x.shape.flops() / x.seconds / 1e12, p = model.predict(x.shape).tflops;
      s.x.push_back(m);
      s.y.push_back(p);
      lo = std::min({lo, m, p});
      hi = std::max({hi, m, p});
    }
    spec.series.push_back(std::move(s));
  }
  spec.series.push_back({"predicted = measured", {lo, hi}, {lo, hi}, true, false, "#7f7f7f"});
  return render_svg(spec);
}

std::string gemm_sweep_svg(const SweepResult& r, const GpuSpec& gpu, Precision p) {
  return pred_vs_meas_svg(
      fmt::format("GEMM model vs cuBLASLt on {} ({}), held out: Spearman {:.3f}, median error "
                  "{:.1f}%",
                  gpu.name, precision_name(p), r.held_out.spearman,
                  100 * r.held_out.median_abs_error),
      {{"fitted on", samples(r, false)}, {"held out", samples(r, true)}},
      GemmModel(gpu, p, r.fitted));
}

}  // namespace hwt
