// CUDA graph capture (Backend::begin_capture / end_capture, CaptureScope): training steps whose
// forward and backward are captured match uncaptured ones bit for bit, and calls that cannot be
// captured fail with a clear error and leave the backend usable.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cuda_test_util.h"
#include "model/model.h"
#include "model_test_util.h"
#include "test_util.h"
#include "train/optimizer.h"

namespace hwt {
namespace {

using Vec = std::vector<float>;
using BatchShape = std::pair<int64_t, int64_t>;  // batch, seq

struct Trained {
  Vec losses;  // per step
  Vec params;  // master parameters after the last step
};

// AdamW steps of a bf16 decoder from a fixed start on a backend of its own: step s trains on
// fresh data of shape shapes[(s - 1) % size] with its own dropout seed. Steps from
// `first_captured` on (0: none) have their forward and backward captured.
Trained train(int steps, int first_captured, const std::vector<BatchShape>& shapes) {
  const std::unique_ptr<Backend> be = test::fresh_gpu();
  // Head size 64 (the tensor-core attention in bf16) and dropout: captures must pick up each
  // step's seed.
  const ModelConfig cfg = test::small_decoder(2);
  Model model(cfg, *be, DType::BF16);
  model.plan(4, 32);
  model.init_parameters(7);
  Optimizer opt(OptimConfig{}, model.params(), 1.0);
  Trained out;
  for (int step = 1; step <= steps; ++step) {
    const BatchShape shape = shapes[static_cast<size_t>(step - 1) % shapes.size()];
    model.params().zero_grads();
    model.set_batch(
        test::random_batch(cfg, shape.first, shape.second, 100 + static_cast<uint64_t>(step)));
    CaptureScope capture(*be, first_captured > 0 && step >= first_captured);
    model.forward(true, 1000 + static_cast<uint64_t>(step));
    model.backward();
    capture.launch();
    out.losses.push_back(static_cast<float>(model.losses().mean()));
    opt.step(step, 1e-3);
  }
  out.params.resize(static_cast<size_t>(model.params().count()));
  be->download(out.params.data(), model.params().params_flat());
  return out;
}

TEST(CudaGraph, CapturedStepsMatchUncapturedBitwise) {
  HWT_REQUIRE_GPU();
  const std::vector<BatchShape> shape = {{4, 32}};
  const Trained eager = train(5, 0, shape);
  const Trained graph = train(5, 2, shape);  // step 1 uncaptured: it grows scratch
  EXPECT_EQ(graph.losses, eager.losses);
  EXPECT_TRUE(graph.params == eager.params) << "parameters differ after 5 steps";
  EXPECT_LT(eager.losses.back(), eager.losses.front()) << "the run should learn";
}

TEST(CudaGraph, CapturesOfAlternatingShapesMatchUncapturedBitwise) {
  HWT_REQUIRE_GPU();
  // Three shapes over the backend's two executable graphs: each capture from step 6 on
  // replaces a graph of another shape, which is updated or instantiated afresh and must run
  // the new one.
  const std::vector<BatchShape> shapes = {{4, 32}, {3, 20}, {2, 24}};
  const Trained eager = train(9, 0, shapes);
  const Trained graph = train(9, 4, shapes);  // steps 1 to 3 warm the shapes up
  EXPECT_EQ(graph.losses, eager.losses);
  EXPECT_TRUE(graph.params == eager.params) << "parameters differ after 9 steps";
}

// What `fn` throws as hwt::Error, or "" when it returns.
std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

void expect_contains(const std::string& s, const std::string& needle) {
  EXPECT_NE(s.find(needle), std::string::npos) << "expected '" << needle << "' in: " << s;
}

TEST(CudaGraph, CallsThatCannotBeCapturedFailAndLeaveTheBackendUsable) {
  HWT_REQUIRE_GPU();
  const std::unique_ptr<Backend> be = test::fresh_gpu();
  DeviceBuffer buf(*be, 256 * sizeof(float));
  const Tensor t = buf.tensor(DType::F32, Shape{256});
  Vec host(256, 3.0f), got(256);
  const std::vector<std::pair<std::string, std::function<void()>>> calls = {
      {"synchronize()", [&] { be->synchronize(); }},
      {"download()", [&] { be->download(host.data(), t); }},
      {"upload()", [&] { be->upload(t, host.data()); }},
      {"allocate()", [&] { DeviceBuffer more(*be, 1024); }},
  };
  for (const auto& [name, call] : calls) {
    SCOPED_TRACE(name);
    be->fill({t, 1.0f});
    be->begin_capture();
    be->fill({t, 2.0f});  // recorded, then dropped with the aborted capture
    expect_contains(error_of(call), name + " is not allowed inside a CUDA graph capture");
    be->download(got.data(), t);
    EXPECT_EQ(got, Vec(256, 1.0f));
  }
  // A CaptureScope left by any other exception aborts its capture too.
  DeviceBuffer small(*be, 16 * sizeof(float));
  EXPECT_NE(error_of([&] {
              CaptureScope capture(*be, true);
              be->fill({t, 2.0f});
              be->copy({t, small.tensor(DType::F32, Shape{16})});  // size mismatch: throws
              capture.launch();
            }),
            "");
  be->download(got.data(), t);
  EXPECT_EQ(got, Vec(256, 1.0f));
  // And the next capture runs.
  CaptureScope capture(*be, true);
  be->fill({t, 4.0f});
  capture.launch();
  be->download(got.data(), t);
  EXPECT_EQ(got, Vec(256, 4.0f));
}

// `op`'s first run, inside a capture, fails with `message`; run uncaptured it prepares what
// it needs (scratch, GEMM plans); captured afterwards it writes `out` exactly as then.
void expect_refused_then_captured(Backend& be, test::DevPool& p, Tensor out,
                                  const std::string& message, const std::function<void()>& op) {
  be.begin_capture();
  expect_contains(error_of(op), message);
  op();
  const Vec want = p.read(out);
  be.fill({out, NAN});
  CaptureScope capture(be, true);
  op();
  capture.launch();
  EXPECT_EQ(p.read(out), want);
}

TEST(CudaGraph, ScratchGrowsOnlyOutsideCaptures) {
  HWT_REQUIRE_GPU();
  const std::unique_ptr<Backend> be = test::fresh_gpu();  // no scratch yet
  test::DevPool p(*be, DType::F32);
  const int64_t rows = 96, cols = 128;
  LayerNormFwd f{p.f32(Shape{rows, cols}, test::randn(rows * cols, 1)),
                 p.f32(Shape{cols}, test::randn(cols, 2)),
                 p.f32(Shape{cols}, test::randn(cols, 3)),
                 p.make(DType::F32, Shape{rows, cols}),
                 p.make(DType::F32, Shape{rows}),
                 p.make(DType::F32, Shape{rows})};
  be->layernorm_forward(f);
  LayerNormBwd l{f.x,
                 f.gamma,
                 f.mean,
                 f.rstd,
                 p.f32(Shape{rows, cols}, test::randn(rows * cols, 4)),
                 p.poisoned(DType::F32, Shape{rows, cols}),
                 p.zeros(Shape{cols}),
                 p.zeros(Shape{cols})};
  expect_refused_then_captured(*be, p, l.dx, "growing scratch memory",
                               [&] { be->layernorm_backward(l); });
}

TEST(CudaGraph, AutotuningANewGemmShapeOnlyOutsideCaptures) {
  HWT_REQUIRE_GPU();
  TrainConfig o;
  o.gemm_autotune = true;
  const std::unique_ptr<Backend> be = test::fresh_gpu(o);
  test::DevPool p(*be, DType::F32);
  const Matmul m{p.f32(Shape{64, 32}, test::randn(64 * 32, 5)),
                 p.f32(Shape{32, 48}, test::randn(32 * 48, 6)),
                 p.poisoned(DType::F32, Shape{64, 48})};
  expect_refused_then_captured(*be, p, m.c, "autotuning a new GEMM shape (48x64x32)",
                               [&] { be->matmul(m); });
}

}  // namespace
}  // namespace hwt
