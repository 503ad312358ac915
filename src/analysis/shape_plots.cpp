#include "analysis/shape_plots.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/integer_math.h"
#include "report/svg_plot.h"

namespace hwt {
namespace {

bool in_block(const StepGemm& g) {
  return g.scope.rfind("layers.", 0) == 0;
}
bool is_linear(const StepGemm& g) {
  return g.role == GemmRole::LinearForward || g.role == GemmRole::LinearInputGrad ||
         g.role == GemmRole::LinearWeightGrad;
}

// One block's GEMMs (forward and backward) of the kind asked for.
std::vector<StepGemm> block_gemms(StepSpec c, Precision p, bool linear) {
  c.config.model.layers = 1;
  std::vector<StepGemm> out;
  for (StepGemm& g : step_gemms(trace_at(c, p)))
    if (in_block(g) && is_linear(g) == linear) out.push_back(std::move(g));
  return out;
}

CurvePoint point(double x, const std::vector<StepGemm>& gemms, const GemmModel& model,
                 const GemmMeasure* measure) {
  double flops = 0, predicted = 0, measured = 0;
  for (const StepGemm& g : gemms) {
    const double n = static_cast<double>(g.count);
    flops += g.flops();
    predicted += model.predict(g.shape).seconds * n;
    if (measure) measured += (*measure)(g)*n;
  }
  return {x, flops / predicted / 1e12, measure ? flops / measured / 1e12 : 0};
}

}  // namespace

std::vector<CurvePoint> hidden_curve(const StepSpec& c, const GemmModel& model,
                                     const GemmMeasure* measure) {
  const int64_t h = c.config.model.hidden;
  const int64_t lo = std::max<int64_t>(64, (3 * h / 4) / 2 * 2), hi = (5 * h / 4) / 2 * 2;
  std::set<int64_t> timed;
  const int64_t step = std::max<int64_t>(64, (hi - lo) / 6 / 64 * 64);
  for (int64_t base = round_up(lo, 64), i = 0; i < 6 && base + 8 <= hi; base += step, ++i)
    timed.insert({base, base + 8, base + 2});
  std::vector<CurvePoint> out;
  for (int64_t h2 = lo; h2 <= hi; h2 += 2) {
    StepSpec s = c;
    s.config.model.hidden = h2;
    s.config.model.hidden_multiple = 1;  // h2 as it is: the curve shows what misalignment costs
    s.config.model.heads = 1;
    s.config.model.ffn =
        std::max<int64_t>(1, std::llround(static_cast<double>(c.config.model.ffn) *
                                          static_cast<double>(h2) / static_cast<double>(h)));
    const bool time_it = measure && timed.count(h2);
    out.push_back(point(static_cast<double>(h2), block_gemms(s, model.precision(), true), model,
                        time_it ? measure : nullptr));
  }
  return out;
}

std::vector<CurvePoint> head_dim_curve(const StepSpec& c, const GemmModel& model,
                                       const GemmMeasure* measure) {
  const int64_t h = c.config.model.hidden;
  std::vector<CurvePoint> out;
  for (int64_t heads = h; heads >= 1; --heads) {
    if (h % heads) continue;
    const int64_t hd = h / heads;
    if (hd < 16 || hd > 512) continue;
    StepSpec s = c;
    s.config.model.heads = heads;
    out.push_back(
        point(static_cast<double>(hd), block_gemms(s, model.precision(), false), model, measure));
  }
  return out;
}

std::string curve_svg(const std::vector<CurvePoint>& points, const std::string& title,
                      const std::string& x_label, double mark_x) {
  PlotSpec spec;
  spec.title = title;
  spec.x_label = x_label;
  spec.y_label = "TFLOP/s";
  PlotSeries pred{"predicted", {}, {}, true, false, ""};
  PlotSeries meas{"measured (cuBLASLt)", {}, {}, false, true, ""};
  double top = 0;
  for (const CurvePoint& p : points) {
    pred.x.push_back(p.x);
    pred.y.push_back(p.predicted_tflops);
    top = std::max(top, p.predicted_tflops);
    if (p.measured_tflops > 0) {
      meas.x.push_back(p.x);
      meas.y.push_back(p.measured_tflops);
      top = std::max(top, p.measured_tflops);
    }
  }
  spec.series.push_back(std::move(pred));
  if (!meas.x.empty()) spec.series.push_back(std::move(meas));
  spec.series.push_back({"this config", {mark_x, mark_x}, {0, top}, true, false, "#7f7f7f"});
  return render_svg(spec);
}

}  // namespace hwt
