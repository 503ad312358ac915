// Optimizer ops against direct double-precision implementations of torch.optim.AdamW,
// torch.optim.SGD and Adan as Xie et al. (2022) and sail-sg/Adan state it, over several steps, with
// clipping and a weight-decay boundary in the flat buffer.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "test_util.h"

namespace hwt {
namespace {

using test::randn;
using test::rel_err;
using Vec = std::vector<double>;

constexpr int64_t kN = 300, kDecay = 200, kSteps = 5;
constexpr double kMaxNorm = 3.0;

struct Grads {
  std::vector<std::vector<float>> g;
  Grads() {
    for (int s = 0; s < kSteps; ++s) g.push_back(randn(kN, 1000 + static_cast<uint64_t>(s), 0.5f));
  }
  // The clipped gradient of step s (torch clip_grad_norm_ convention: max/(norm + 1e-6)).
  Vec clipped(int s) const {
    double sq = 0;
    for (float v : g[static_cast<size_t>(s)]) sq += static_cast<double>(v) * v;
    const double c = std::min(1.0, kMaxNorm / (std::sqrt(sq) + 1e-6));
    Vec out;
    for (float v : g[static_cast<size_t>(s)]) out.push_back(v * c);
    return out;
  }
};

class OptimizerOps : public ::testing::Test {
 protected:
  CpuBackend be{2};
  test::TensorPool pool{be};
  Grads grads;
  std::vector<float> p0 = randn(kN, 7);

  // Runs kSteps updates through the backend; `step` issues the op for one step.
  template <class Step>
  std::vector<float> run(Step step) {
    const Tensor p = pool.f32({kN}, p0), g = pool.zeros({kN}), norm = pool.zeros({1});
    for (int s = 0; s < kSteps; ++s) {
      be.upload(g, grads.g[static_cast<size_t>(s)].data());
      be.sum_squares({g, norm});
      step(OptimizerTensors{p, g, {}, kDecay}, GradClip{norm, static_cast<float>(kMaxNorm)}, s + 1);
    }
    return pool.read(p);
  }
};

TEST_F(OptimizerOps, AdamWMatchesTorchFormula) {
  const double lr = 1e-2, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.1;
  const Tensor m = pool.zeros({kN}), v = pool.zeros({kN});
  const auto got = run([&](OptimizerTensors t, GradClip c, int64_t k) {
    be.adamw_step({t, m, v, c,
                   at_step(AdamWHyper{float(lr), float(b1), float(b2), float(eps), float(wd)}, k)});
  });
  Vec p(p0.begin(), p0.end()), mm(kN, 0), vv(kN, 0);
  for (int s = 0; s < kSteps; ++s) {
    const Vec g = grads.clipped(s);
    const double k = s + 1;
    for (int64_t i = 0; i < kN; ++i) {
      const size_t j = static_cast<size_t>(i);
      p[j] *= 1 - lr * (i < kDecay ? wd : 0);
      mm[j] = b1 * mm[j] + (1 - b1) * g[j];
      vv[j] = b2 * vv[j] + (1 - b2) * g[j] * g[j];
      p[j] -=
          lr * (mm[j] / (1 - std::pow(b1, k))) / (std::sqrt(vv[j] / (1 - std::pow(b2, k))) + eps);
    }
  }
  EXPECT_LT(rel_err(got, p), 1e-6);
}

class AdanOps : public OptimizerOps, public ::testing::WithParamInterface<bool> {};

TEST_P(AdanOps, MatchesPapersFormula) {
  const bool no_prox = GetParam();
  const double lr = 1e-2, b1 = 0.98, b2 = 0.92, b3 = 0.99, eps = 1e-8, wd = 0.05;
  const Tensor m = pool.zeros({kN}), v = pool.zeros({kN}), n = pool.zeros({kN});
  const Tensor prev = pool.f32({kN}, randn(kN, 99));  // garbage: step 1 must ignore it (d_1 = 0)
  const auto got = run([&](OptimizerTensors t, GradClip c, int64_t k) {
    be.adan_step({t, m, v, n, prev, c,
                  at_step(AdanHyper{float(lr), float(b1), float(b2), float(b3), float(eps),
                                    float(wd), no_prox},
                          k)});
  });
  Vec p(p0.begin(), p0.end()), mm(kN, 0), vv(kN, 0), nn(kN, 0), gprev(kN, 0);
  for (int s = 0; s < kSteps; ++s) {
    const Vec g = grads.clipped(s);
    const double k = s + 1;
    for (int64_t i = 0; i < kN; ++i) {
      const size_t j = static_cast<size_t>(i);
      const double d = s == 0 ? 0 : g[j] - gprev[j];
      mm[j] = b1 * mm[j] + (1 - b1) * g[j];
      vv[j] = b2 * vv[j] + (1 - b2) * d;
      nn[j] = b3 * nn[j] + (1 - b3) * (g[j] + b2 * d) * (g[j] + b2 * d);
      const double denom = std::sqrt(nn[j]) / std::sqrt(1 - std::pow(b3, k)) + eps;
      const double w = i < kDecay ? wd : 0;
      if (no_prox) p[j] *= 1 - lr * w;
      p[j] -= lr / (1 - std::pow(b1, k)) * mm[j] / denom +
              lr * b2 / (1 - std::pow(b2, k)) * vv[j] / denom;
      if (!no_prox) p[j] /= 1 + lr * w;
      gprev[j] = g[j];
    }
  }
  EXPECT_LT(rel_err(got, p), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Decay, AdanOps, ::testing::Bool());

class SgdOps : public OptimizerOps, public ::testing::WithParamInterface<bool> {};

TEST_P(SgdOps, MatchesTorchFormula) {
  const bool nesterov = GetParam();
  const double lr = 0.05, mu = 0.9, wd = 0.01;
  const Tensor buf = pool.f32({kN}, randn(kN, 5));  // ignored at step 1
  const auto got = run([&](OptimizerTensors t, GradClip c, int64_t k) {
    be.sgd_step({t, buf, c, at_step(SgdHyper{float(lr), float(mu), float(wd), nesterov}, k)});
  });
  Vec p(p0.begin(), p0.end()), b(kN, 0);
  for (int s = 0; s < kSteps; ++s) {
    const Vec g = grads.clipped(s);
    for (int64_t i = 0; i < kN; ++i) {
      const size_t j = static_cast<size_t>(i);
      double d = g[j] + (i < kDecay ? wd : 0) * p[j];
      b[j] = s == 0 ? d : mu * b[j] + d;
      d = nesterov ? d + mu * b[j] : b[j];
      p[j] -= lr * d;
    }
  }
  EXPECT_LT(rel_err(got, p), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Momentum, SgdOps, ::testing::Bool());

}  // namespace
}  // namespace hwt
