// Each fused CUDA op at the training shapes of configs/gpt2_124m.toml (B16 T1024, bf16):
// median time, achieved bandwidth and FLOP rate against the rooflines measured in the same run
// (device copy bandwidth; an 8192³ bf16 GEMM). Bytes and FLOPs are the TraceBackend's minimum
// counts for the op. bench/kernels.py times the PyTorch counterparts.
//   bench_kernels [SUBSTRING]   (only the ops whose name contains it)
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <tuple>
#include <utility>
#include <vector>

#include "backend/trace/trace_backend.h"
#include "config/run_config.h"
#include "core/integer_math.h"
#include "core/philox.h"
#include "cuda_bench_util.h"
#include "measure/device_time.h"
#include "train/run_setup.h"
#ifdef HWT_WITH_CUDA
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_gemm.h"
#endif

namespace hwt::bench {
namespace {

std::unique_ptr<Backend> cuda_backend(bool deterministic_attention,
                                      Precision precision = Precision::Fp32) {
  TrainConfig t;
  t.device = DeviceChoice::Cuda;
  t.deterministic_attention = deterministic_attention;
  t.precision = precision;
  return make_backend(t);
}

double time_ms(Backend& be, const std::function<void()>& fn, int warm, int reps) {
  DeviceTiming t;
  t.warm = warm;
  t.batches = reps;
  t.max_calls_per_batch = 200;
  return 1e3 * median_seconds(be, fn, t);
}

class Bench {
 public:
  explicit Bench(std::string only)
      : be_(cuda_backend(true)),
        atomic_attention_(cuda_backend(false)),
        tf32_(cuda_backend(true, Precision::Tf32)),
        only_(std::move(only)) {}
  Backend& be() { return *be_; }
  // The same device with CudaOptions::deterministic_attention false (its own stream).
  Backend& atomic_attention() { return *atomic_attention_; }
  // The same device with TF32 products for fp32 tensors (train.precision tf32).
  Backend& tf32() { return *tf32_; }

  Tensor make(DType dt, Shape s, bool random = true) {
    bufs_.emplace_back(*be_, static_cast<size_t>(s.numel()) * dtype_size(dt));
    Tensor t = bufs_.back().tensor(dt, s);
    if (random) randomize(t);
    return t;
  }
  // Normal(0, 1)-ish data from a 4M-element random block tiled over the tensor.
  void randomize(Tensor t) {
    constexpr int64_t kBlock = 1 << 22;
    if (!block_.data()) {
      std::vector<float> host(kBlock);
      for (int64_t i = 0; i < kBlock; ++i)
        host[static_cast<size_t>(i)] = 2.0f * philox_uniform(7, static_cast<uint64_t>(i)) - 1.0f;
      block_ = DeviceBuffer(*be_, kBlock * 4);
      be_->upload(block_.tensor(DType::F32, Shape{kBlock}), host.data());
    }
    if (t.dtype == DType::I32) return;
    for (int64_t off = 0; off < t.numel(); off += kBlock) {
      const int64_t n = std::min(kBlock, t.numel() - off);
      be_->convert({t.flat_slice(off, n), block_.tensor(DType::F32, Shape{n})});
    }
  }
  bool wants(const std::string& name) const { return name.find(only_) != std::string::npos; }
  // Times `run` on `on` (default: be()); the trace backend's record of the same op gives its
  // bytes and FLOPs.
  void op(const std::string& name, const std::function<void(Backend&)>& run,
          double flop_scale = 1.0, Backend* on = nullptr) {
    if (name.find(only_) == std::string::npos) return;
    Backend& target = on ? *on : *be_;
    be_->synchronize();  // inputs are made on be()'s stream
    TraceBackend trace;
    run(trace);
    double bytes = 0, flops = 0;
    for (const OpRecord& r : trace.workload().ops) {
      bytes += r.bytes_read + r.bytes_written;
      flops += r.flops * flop_scale;
    }
    const double ms = time_ms(
        target, [&] { run(target); }, 3, 20);
    const double gbps = bytes / ms / 1e6, tflops = flops / ms / 1e9;
    const double t_mem = bytes / (copy_gbps_ * 1e6), t_math = flops / (gemm_tflops_ * 1e9);
    emit(
        fmt::format("{{\"bench\": \"kernel\", \"impl\": \"hwt\", \"op\": \"{}\", \"ms\": {:.4f}, "
                    "\"GBps\": {:.0f}, \"TFLOPs\": {:.1f}, \"bound\": \"{}\", "
                    "\"roofline_fraction\": {:.3f}}}",
                    name, ms, gbps, tflops, t_mem > t_math ? "memory" : "compute",
                    std::max(t_mem, t_math) / ms));
  }
  void rooflines() {
    const int64_t n = int64_t{1} << 28;  // 1 GiB of f32
    Tensor a = make(DType::F32, Shape{n}, false), b = make(DType::F32, Shape{n}, false);
    be_->fill({a, 1.0f});
    const double ms = time_ms(
        *be_,
        [&] {
          be_->copy({b, a});
        },
        3, 20);
    copy_gbps_ = 2.0 * static_cast<double>(n) * 4 / ms / 1e6;
    const int64_t m = 8192;
    Tensor x = make(DType::BF16, Shape{m, m}), y = make(DType::BF16, Shape{m, m});
    Tensor z = make(DType::BF16, Shape{m, m}, false);
    const double gms = time_ms(
        *be_,
        [&] {
          be_->matmul({x, y, z});
        },
        3, 10);
    gemm_tflops_ = 2.0 * static_cast<double>(m * m) * static_cast<double>(m) / gms / 1e9;
    emit(fmt::format(
        "{{\"bench\": \"roofline\", \"copy_GBps\": {:.0f}, \"gemm_bf16_TFLOPs\": {:.1f}}}",
        copy_gbps_, gemm_tflops_));
    bufs_.clear();
  }

 private:
  std::unique_ptr<Backend> be_;
  std::unique_ptr<Backend> atomic_attention_;
  std::unique_ptr<Backend> tf32_;
  std::string only_;  // time only ops whose name contains this
  std::vector<DeviceBuffer> bufs_;
  DeviceBuffer block_;
  double copy_gbps_ = 4300, gemm_tflops_ = 790;
};

// Causal attention at B8 T1024 with 16 heads of each head size the kernels are built for
// (bf16), and fp32 as TF32 at head sizes 64 and 128: bench/kernels.py times SDPA alike.
#ifdef HWT_WITH_CUDA
// A batch-1 decode step's products, one row times a weight matrix (GPT-2 124M's and
// Llama-3-8B's), as linear_forward runs them (the matrix-vector kernel, cuda_gemv.cu, where it
// serves the shape) and as cuBLASLt's GEMM runs
// the same operands with its default heuristic (what linear_forward ran before): median device
// times and the rate at which each reads the weights.
// The device time of one `call` timed as a CUDA graph of 20 calls, as a decode step runs its
// ops: without the host's cost of a launch, which exceeds a small op's device time.
double graph_ms(CudaBackend& cuda, const std::function<void()>& call, int calls = 20) {
  call();  // outside the capture: heuristics, workspace, kernel attributes
  cuda.synchronize();
  cuda.begin_capture();
  for (int i = 0; i < calls; ++i) call();
  constexpr uint64_t kKey = 0x6465636f6465;  // one graph at a time
  cuda.end_capture_kept(kKey);
  const double ms = time_ms(
      cuda, [&] { cuda.replay_kept(kKey); }, 3, 20);
  cuda.drop_kept(kKey);
  return ms / calls;
}

// A decode step's new k and v appended to the cache under rotary positions, batch 1 at
// position 100 of a 512-token cache, SmolLM-135M's heads (9 over 3, head size 64) and
// Llama-3-8B's (32 over 8, 128), bf16: rope_forward then kv_append (how a decode step ran
// before kv_append took the rotation in) against kv_append turning q and k itself.
void decode_rotary_append(Bench& k) {
  auto& cuda = dynamic_cast<CudaBackend&>(k.be());
  struct Heads {
    const char* name;
    int64_t H, kv, D;
  };
  for (const Heads& s : {Heads{"smollm", 9, 3, 64}, Heads{"llama3_8b", 32, 8, 128}}) {
    const std::string name = fmt::format("decode rotary append {}", s.name);
    if (!k.wants(name)) continue;
    const int64_t cap = 512, width = (s.H + 2 * s.kv) * s.D;
    const Tensor qkv = k.make(DType::BF16, {1, width});
    const KvCache cache{k.make(DType::BF16, {1, s.kv, cap, s.D}, false),
                        k.make(DType::BF16, {1, s.kv, cap, s.D}, false)};
    const Tensor cos = k.make(DType::F32, {cap, s.D / 2}, false),
                 sin = k.make(DType::F32, {cap, s.D / 2}, false);
    cuda.fill({cos, 0.6f});  // a true rotation (cos² + sin² = 1): repeated turns keep the size
    cuda.fill({sin, 0.8f});
    const Tensor position = k.make(DType::I32, {1}, false);
    const int32_t at = 100;
    cuda.upload(position, &at);
    const Rope rope{qkv, cos, sin, 1, s.H, s.kv, s.D, s.D};
    Rope by_position = rope;
    by_position.positions = position;
    const double apart_ms = graph_ms(cuda, [&] {
      cuda.rope_forward(by_position);
      cuda.kv_append({qkv, cache, position, 1, s.H, s.kv, s.D});
    });
    const double fused_ms = graph_ms(cuda, [&] {
      cuda.kv_append({qkv, cache, position, 1, s.H, s.kv, s.D, rope});
    });
    emit(
        fmt::format("{{\"bench\": \"decode_rotary_append\", \"op\": \"{}\", "
                    "\"rope_then_append_ms\": {:.4f}, \"append_turning_ms\": {:.4f}, "
                    "\"speedup\": {:.2f}}}",
                    name, apart_ms, fused_ms, apart_ms / fused_ms));
  }
}

void decode_linears(Bench& k) {
  auto& cuda = dynamic_cast<CudaBackend&>(k.be());
  cuda::Gemm lt(false, false);  // cuBLASLt as the backend holds it: fp32 math, no autotuning
  struct Product {
    const char* name;
    int64_t n, k;
  };
  const Product products[] = {{"gpt2 qkv", 2304, 768},
                              {"gpt2 attn out", 768, 768},
                              {"gpt2 fc", 3072, 768},
                              {"gpt2 fc out", 768, 3072},
                              {"gpt2 lm head", 50304, 768},
                              {"llama3_8b qkv", 6144, 4096},
                              {"llama3_8b attn out", 4096, 4096},
                              {"llama3_8b gate|up", 28672, 4096},
                              {"llama3_8b down", 4096, 14336},
                              {"llama3_8b lm head", 128256, 4096}};
  for (const Product& p : products) {
    const std::string name = fmt::format("decode linear {}", p.name);
    if (!k.wants(name)) continue;
    // A decode step reads each weight once, from memory: the calls cycle through copies of w
    // that together are several times the largest L2 (50 MB on H100 and H200), so no call
    // finds its weights left in L2 by an earlier one.
    constexpr int64_t kCycledBytes = int64_t{256} << 20;
    const int64_t bytes = 2 * p.n * p.k;
    const int copies = static_cast<int>(std::clamp<int64_t>(ceil_div(kCycledBytes, bytes), 1, 64));
    std::vector<Tensor> w;
    for (int c = 0; c < copies; ++c) w.push_back(k.make(DType::BF16, {p.n, p.k}));
    const Tensor x = k.make(DType::BF16, {1, p.k}), y = k.make(DType::BF16, {1, p.n}, false);
    cuda::GemmDesc g;  // row-major y = x·wᵀ as column-major yᵀ = w·xᵀ
    g.trans_a = true;
    g.m = p.n;
    g.n = 1;
    g.k = p.k;
    g.lda = p.k;
    g.b = x.data;
    g.ldb = p.k;
    g.d = y.data;
    g.ldd = p.n;
    g.a_type = g.b_type = g.d_type = DType::BF16;
    const int calls = std::max(20, copies);
    int next = 0;
    const double linear_ms = graph_ms(
        cuda,
        [&] {
          cuda.linear_forward({x, w[next++ % copies], {}, y, Activation::None, {}});
        },
        calls);
    const double gemm_ms = graph_ms(
        cuda,
        [&] {
          g.a = w[next++ % copies].data;
          lt.run(g, cuda.stream());
        },
        calls);
    const double weight_gb = 2e-9 * static_cast<double>(p.n * p.k);
    emit(fmt::format(
        "{{\"bench\": \"decode_linear\", \"op\": \"{}\", \"linear_forward_ms\": {:.4f}, "
        "\"cublaslt_ms\": {:.4f}, \"linear_forward_GBps\": {:.0f}, \"cublaslt_GBps\": {:.0f}, "
        "\"speedup\": {:.2f}}}",
        name, linear_ms, gemm_ms, weight_gb / linear_ms * 1e3, weight_gb / gemm_ms * 1e3,
        gemm_ms / linear_ms));
  }
}
#endif

// The fp8 cast of a bf16 tensor, as it is, transposed and both at once: GPT-2 XL's fc output (16384
// x 6400) and Llama-3.2-1B's attention input (8192 x 2048), the bandwidth against the copy
// roofline.
void fp8_casts(Bench& k) {
  const Tensor one = k.make(DType::F32, {1}, false), amax = k.make(DType::F32, {1}, false);
  const Tensor counts = k.make(DType::I32, {3}, false);
  k.be().fill({one, 1.0f});
  k.be().fill({amax, 0.0f});
  k.be().fill({counts, 0.0f});
  for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{16384, 6400}, {8192, 2048}})
    for (const auto& [as_is, transposed, label] :
         {std::tuple{true, false, ""}, {false, true, " transposed"}, {true, true, " both"}}) {
      const Tensor x = k.make(DType::BF16, {rows, cols});
      const Tensor out = as_is ? k.make(DType::F8E4M3, {rows, cols}, false) : Tensor{};
      const Tensor out_t = transposed ? k.make(DType::F8E4M3, {cols, rows}, false) : Tensor{};
      k.op(fmt::format("fp8_cast bf16 {}x{}{}", rows, cols, label), [&](Backend& b) {
        b.fp8_cast({x, {out, out_t, one, amax, counts}});
      });
    }
  // The gated MLP's copies (Llama-3.2-1B's 4 x 2048 rows, n = 8192): the forward's E4M3 x and xᵀ
  // of the down projection, the backward's E5M2 d(gate | up) and its transpose.
  const int64_t rows = 8192, n = 8192;
  const Tensor pre = k.make(DType::BF16, {rows, 2 * n}), dy = k.make(DType::BF16, {rows, n});
  const Tensor fx = k.make(DType::F8E4M3, {rows, n}, false);
  const Tensor fx_t = k.make(DType::F8E4M3, {n, rows}, false);
  const Tensor fd = k.make(DType::F8E5M2, {rows, 2 * n}, false);
  const Tensor fd_t = k.make(DType::F8E5M2, {2 * n, rows}, false);
  k.op("glu_forward fp8 copies 8192x8192", [&](Backend& b) {
    b.glu_forward({pre, {}, Activation::SwiGlu, {fx, fx_t, one, amax, counts}});
  });
  k.op("glu_backward fp8 copies 8192x16384", [&](Backend& b) {
    b.glu_backward({pre, dy, {}, Activation::SwiGlu, {fd, fd_t, one, amax, counts}});
  });
}

#ifdef HWT_WITH_CUDA
// The linear layers' GEMMs of a training step in fp8 against bf16, each alone: Llama-3.2-1B's
// (batch 4 x 2048 tokens) and GPT-2 XL's (16 x 1024). bf16 runs the products linear_forward and
// linear_backward run (row-major y = x·Wᵀ, dx = dy·W, dW += dyᵀ·x into f32). fp8 runs the same
// sizes as Hopper's fp8 GEMMs take them, a · bᵀ of K-major operands (the backward's from
// transposed copies, which fp8_cast makes), E4M3 activations and weights, E5M2 gradients, into
// the same output (bf16, or f32 accumulated for dW): through the backend's matmul (cuBLASLt's
// default accumulation) and with cuBLASLt's fast accumulation (what Transformer Engine uses in
// the forward). Median device times of 20 calls; the casts are not timed here.
void fp8_gemms(Bench& k) {
  auto& cuda = dynamic_cast<CudaBackend&>(k.be());
  cuda::Gemm lt(false, false);
  struct Layer {
    const char* name;
    int64_t tokens, out, in;
  };
  const Layer layers[] = {
      {"llama3_2_1b qkv", 8192, 3072, 2048},       {"llama3_2_1b attn out", 8192, 2048, 2048},
      {"llama3_2_1b gate|up", 8192, 16384, 2048},  {"llama3_2_1b down", 8192, 2048, 8192},
      {"llama3_2_1b lm head", 8192, 128256, 2048}, {"gpt2_xl qkv", 16384, 4800, 1600},
      {"gpt2_xl attn out", 16384, 1600, 1600},     {"gpt2_xl fc", 16384, 6400, 1600},
      {"gpt2_xl fc out", 16384, 1600, 6400}};
  const Tensor one = k.make(DType::F32, {1}, false), amax = k.make(DType::F32, {1}, false);
  const Tensor counts = k.make(DType::I32, {3}, false);
  cuda.fill({one, 1.0f});
  cuda.fill({amax, 0.0f});
  cuda.fill({counts, 0.0f});
  for (const Layer& l : layers) {
    const std::string name = fmt::format("fp8 gemm {}", l.name);
    if (!k.wants(name)) continue;
    const int64_t T = l.tokens, N = l.out, K = l.in;
    const Tensor x = k.make(DType::BF16, {T, K}), w = k.make(DType::BF16, {N, K});
    const Tensor dy = k.make(DType::BF16, {T, N}), y = k.make(DType::BF16, {T, N}, false);
    const Tensor dx = k.make(DType::BF16, {T, K}, false), dw = k.make(DType::F32, {N, K});
    // The fp8 copies: x and W as they are and transposed (E4M3), dy transposed (E5M2).
    auto cast = [&](Tensor src, DType dt, bool transpose) {
      const Tensor out = k.make(dt, transpose ? Shape{src.cols(), src.rows()} : src.shape, false);
      cuda.fp8_cast(
          {src, {transpose ? Tensor{} : out, transpose ? out : Tensor{}, one, amax, counts}});
      return out;
    };
    const Tensor x8 = cast(x, DType::F8E4M3, false), xt8 = cast(x, DType::F8E4M3, true);
    const Tensor w8 = cast(w, DType::F8E4M3, false), wt8 = cast(w, DType::F8E4M3, true);
    const Tensor dy8 = cast(dy, DType::F8E5M2, false), dyt8 = cast(dy, DType::F8E5M2, true);
    struct Role {
      const char* name;
      std::function<void()> bf16;
      Matmul fp8;
    };
    const LinearBwd bwd{x, w, dy, {}, Activation::None, dx, dw, {}};
    auto fp8 = [&](Tensor a, Tensor b, Tensor c, float beta) {
      Matmul m{a, b, c};
      m.trans_b = true;
      m.beta = beta;
      m.a_scale_inv = m.b_scale_inv = one;
      return m;
    };
    const Role roles[] = {{"forward",
                           [&] {
                             cuda.linear_forward({x, w, {}, y, Activation::None, {}});
                           },
                           fp8(x8, w8, y, 0.0f)},
                          {"input grad", [&] { cuda.matmul(linear_input_grad_product(bwd)); },
                           fp8(dy8, wt8, dx, 0.0f)},
                          {"weight grad", [&] { cuda.matmul(linear_weight_grad_product(bwd)); },
                           fp8(dyt8, xt8, dw, 1.0f)}};
    for (const Role& r : roles) {
      const GemmShape s = matmul_shape(r.fp8);
      cuda::GemmDesc
          g;  // the fp8 product with fast accumulation, as CudaBackend::matmul lays it out
      g.trans_a = true;
      g.m = s.n;
      g.n = s.m;
      g.k = s.k;
      g.a = r.fp8.b.data;
      g.lda = s.k;
      g.b = r.fp8.a.data;
      g.ldb = s.k;
      g.d = r.fp8.c.data;
      g.ldd = s.n;
      g.a_type = r.fp8.b.dtype;
      g.b_type = r.fp8.a.dtype;
      g.d_type = r.fp8.c.dtype;
      g.beta = r.fp8.beta;
      g.a_scale = g.b_scale = one.as<float>();
      g.fast_accum = true;
      const double bf16_ms = time_ms(cuda, r.bf16, 3, 20);
      const double fp8_ms = time_ms(
          cuda, [&] { cuda.matmul(r.fp8); }, 3, 20);
      const double fast_ms = time_ms(
          cuda, [&] { lt.run(g, cuda.stream()); }, 3, 20);
      const double tflop =
          2e-12 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
      emit(fmt::format(
          "{{\"bench\": \"fp8_gemm\", \"op\": \"{} {}\", \"m\": {}, \"n\": {}, \"k\": {}, "
          "\"bf16_ms\": {:.4f}, \"fp8_ms\": {:.4f}, \"fp8_fast_accum_ms\": {:.4f}, "
          "\"bf16_TFLOPs\": {:.0f}, \"fp8_TFLOPs\": {:.0f}, \"fp8_fast_accum_TFLOPs\": {:.0f}, "
          "\"speedup\": {:.2f}, \"speedup_fast_accum\": {:.2f}}}",
          name, r.name, s.m, s.n, s.k, bf16_ms, fp8_ms, fast_ms, tflop / bf16_ms * 1e3,
          tflop / fp8_ms * 1e3, tflop / fast_ms * 1e3, bf16_ms / fp8_ms, bf16_ms / fast_ms));
    }
  }
}
#endif

void attention_head_sizes(Bench& k) {
  const int64_t B = 8, S = 1024, H = 16;
  for (const DType dt : {DType::BF16, DType::F32})
    for (const int64_t D : {32, 64, 80, 96, 128, 256}) {
      if (dt == DType::F32 && D != 64 && D != 128) continue;
      const std::string tag = fmt::format("causal {} D{}", dt == DType::F32 ? "tf32" : "bf16", D);
      Backend& on = dt == DType::F32 ? k.tf32() : k.be();
      AttentionDims dims{B, S, H, D, true, {}, 1.0f / std::sqrt(static_cast<float>(D)), {}};
      const Tensor qkv = k.make(dt, {B * S, 3 * H * D}), out = k.make(dt, {B * S, H * D});
      const Tensor lse = k.make(DType::F32, {B, H, S}), dout = k.make(dt, {B * S, H * D});
      const Tensor dqkv = k.make(dt, {B * S, 3 * H * D});
      k.op(
          "attention_forward " + tag,
          [&](Backend& b) {
            b.attention_forward({dims, qkv, out, lse});
          },
          0.5, &on);
      k.op(
          "attention_backward " + tag,
          [&](Backend& b) {
            b.attention_backward({dims, qkv, out, dout, lse, dqkv});
          },
          0.5, &on);
    }
}

// Grouped-query attention at the same shape, bf16, head sizes 64 and 128 (the Hopper kernels):
// 16 query heads over 16 (multi-head), 8, 4 (Llama's groups of 4), 2 and 1 (multi-query) K/V
// heads. Forward, backward, and both (bench/kernels.py times SDPA's flash backend alike).
void attention_grouped(Bench& k) {
  const int64_t B = 8, S = 1024, H = 16;
  for (const int64_t D : {64, 128})
    for (const int64_t kv : {16, 8, 4, 2, 1}) {
      const std::string tag = fmt::format("causal bf16 D{} kv{}", D, kv);
      AttentionDims dims{B, S, H, D, true, {}, 1.0f / std::sqrt(static_cast<float>(D)), {}, kv};
      const Tensor qkv = k.make(DType::BF16, {B * S, dims.qkv_width()});
      const Tensor out = k.make(DType::BF16, {B * S, H * D}),
                   dout = k.make(DType::BF16, {B * S, H * D});
      const Tensor lse = k.make(DType::F32, {B, H, S}),
                   dqkv = k.make(DType::BF16, {B * S, dims.qkv_width()});
      k.be().attention_forward({dims, qkv, out, lse});  // an output and lse to differentiate
      k.op(
          "attention_forward " + tag,
          [&](Backend& b) {
            b.attention_forward({dims, qkv, out, lse});
          },
          0.5);
      k.op(
          "attention_backward " + tag,
          [&](Backend& b) {
            b.attention_backward({dims, qkv, out, dout, lse, dqkv});
          },
          0.5);
      k.op(
          "attention_forward+backward " + tag,
          [&](Backend& b) {
            b.attention_forward({dims, qkv, out, lse});
            b.attention_backward({dims, qkv, out, dout, lse, dqkv});
          },
          0.5);
    }
}

void run_all(const std::string& only) {
  Bench k(only);
  k.rooflines();
  const RunConfig gpt2 = load_run_config("gpt2_124m", {});
  const ModelConfig& mc = gpt2.model;
  const int64_t B = gpt2.train.batch_size, S = gpt2.data.max_len, H = mc.heads, D = mc.head_dim();
  const int64_t h = mc.hidden, rows = B * S, V = mc.vocab_size, ffn = mc.ffn;
  const DType bf = DType::BF16, f32 = DType::F32;
  const Tensor x = k.make(bf, {rows, h}), res = k.make(bf, {rows, h}), y = k.make(bf, {rows, h});
  const Tensor sum = k.make(bf, {rows, h}), dy = k.make(bf, {rows, h}), dx = k.make(bf, {rows, h});
  const Tensor g = k.make(bf, {h}), bta = k.make(bf, {h});
  const Tensor mean = k.make(f32, {rows}), rstd = k.make(f32, {rows});
  const Tensor dg = k.make(f32, {h}), db = k.make(f32, {h});
  k.be().layernorm_forward({x, g, bta, y, mean, rstd, 1e-5f});
  k.op("layernorm_forward", [&](Backend& b) {
    b.layernorm_forward({x, g, bta, y, mean, rstd, 1e-5f});
  });
  k.op("layernorm_backward", [&](Backend& b) {
    b.layernorm_backward({x, g, mean, rstd, dy, dx, dg, db, true});
  });
  k.op("residual_forward+ln", [&](Backend& b) {
    ResidualFwd r{x, res, sum, {}, g, bta, y, mean, rstd, 1e-5f};
    b.residual_forward(r);
  });
  k.op("residual_forward+dropout", [&](Backend& b) {
    ResidualFwd r;
    r.x = x;
    r.residual = res;
    r.sum = sum;
    r.drop = Dropout{0.1f, 5};
    b.residual_forward(r);
  });
  k.op("residual_backward+ln", [&](Backend& b) {
    ResidualBwd r{dx, dy, sum, g, mean, rstd, {}, y, res, dg, db};
    b.residual_backward(r);
  });

  const Tensor wqkv = k.make(bf, {3 * h, h}), bqkv = k.make(bf, {3 * h}),
               qkv = k.make(bf, {rows, 3 * h});
  k.op("linear_forward qkv", [&](Backend& b) {
    b.linear_forward({x, wqkv, bqkv, qkv, Activation::None, {}});
  });
  const Tensor w1 = k.make(bf, {ffn, h}), b1 = k.make(bf, {ffn}), f = k.make(bf, {rows, ffn});
  const Tensor fpre = k.make(bf, {rows, ffn}), df = k.make(bf, {rows, ffn});
  const Tensor dw1 = k.make(f32, {ffn, h}), db1 = k.make(f32, {ffn});
  k.op("linear_forward fc1+gelu", [&](Backend& b) {
    b.linear_forward({x, w1, b1, f, Activation::GeluTanh, fpre});
  });
  k.op("linear_backward fc1+gelu", [&](Backend& b) {
    b.linear_backward({x, w1, df, fpre, Activation::GeluTanh, dx, dw1, db1, false});
  });

  AttentionDims dims{B, S, H, D, true, {}, 1.0f / std::sqrt(static_cast<float>(D)), {}};
  const Tensor out = k.make(bf, {rows, h}), lse = k.make(f32, {B, H, S}),
               dout = k.make(bf, {rows, h});
  const Tensor dqkv = k.make(bf, {rows, 3 * h});
  k.be().attention_forward({dims, qkv, out, lse});  // one of each kernel first (for ncu)
  k.be().attention_backward({dims, qkv, out, dout, lse, dqkv});
  k.op(
      "attention_forward causal",
      [&](Backend& b) {
        b.attention_forward({dims, qkv, out, lse});
      },
      0.5);
  k.op(
      "attention_backward causal",
      [&](Backend& b) {
        b.attention_backward({dims, qkv, out, dout, lse, dqkv});
      },
      0.5);
  k.op(
      "attention_backward causal, dQ by atomics",
      [&](Backend& b) {
        b.attention_backward({dims, qkv, out, dout, lse, dqkv});
      },
      0.5, &k.atomic_attention());
  const RunConfig bert_cfg = load_run_config("bert_base", {});
  const int64_t Bb = bert_cfg.train.batch_size, Sb = bert_cfg.data.max_len;
  const int64_t Hb = bert_cfg.model.heads, Db = bert_cfg.model.head_dim();
  AttentionDims bert{Bb,
                     Sb,
                     Hb,
                     Db,
                     false,
                     {},
                     1.0f / std::sqrt(static_cast<float>(Db)),
                     Dropout{static_cast<float>(bert_cfg.model.attn_dropout), 3}};
  k.op("attention_forward bert dropout", [&](Backend& b) {
    b.attention_forward({bert, qkv.row_slice(0, Bb * Sb), out.row_slice(0, Bb * Sb),
                         lse.flat_slice(0, Bb * Hb * Sb).view(Shape{Bb, Hb, Sb})});
  });

  const Tensor logits = k.make(bf, {rows, V}), losses = k.make(f32, {rows});
  std::vector<int32_t> tg(static_cast<size_t>(rows));
  const int64_t gpt2_vocab = 50257;  // stored padded to V = 50304 columns
  for (size_t i = 0; i < tg.size(); ++i) tg[i] = static_cast<int32_t>((i * 7919) % gpt2_vocab);
  const Tensor targets = k.make(DType::I32, {rows}, false);
  k.be().upload(targets, tg.data());
  k.op("cross_entropy+grad vocab 50304", [&](Backend& b) {
    b.cross_entropy({logits, targets, losses, logits, 1.0f / rows});
  });
  k.op("cross_entropy+grad vocab 50257 in 50304 columns", [&](Backend& b) {
    b.cross_entropy({logits, targets, losses, logits, 1.0f / rows, {}, gpt2_vocab});
  });
  const Tensor table = k.make(bf, {V, h}), pos = k.make(bf, {S, h});
  const Tensor dtable = k.make(f32, {V, h}), dpos = k.make(f32, {S, h});
  k.op("embedding_forward", [&](Backend& b) { b.embedding_forward({targets, table, pos, y, S}); });
  k.op("embedding_backward", [&](Backend& b) {
    b.embedding_backward({targets, dy, dtable, dpos, S});
  });

  const int64_t P = 124439808;
  const Tensor p = k.make(f32, {P}), gr = k.make(f32, {P}), m = k.make(f32, {P}),
               v = k.make(f32, {P});
  const Tensor n = k.make(f32, {P}), prev = k.make(f32, {P}), comp = k.make(bf, {P}, false);
  const Tensor nsq = k.make(f32, {1});
  k.be().fill({m, 0.0f});
  k.be().fill({v, 0.0f});
  k.be().fill({n, 0.0f});
  k.op("sum_squares 124M", [&](Backend& b) { b.sum_squares({gr, nsq}); });
  const AdamWHyper adamw = at_step(AdamWHyper{1e-4f, 0.9f, 0.95f, 1e-8f, 0.1f}, 2);
  const AdanHyper adan = at_step(AdanHyper{1e-4f, 0.98f, 0.92f, 0.99f, 1e-8f, 0.02f, false}, 2);
  k.op("adamw_step 124M (+bf16 copy, clip)", [&](Backend& b) {
    b.adamw_step({{p, gr, comp, P / 2}, m, v, {nsq, 1.0f}, adamw});
  });
  k.op("adamw_step 124M (no copy)", [&](Backend& b) {
    b.adamw_step({{p, gr, {}, P / 2}, m, v, {}, adamw});
  });
  k.op("adan_step 124M (+bf16 copy, clip)", [&](Backend& b) {
    b.adan_step({{p, gr, comp, P / 2}, m, v, n, prev, {nsq, 1.0f}, adan});
  });
  k.op("adan_step 124M (no copy)", [&](Backend& b) {
    b.adan_step({{p, gr, {}, P / 2}, m, v, n, prev, {}, adan});
  });
  attention_head_sizes(k);
  attention_grouped(k);
  fp8_casts(k);
#ifdef HWT_WITH_CUDA
  decode_linears(k);
  decode_rotary_append(k);
  fp8_gemms(k);
#endif
}

}  // namespace
}  // namespace hwt::bench

int main(int argc, char** argv) {
  CLI::App app{"Each fused CUDA op at GPT-2 124M training shapes", "bench_kernels"};
  std::string only;
  app.add_option("only", only, "Time only the ops whose name contains this");
  CLI11_PARSE(app, argc, argv);
  if (!hwt::cuda_available()) {
    std::puts("{\"skipped\": \"no GPU\"}");
    return 0;
  }
  hwt::bench::run_all(only);
  return 0;
}
