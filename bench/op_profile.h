// ProfilingBackend: forwards every op to another backend and charges the device time of each
// (synchronising before and after, so launches do not overlap) to "op" or "op@scope". Used to
// break a training step down by op; totals exceed the unprofiled step by the sync overhead.
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "backend/backend.h"

namespace hwt::bench {

class ProfilingBackend final : public Backend {
 public:
  explicit ProfilingBackend(Backend& inner) : in_(inner) {}
  const std::map<std::string, std::pair<double, int>>& totals() const { return totals_; }
  void clear() { totals_.clear(); }

  Device device() const override { return in_.device(); }
  std::string name() const override { return "profiled " + in_.name(); }
  void* allocate(size_t bytes) override { return in_.allocate(bytes); }
  void deallocate(void* p) override { in_.deallocate(p); }
  void upload(Tensor dst, const void* host) override { in_.upload(dst, host); }
  void download(void* host, Tensor src) override { in_.download(host, src); }
  void synchronize() override { in_.synchronize(); }
  void set_scope(std::string_view label, Phase phase) override {
    scope_ = std::string(label);
    phase_ = phase;
    in_.set_scope(label, phase);
  }

#define HWT_PROFILED_OP(name, Args)      \
  void name(const Args& a) override {    \
    run(Op::name, [&] { in_.name(a); }); \
  }
  HWT_BACKEND_OPS(HWT_PROFILED_OP)
#undef HWT_PROFILED_OP

 private:
  template <class F>
  void run(Op op, F f) {
    in_.synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    f();
    in_.synchronize();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    // Layers differ only by index: group "layers.3.mlp" as "mlp".
    std::string where = scope_;
    if (where.rfind("layers.", 0) == 0) where = where.substr(where.find('.', 7) + 1);
    auto& t =
        totals_[std::string(op_name(op)) + "@" + where + "/" + std::string(phase_name(phase_))];
    t.first += ms;
    t.second += 1;
  }

  Backend& in_;
  std::string scope_;
  Phase phase_ = Phase::Other;
  std::map<std::string, std::pair<double, int>> totals_;
};

}  // namespace hwt::bench
