#include "model/tt_linear.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace hwt {

double tt_core_std(const std::vector<int64_t>& ranks, double std) {
  double interior = 1;
  for (size_t k = 1; k + 1 < ranks.size(); ++k) interior *= static_cast<double>(ranks[k]);
  return std::pow(std * std / interior, 0.5 / static_cast<double>(ranks.size() - 1));
}

TtLinear::TtLinear(ParamStore& ps, const std::string& name, TtChain chain, bool bias, float std)
    : chain_(std::move(chain)), has_bias_(bias) {
  const float core_std = static_cast<float>(tt_core_std(chain_.ranks, std));
  for (size_t k = 0; k < chain_.cores(); ++k)
    cores_.push_back(ps.add(fmt::format("{}.core{}", name, k + 1),
                            Shape{chain_.ranks[k], chain_.factors[k], chain_.ranks[k + 1]}, true,
                            Init::Normal, core_std));
  if (bias) b_ = ps.add(name + ".bias", Shape{out()}, false, Init::Zeros);
}

std::vector<std::pair<size_t, size_t>> TtLinear::roots() const {
  const size_t d = chain_.cores(), mid = chain_.out_cores;
  if (plan_.factored) return {{0, mid - 1}, {mid, d - 1}};
  return {{0, d - 1}};
}

void TtLinear::plan(ActivationArena& arena, DType dt, int64_t max_rows) {
  plan_ = plan_tt_linear(chain_, max_rows);
  runs_.clear();
  for (size_t k = 0; k < chain_.cores(); ++k) runs_.push_back(Run{k, k});
  const auto rts = roots();
  for (const TtMerge& m : plan_.merges) {
    Run r{m.first, m.last};
    const int64_t n = chain_.run_elements(m.first, m.last);
    r.value = arena.reserve(dt, n, ArenaUse::Intermediate);
    r.grad = arena.reserve(dt, n, ArenaUse::Intermediate);
    if (dt != DType::F32 && std::count(rts.begin(), rts.end(), std::pair{m.first, m.last}))
      r.grad32 = arena.reserve(DType::F32, n, ArenaUse::Intermediate);
    runs_.push_back(r);
  }
  if (plan_.factored) {
    t_ = arena.reserve(dt, max_rows * chain_.middle_rank(), ArenaUse::Intermediate);
    dt_ = arena.reserve(dt, max_rows * chain_.middle_rank(), ArenaUse::Intermediate);
  }
}

const TtLinear::Run& TtLinear::run(size_t first, size_t last) const {
  for (const Run& r : runs_)
    if (r.first == first && r.last == last) return r;
  HWT_CHECK(false, "TT layer has no run of cores {}..{} (plan() not called?)", first, last);
}

Tensor TtLinear::value(const StepContext& c, const Run& r, int64_t rows) const {
  const int64_t n = chain_.run_elements(r.first, r.last);
  const Tensor t = r.core() ? c.params.compute(cores_[r.first]) : c.arena.view(r.value, Shape{n});
  return t.view(Shape{rows, n / rows});
}

Tensor TtLinear::grad(const StepContext& c, const Run& r, int64_t rows) const {
  const int64_t n = chain_.run_elements(r.first, r.last);
  const Tensor t = r.core() ? c.params.grad(cores_[r.first]) : c.arena.view(r.grad, Shape{n});
  return t.view(Shape{rows, n / rows});
}

Tensor TtLinear::weight_grad(const StepContext& c, const Run& r, int64_t rows) const {
  if (r.core()) return grad(c, r, rows);
  const int64_t n = chain_.run_elements(r.first, r.last);
  const Tensor g =
      c.act_dtype == DType::F32 ? c.arena.view(r.grad, Shape{n}) : c.arena.view(r.grad32, Shape{n});
  c.backend.fill({g, 0.0f});
  return g.view(Shape{rows, n / rows});
}

void TtLinear::finish_weight_grad(const StepContext& c, const Run& r) const {
  if (r.core() || c.act_dtype == DType::F32) return;
  const int64_t n = chain_.run_elements(r.first, r.last);
  c.backend.convert({c.arena.view(r.grad, Shape{n}), c.arena.view(r.grad32, Shape{n})});
}

void TtLinear::forward(const StepContext& c, Tensor x, Tensor y, Activation act,
                       Tensor pre_act) const {
  Backend& be = c.backend;
  for (const TtMerge& m : plan_.merges) {
    const int64_t rows = chain_.ranks[m.first] * chain_.product(m.first, m.split);
    Matmul p;
    p.a = value(c, run(m.first, m.split), rows);
    p.b = value(c, run(m.split + 1, m.last), chain_.ranks[m.split + 1]);
    p.c = value(c, run(m.first, m.last), rows);
    be.matmul(p);
  }
  const Tensor bias = has_bias_ ? c.params.compute(b_) : Tensor{};
  const auto rts = roots();
  const Run& first = run(rts[0].first, rts[0].second);
  if (!plan_.factored) {
    be.linear_forward({x, value(c, first, out()), bias, y, act, pre_act});
    return;
  }
  const int64_t r = chain_.middle_rank();
  const Tensor t = c.act(t_, r);
  be.linear_forward(
      {x, value(c, run(rts[1].first, rts[1].second), r), {}, t, Activation::None, {}});
  be.linear_forward({t, value(c, first, out()), bias, y, act, pre_act});
}

void TtLinear::backward(const StepContext& c, Tensor x, Tensor dy, Tensor dx, bool accumulate_dx,
                        Activation act, Tensor pre_act) const {
  Backend& be = c.backend;
  const Tensor dbias = has_bias_ ? c.params.grad(b_) : Tensor{};
  const auto rts = roots();
  const Run& first = run(rts[0].first, rts[0].second);
  if (plan_.factored) {
    // The paper's flow: t = x·L'ᵀ (kept from forward) gives R''s gradient, dt = dy·R' gives
    // L''s gradient and the input gradient.
    const int64_t r = chain_.middle_rank();
    const Run& in_run = run(rts[1].first, rts[1].second);
    const Tensor t = c.act(t_, r), dt = c.act(dt_, r);
    const Tensor d_out_side = weight_grad(c, first, out()), d_in_side = weight_grad(c, in_run, r);
    be.linear_backward({t, value(c, first, out()), dy, pre_act, act, dt, d_out_side, dbias, false});
    LinearBwd in_side;
    in_side.x = x;
    in_side.w = value(c, in_run, r);
    in_side.dy = dt;
    in_side.dx = dx;
    in_side.dw = d_in_side;
    in_side.accumulate_dx = accumulate_dx;
    be.linear_backward(in_side);
    finish_weight_grad(c, in_run);
  } else {
    const Tensor dw = weight_grad(c, first, out());
    be.linear_backward({x, value(c, first, out()), dy, pre_act, act, dx, dw, dbias, accumulate_dx});
  }
  finish_weight_grad(c, first);
  // Down the merge tree: a merge P = A·B passes dA = dP·Bᵀ and dB = Aᵀ·dP; cores accumulate.
  for (auto it = plan_.merges.rbegin(); it != plan_.merges.rend(); ++it) {
    const TtMerge& m = *it;
    const int64_t rows = chain_.ranks[m.first] * chain_.product(m.first, m.split);
    const int64_t k = chain_.ranks[m.split + 1];
    const Run &a = run(m.first, m.split), &b = run(m.split + 1, m.last);
    const Tensor dp = grad(c, run(m.first, m.last), rows);
    Matmul da;
    da.a = dp;
    da.b = value(c, b, k);
    da.trans_b = true;
    da.c = grad(c, a, rows);
    da.beta = a.core() ? 1.0f : 0.0f;
    be.matmul(da);
    Matmul db;
    db.a = value(c, a, rows);
    db.trans_a = true;
    db.b = dp;
    db.c = grad(c, b, k);
    db.beta = b.core() ? 1.0f : 0.0f;
    be.matmul(db);
  }
}

}  // namespace hwt
