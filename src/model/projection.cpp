#include "model/projection.h"

namespace hwt {

Projection::Projection(ParamStore& ps, const std::string& name, int64_t in, int64_t out, bool bias,
                       float std, const std::optional<TtChain>& tt, DimPad pad_out, DimPad pad_in) {
  if (tt)
    map_ = TtLinear(ps, name, *tt, bias, std);
  else
    map_ = Linear(ps, name, in, out, bias, std, pad_out, pad_in);
}

void Projection::plan(ActivationArena& arena, DType dt, int64_t max_rows) {
  if (auto* t = std::get_if<TtLinear>(&map_)) t->plan(arena, dt, max_rows);
}

void Projection::forward(const StepContext& c, Tensor x, Tensor y, Activation act,
                         Tensor pre_act) const {
  std::visit([&](const auto& m) { m.forward(c, x, y, act, pre_act); }, map_);
}

void Projection::backward(const StepContext& c, Tensor x, Tensor dy, Tensor dx, bool accumulate_dx,
                          Activation act, Tensor pre_act) const {
  std::visit([&](const auto& m) { m.backward(c, x, dy, dx, accumulate_dx, act, pre_act); }, map_);
}

}  // namespace hwt
