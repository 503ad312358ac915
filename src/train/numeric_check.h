// Numeric faults in training: NaN or infinity in the loss, the gradients or the weights. The
// trainer checks what a step computes anyway (the loss, and the gradient norm that clipping or
// fp16 loss scaling needs) and stops with a one-line diagnosis built here.
#pragma once

#include <fmt/format.h>
#include <cstdint>

#include <deque>
#include <optional>
#include <string>

#include "model/param_store.h"

namespace hwt {

// The name of the first parameter, in flat-buffer order, whose part of `flat` (params_flat()
// or grads_flat() of `params`) holds a NaN or an infinity; nullopt when all are finite.
// Downloads the buffer.
std::optional<std::string> first_non_finite(const ParamStore& params, Tensor flat);

// Whether every weight is finite: one reduction on the device and a one-float read.
bool weights_finite(const ParamStore& params);

// `v` as fmt writes it with `spec` ("{}", "{:.4g}"), NaN without the sign fmt would give it
// ("-nan"), which means nothing.
std::string value_text(double v, fmt::format_string<double> spec = "{}");

// The last few losses the run logged, for the diagnosis.
class LossHistory {
 public:
  void add(int64_t step, double loss);
  std::string str() const;  // "step 3: 2.31, step 4: 1.9e+03, step 5: nan"

 private:
  static constexpr size_t kKept = 5;
  std::deque<std::pair<int64_t, double>> last_;
};

// What the trainer knows when it stops.
struct NumericFaultReport {
  int64_t step = 0;
  std::string what;  // "the loss is nan", "the gradient norm is inf", …
  double lr = 0;
  std::string losses;           // LossHistory::str()
  std::string last_checkpoint;  // empty: none written or resumed from
};

// One line: the step, what was not finite, the first parameter whose gradient and whose weight
// hold a non-finite value, the learning rate, the last losses and the checkpoint kept.
std::string diagnose(const NumericFaultReport& r, const ParamStore& params);

}  // namespace hwt
