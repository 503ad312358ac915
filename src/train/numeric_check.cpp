#include "train/numeric_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace hwt {

std::optional<std::string> first_non_finite(const ParamStore& params, Tensor flat) {
  std::vector<float> host(static_cast<size_t>(flat.numel()));
  params.backend().download(host.data(), flat);
  std::vector<const ParamInfo*> order;
  for (const ParamInfo& p : params.infos()) order.push_back(&p);
  std::sort(order.begin(), order.end(),
            [](const ParamInfo* a, const ParamInfo* b) { return a->offset < b->offset; });
  for (const ParamInfo* p : order) {
    const float* begin = host.data() + p->offset;
    if (std::any_of(begin, begin + p->shape.numel(), [](float x) { return !std::isfinite(x); }))
      return p->name;
  }
  return std::nullopt;
}

bool weights_finite(const ParamStore& params) {
  Backend& be = params.backend();
  DeviceBuffer sum(be, sizeof(float));
  const Tensor out = sum.tensor(DType::F32, Shape{1});
  be.sum_squares({params.params_flat(), out});
  float host = 0;
  be.download(&host, out);
  // A sum of squares overflows for weights above ~1e19, far past any trained model's; those
  // count as diverged too.
  return std::isfinite(host);
}

std::string value_text(double v, fmt::format_string<double> spec) {
  return fmt::format(spec, std::isnan(v) ? std::fabs(v) : v);
}

void LossHistory::add(int64_t step, double loss) {
  last_.emplace_back(step, loss);
  if (last_.size() > kKept) last_.pop_front();
}

std::string LossHistory::str() const {
  std::vector<std::string> parts;
  for (const auto& [step, loss] : last_)
    parts.push_back(fmt::format("step {}: {}", step, value_text(loss, "{:.4g}")));
  return parts.empty() ? "none logged" : fmt::format("{}", fmt::join(parts, ", "));
}

std::string diagnose(const NumericFaultReport& r, const ParamStore& params) {
  const std::optional<std::string> grad = first_non_finite(params, params.grads_flat());
  const std::optional<std::string> weight = first_non_finite(params, params.params_flat());
  return fmt::format(
      "training stopped at step {}: {}; first non-finite gradient: {}; first non-finite weight: "
      "{}; learning rate {:.4g}; last losses: {}; {}",
      r.step, r.what, grad ? "'" + *grad + "'" : "none", weight ? "'" + *weight + "'" : "none",
      r.lr, r.losses,
      r.last_checkpoint.empty() ? "no checkpoint was written"
                                : "the last good checkpoint is " + r.last_checkpoint);
}

}  // namespace hwt
