#include "measure/gemm_timer.h"

#include <algorithm>
#include <vector>

#include "core/philox.h"
#include "measure/device_time.h"

namespace hwt {
namespace {

enum Slot : size_t { kA, kB, kC, kBias, kPreAct };

Shape stored(int64_t batch, int64_t rows, int64_t cols) {
  return batch > 1 ? Shape{batch, rows, cols} : Shape{rows, cols};
}

}  // namespace

GemmTimer::GemmTimer(Backend& backend) : backend_(backend) {}

void GemmTimer::randomize(Tensor t) {
  constexpr int64_t kBlock = int64_t{1} << 20;
  if (!block_.data()) {
    std::vector<float> host(kBlock);
    for (int64_t i = 0; i < kBlock; ++i)  // [-1, 1) shifted off zero
      host[static_cast<size_t>(i)] =
          2.0f * philox_uniform(7, static_cast<uint64_t>(i)) - 1.0f + 1.0f / 1024;
    block_ = DeviceBuffer(backend_, kBlock * sizeof(float));
    backend_.upload(block_.tensor(DType::F32, Shape{kBlock}), host.data());
  }
  for (int64_t off = 0; off < t.numel(); off += kBlock) {
    const int64_t n = std::min(kBlock, t.numel() - off);
    backend_.convert({t.flat_slice(off, n), block_.tensor(DType::F32, Shape{n})});
  }
}

Tensor GemmTimer::operand(size_t slot, DType dtype, Shape shape, bool read) {
  Buffer& b = buffers_[slot];
  const size_t bytes = static_cast<size_t>(shape.numel()) * dtype_size(dtype);
  if (b.memory.bytes() < bytes) {
    b.memory = DeviceBuffer(backend_, bytes);
    b.random = false;
  }
  const Tensor t = b.memory.tensor(dtype, shape);
  if (read && !(b.random && b.dtype == dtype && b.elements >= shape.numel())) {
    randomize(
        b.memory.tensor(dtype, Shape{static_cast<int64_t>(b.memory.bytes() / dtype_size(dtype))}));
    b.random = true;
    b.dtype = dtype;
    b.elements = static_cast<int64_t>(b.memory.bytes() / dtype_size(dtype));
  }
  return t;
}

double GemmTimer::seconds(const GemmCall& g) {
  if (auto it = times_.find(g); it != times_.end()) return it->second;
  const GemmShape& s = g.shape;
  Matmul m;
  m.trans_a = s.trans_a;
  m.trans_b = s.trans_b;
  m.a =
      operand(kA, g.dtype, s.trans_a ? stored(s.batch, s.k, s.m) : stored(s.batch, s.m, s.k), true);
  m.b =
      operand(kB, g.dtype, s.trans_b ? stored(s.batch, s.n, s.k) : stored(s.batch, s.k, s.n), true);
  // C is read only when the product accumulates into it.
  m.c = operand(kC, g.out_dtype, stored(s.batch, s.m, s.n), g.accumulate);
  m.beta = g.accumulate ? 1.0f : 0.0f;
  if (g.bias) m.bias = operand(kBias, g.out_dtype, Shape{s.n}, true);
  m.act = g.act;
  if (g.act != Activation::None) m.pre_act = operand(kPreAct, g.out_dtype, m.c.shape, false);
  const double t = median_seconds(backend_, [&] { backend_.matmul(m); });
  return times_[g] = t;
}

}  // namespace hwt
