// Backends that forward everything to another backend and time each op on the way: the base
// (ForwardingBackend) forwards memory and scope calls and hands every op to run(), which the
// profilers define. ProfilingBackend charges the wall time of each op, synchronising before and
// after (so launches do not overlap), to "op@scope/phase". Used to break a training step down
// by op; totals exceed the unprofiled step by the sync overhead.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>

#include "backend/backend.h"

namespace hwt::bench {

class ForwardingBackend : public Backend {
 public:
  explicit ForwardingBackend(Backend& inner) : in_(inner) {}

  Device device() const override { return in_.device(); }
  void* allocate(size_t bytes) override { return in_.allocate(bytes); }
  void deallocate(void* p) override { in_.deallocate(p); }
  void upload(Tensor dst, const void* host) override { in_.upload(dst, host); }
  void download(void* host, Tensor src) override { in_.download(host, src); }
  void synchronize() override { in_.synchronize(); }
  void set_scope(std::string_view label, Phase phase) override {
    // Layers differ only by index: "layers.3.mlp" is charged to "mlp".
    scope_ = std::string(label);
    if (scope_.rfind("layers.", 0) == 0) scope_ = scope_.substr(scope_.find('.', 7) + 1);
    phase_ = phase;
    in_.set_scope(label, phase);
  }

#define HWT_FORWARDED_OP(name, Args)     \
  void name(const Args& a) override {    \
    run(Op::name, [&] { in_.name(a); }); \
  }
  HWT_BACKEND_OPS(HWT_FORWARDED_OP)
#undef HWT_FORWARDED_OP

 protected:
  virtual void run(Op op, const std::function<void()>& f) = 0;

  Backend& in_;
  std::string scope_;
  Phase phase_ = Phase::Other;
};

class ProfilingBackend final : public ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  const std::map<std::string, std::pair<double, int>>& totals() const { return totals_; }
  void clear() { totals_.clear(); }
  std::string name() const override { return "profiled " + in_.name(); }

 private:
  void run(Op op, const std::function<void()>& f) override {
    in_.synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    f();
    in_.synchronize();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    auto& t =
        totals_[std::string(op_name(op)) + "@" + scope_ + "/" + std::string(phase_name(phase_))];
    t.first += ms;
    t.second += 1;
  }

  std::map<std::string, std::pair<double, int>> totals_;
};

}  // namespace hwt::bench
