// A block's linear map: a dense Linear, or a TtLinear when its layer kind has model.tt factors.
#pragma once

#include <optional>
#include <string>
#include <variant>

#include "model/linear.h"
#include "model/tt_linear.h"

namespace hwt {

class Projection {
 public:
  Projection() = default;
  // A TtLinear of `tt`'s chain when given, else a dense [out, in] Linear whose storage pads
  // pad_out rows and pad_in columns (Linear's).
  Projection(ParamStore& ps, const std::string& name, int64_t in, int64_t out, bool bias, float std,
             const std::optional<TtChain>& tt, DimPad pad_out = {}, DimPad pad_in = {});

  // Reserves a tensor train's intermediates for up to max_rows rows (dense: nothing).
  void plan(ActivationArena& arena, DType dt, int64_t max_rows);
  // As Linear::forward/backward.
  void forward(const StepContext& c, Tensor x, Tensor y, Activation act = Activation::None,
               Tensor pre_act = {}) const;
  void backward(const StepContext& c, Tensor x, Tensor dy, Tensor dx, bool accumulate_dx = false,
                Activation act = Activation::None, Tensor pre_act = {}) const;
  int64_t out() const {  // output width as stored
    return std::visit([](const auto& m) { return m.out(); }, map_);
  }
  // The tensor train, if this is one; the dense map, if this is one.
  const TtLinear* tt() const { return std::get_if<TtLinear>(&map_); }
  const Linear* dense() const { return std::get_if<Linear>(&map_); }

 private:
  std::variant<Linear, TtLinear> map_;
};

}  // namespace hwt
