// CudaBackend: attention, gated activations, rotary positions, embeddings, pooling, losses and
// argmax.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "backend/attention_paths.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/fp8_linear.h"
#include "backend/ttm_table.h"
#include "core/integer_math.h"

namespace hwt {

namespace {

cuda::AttnArgs attn_args(const AttentionDims& d, const Tensor& qkv, bool tf32) {
  cuda::expect_float(qkv, "qkv");
  HWT_CHECK(d.kv() >= 1 && d.heads % d.kv() == 0, "attention kv_heads {} must divide heads {}",
            d.kv(), d.heads);
  HWT_CHECK(qkv.rows() == d.batch * d.seq && qkv.cols() == d.qkv_width(),
            "attention qkv {} for b={} s={} heads={} kv_heads={} d={}", qkv.str(), d.batch, d.seq,
            d.heads, d.kv(), d.head_dim);
  HWT_CHECK(d.head_dim >= 1 && d.head_dim <= 256, "cuda attention supports head_dim <= 256, got {}",
            d.head_dim);
  cuda::AttnArgs a;
  a.dt = qkv.dtype;
  a.batch = d.batch;
  a.seq = d.seq;
  a.heads = d.heads;
  a.kv_heads = d.kv();
  a.head_dim = d.head_dim;
  a.causal = d.causal;
  a.tf32 = tf32;
  a.scale = d.scale;
  a.drop = cuda::drop_args(d.drop);
  if (d.key_lengths.defined()) {
    cuda::expect_dtype(d.key_lengths, DType::I32, "key_lengths");
    a.key_lengths = d.key_lengths.as<int>();
  }
  a.qkv = qkv.data;
  return a;
}

void expect_lse(const Tensor& lse, const AttentionDims& d) {
  cuda::expect_dtype(lse, DType::F32, "lse");
  HWT_CHECK(lse.numel() == d.batch * d.heads * d.seq, "lse {} for b={} heads={} s={}", lse.str(),
            d.batch, d.heads, d.seq);
}

// The head size attention runs at: the given one or, when only the tensor-core kernels' whole
// 16-byte rows stand in the way, the next such size, on copies padded with zero columns.
int64_t run_head_dim(const cuda::AttnArgs& a) {
  cuda::AttnArgs padded = a;
  padded.head_dim = attention_kernel_head_dim(a.dt, a.head_dim);
  return padded.head_dim != a.head_dim && cuda::attention_slow_reason(padded).empty()
             ? padded.head_dim
             : a.head_dim;
}

// Consecutive 256-byte-aligned regions of one scratch allocation.
class ScratchCursor {
 public:
  explicit ScratchCursor(void* base) : at_(static_cast<char*>(base)) {}
  static size_t aligned(size_t bytes) { return round_up(bytes, 256); }
  void* take(size_t bytes) { return std::exchange(at_, at_ + aligned(bytes)); }

 private:
  char* at_;
};

// Bytes of the fp32 dK/dV partials of a split backward (cuda::AttnArgs::dkv_partials).
size_t dkv_partial_bytes(const cuda::AttnArgs& a) {
  if (a.dkv_splits <= 1) return 0;
  return static_cast<size_t>(a.dkv_splits * a.batch * a.seq * 2 * a.kv() * a.head_dim) *
         sizeof(float);
}

cuda::RopeArgs rope_args(const Rope& a, bool inverse) {
  cuda::expect_float(a.qkv, "rope qkv");
  cuda::expect_dtype(a.cos, DType::F32, "rope cos");
  cuda::expect_dtype(a.sin, DType::F32, "rope sin");
  const int64_t kv = a.kv(), D = a.head_dim;
  HWT_CHECK(a.rotary_dim % 2 == 0 && a.rotary_dim >= 0 && a.rotary_dim <= D,
            "rope rotary_dim {} for head_dim {}", a.rotary_dim, D);
  HWT_CHECK(a.seq >= 1 && a.qkv.cols() == (a.heads + 2 * kv) * D && a.qkv.rows() % a.seq == 0,
            "rope qkv {} for seq={} heads={} kv_heads={} head_dim={}", a.qkv.str(), a.seq, a.heads,
            kv, D);
  HWT_CHECK(
      a.cos.cols() == a.rotary_dim / 2 && a.cos.rows() >= a.seq && a.sin.numel() == a.cos.numel(),
      "rope tables {} for seq {} and rotary_dim {}", a.cos.str(), a.seq, a.rotary_dim);
  cuda::RopeArgs r;
  if (a.positions.defined()) {
    cuda::expect_dtype(a.positions, DType::I32, "rope positions");
    HWT_CHECK(a.positions.numel() == a.qkv.rows(), "rope positions {} for qkv {}",
              a.positions.str(), a.qkv.str());
    r.positions = a.positions.as<int>();
  }
  r.dt = a.qkv.dtype;
  r.qkv = a.qkv.data;
  r.cos = a.cos.as<float>();
  r.sin = a.sin.as<float>();
  r.rows = a.qkv.rows();
  r.seq = a.seq;
  r.heads = a.heads;
  r.kv_heads = kv;
  r.head_dim = D;
  r.rotary_dim = a.rotary_dim;
  r.inverse = inverse;
  return r;
}

}  // namespace

void CudaBackend::attention_forward(const AttentionFwd& a) {
  cuda::AttnArgs args = attn_args(a.dims, a.qkv, options_.tf32);
  cuda::expect_dtype(a.out, a.qkv.dtype, "out");
  HWT_CHECK(a.out.numel() == a.dims.batch * a.dims.seq * a.dims.heads * a.dims.head_dim,
            "attention out {}", a.out.str());
  expect_lse(a.lse, a.dims);
  args.out = a.out.data;
  args.lse = a.lse.as<float>();
  if (a.prune.active()) {
    cuda::expect_dtype(a.prune.counts, DType::I32, "attention prune counts");
    HWT_CHECK(a.prune.counts.numel() == 6, "attention prune counts {} must be i32 [6]",
              a.prune.counts.str());
    args.prune_counts = static_cast<unsigned long long*>(a.prune.counts.data);
    args.prune_tau = a.prune.tau;
  }
  const int64_t dp = args.prune_counts ? args.head_dim : run_head_dim(args), d = args.head_dim;
  if (dp == d) {
    if (const std::string_view why = cuda::attention_slow_reason(args);
        !why.empty() && !args.prune_counts)
      notice(
          fmt::format("attention (head size {}) runs the generic CUDA kernels, far slower "
                      "than the tensor-core ones: {}",
                      d, why));
    cuda::attention_forward(launch_, args);
  } else {
    const int64_t tokens = args.batch * args.seq;
    const int64_t heads = tokens * args.heads;  // rows of one head each
    const int64_t qkv_heads = tokens * (args.heads + 2 * args.kv());
    const size_t es = dtype_size(args.dt), qkv_bytes = qkv_heads * dp * es;
    ScratchCursor cur(scratch(ScratchCursor::aligned(qkv_bytes) + heads * dp * es));
    void* qkv = cur.take(qkv_bytes);
    cuda::AttnArgs p = args;
    p.head_dim = dp;
    p.qkv = qkv;
    p.out = cur.take(heads * dp * es);
    cuda::repack_heads(launch_, args.dt, args.qkv, qkv, qkv_heads, d, dp);
    cuda::attention_forward(launch_, p);
    cuda::repack_heads(launch_, args.dt, p.out, args.out, heads, dp, d);
  }
  cuda::check_launch("attention_forward");
}

void CudaBackend::attention_backward(const AttentionBwd& a) {
  cuda::AttnArgs args = attn_args(a.dims, a.qkv, options_.tf32);
  cuda::expect_same(a.out, a.d_out, "out");
  cuda::expect_dtype(a.d_out, a.qkv.dtype, "d_out");
  cuda::expect_same(a.d_qkv, a.qkv, "d_qkv");
  expect_lse(a.lse, a.dims);
  args.out = a.out.data;
  args.lse = a.lse.as<float>();
  args.d_out = a.d_out.data;
  args.d_qkv = a.d_qkv.data;
  if (a.rope.rotary_dim > 0) {
    HWT_CHECK(a.rope.qkv.data == a.d_qkv.data, "attention_backward: rope.qkv must be d_qkv");
    const cuda::RopeArgs r = rope_args(a.rope, true);
    args.rope_cos = r.cos;
    args.rope_sin = r.sin;
    args.rope_half = static_cast<int>(r.rotary_dim / 2);
  }
  const int64_t dp = run_head_dim(args), d = args.head_dim;
  const int64_t heads = args.batch * args.seq * args.heads;
  const size_t dvec_bytes = static_cast<size_t>(heads) * sizeof(float);
  if (dp == d) {
    // Only the Hopper kernels add dQ with atomics; the others need no accumulator.
    const size_t accum_bytes = options_.deterministic_attention || !cuda::flash_supported(args)
                                   ? 0
                                   : static_cast<size_t>(heads * d) * sizeof(float);
    args.dkv_splits = cuda::attention_dkv_splits(launch_, args, accum_bytes > 0);
    const size_t partial_bytes = dkv_partial_bytes(args);
    ScratchCursor cur(scratch(ScratchCursor::aligned(accum_bytes) +
                              ScratchCursor::aligned(partial_bytes) + dvec_bytes));
    args.dq_accum = accum_bytes ? static_cast<float*>(cur.take(accum_bytes)) : nullptr;
    args.dkv_partials = partial_bytes ? static_cast<float*>(cur.take(partial_bytes)) : nullptr;
    args.dvec = static_cast<float*>(cur.take(dvec_bytes));
    cuda::attention_backward(launch_, args);
  } else {
    const int64_t qkv_heads = args.batch * args.seq * (args.heads + 2 * args.kv());
    const size_t es = dtype_size(args.dt), one = heads * dp * es, qkv_bytes = qkv_heads * dp * es;
    // The split as for the padded copies below (in scratch, so aligned).
    cuda::AttnArgs probe = args;
    probe.head_dim = dp;
    probe.qkv = probe.out = probe.d_qkv = nullptr;
    probe.d_out = nullptr;
    args.dkv_splits = cuda::attention_dkv_splits(launch_, probe, false);
    probe.dkv_splits = args.dkv_splits;
    const size_t partial_bytes = dkv_partial_bytes(probe);
    ScratchCursor cur(scratch(2 * ScratchCursor::aligned(qkv_bytes) +
                              2 * ScratchCursor::aligned(one) +
                              ScratchCursor::aligned(partial_bytes) + dvec_bytes));
    void* qkv = cur.take(qkv_bytes);
    void* d_out = cur.take(one);
    cuda::AttnArgs p = args;
    p.head_dim = dp;
    p.qkv = qkv;
    p.d_out = d_out;
    p.d_qkv = cur.take(qkv_bytes);
    p.out = cur.take(one);
    p.dkv_partials = partial_bytes ? static_cast<float*>(cur.take(partial_bytes)) : nullptr;
    p.dvec = static_cast<float*>(cur.take(dvec_bytes));
    cuda::repack_heads(launch_, args.dt, args.qkv, qkv, qkv_heads, d, dp);
    cuda::repack_heads(launch_, args.dt, args.out, p.out, heads, d, dp);
    cuda::repack_heads(launch_, args.dt, args.d_out, d_out, heads, d, dp);
    cuda::attention_backward(launch_, p);
    cuda::repack_heads(launch_, args.dt, p.d_qkv, args.d_qkv, qkv_heads, dp, d);
  }
  cuda::check_launch("attention_backward");
}

namespace {

// pre [rows, 2n] for a [rows, n] half (y or dy).
void expect_glu(Activation kind, const Tensor& pre, const Tensor& half) {
  HWT_CHECK(is_gated(kind), "glu needs a gated activation (swiglu, geglu)");
  cuda::expect_float(pre, "glu pre");
  cuda::expect_dtype(half, pre.dtype, "glu half");
  HWT_CHECK(pre.rows() == half.rows() && pre.cols() == 2 * half.cols(),
            "glu pre {} must be [rows, 2n] for an output {}", pre.str(), half.str());
}

// The tile kernel of a gated unit writing fp8 copies of its [rows, width] output (and the output
// itself where `y` is defined).
void glu_fp8(const cuda::Launch& l, const Tensor& pre, const Tensor& dy, const Tensor& y,
             const Fp8Out& f, int64_t rows, int64_t n, Activation kind, const char* op) {
  const int64_t width = dy.defined() ? 2 * n : n;
  if (y.defined()) cuda::expect_dtype(y, pre.dtype, op);
  HWT_CHECK(!y.defined() || (y.rows() == rows && y.cols() == width),
            "{}: output {} must be [{}, {}]", op, y.str(), rows, width);
  cuda::GluFp8Args g;
  g.cast = cuda::fp8_cast_args(f, rows, width, op);
  g.cast.x_dt = pre.dtype;
  g.pre = pre.data;
  g.dy = dy.data;
  g.y = y.data;
  g.n = n;
  g.kind = kind;
  cuda::glu_fp8(l, g);
  cuda::check_launch(op);
}

}  // namespace

void CudaBackend::glu_forward(const GluFwd& a) {
  if (a.fp8.active()) {
    HWT_CHECK(is_gated(a.kind), "glu needs a gated activation (swiglu, geglu)");
    cuda::expect_float(a.pre, "glu pre");
    glu_fp8(launch_, a.pre, {}, a.y, a.fp8, a.pre.rows(), a.pre.cols() / 2, a.kind, "glu_forward");
    return;
  }
  expect_glu(a.kind, a.pre, a.y);
  cuda::glu_forward(launch_, a.pre.dtype, a.pre.data, a.y.data, a.y.rows(), a.y.cols(), a.kind);
  cuda::check_launch("glu_forward");
}

void CudaBackend::glu_backward(const GluBwd& a) {
  expect_glu(a.kind, a.pre, a.dy);
  if (a.fp8.active()) {
    glu_fp8(launch_, a.pre, a.dy, a.d_pre, a.fp8, a.dy.rows(), a.dy.cols(), a.kind, "glu_backward");
    return;
  }
  cuda::expect_same(a.d_pre, a.pre, "glu d_pre");
  cuda::glu_backward(launch_, a.pre.dtype, a.pre.data, a.dy.data, a.d_pre.data, a.dy.rows(),
                     a.dy.cols(), a.kind);
  cuda::check_launch("glu_backward");
}

void CudaBackend::rope_forward(const Rope& a) {
  cuda::rope(launch_, rope_args(a, false));
  cuda::check_launch("rope_forward");
}

void CudaBackend::rope_backward(const Rope& a) {
  cuda::rope(launch_, rope_args(a, true));
  cuda::check_launch("rope_backward");
}

void CudaBackend::embedding_forward(const EmbeddingFwd& a) {
  cuda::expect_dtype(a.ids, DType::I32, "ids");
  cuda::expect_float(a.table, "table");
  cuda::expect_dtype(a.out, a.table.dtype, "out");
  const int64_t rows = a.out.rows(), h = a.out.cols();
  HWT_CHECK(a.ids.numel() == rows && a.table.cols() == h, "embedding ids {} table {} out {}",
            a.ids.str(), a.table.str(), a.out.str());
  if (a.pos.defined()) {
    cuda::expect_dtype(a.pos, a.table.dtype, "pos");
    HWT_CHECK(a.seq > 0 && a.pos.numel() >= a.seq * h, "positions {} for seq {}", a.pos.str(),
              a.seq);
  }
  if (a.positions.defined()) {
    cuda::expect_dtype(a.positions, DType::I32, "embedding positions");
    HWT_CHECK(a.pos.defined() && a.positions.numel() == rows, "embedding positions {} for {} rows",
              a.positions.str(), rows);
  }
  cuda::embedding_forward(launch_, a.table.dtype, a.ids.as<int>(), a.table.data,
                          a.pos.defined() ? a.pos.data : nullptr,
                          a.positions.defined() ? a.positions.as<int>() : nullptr, a.out.data, rows,
                          h, a.table.dim(0), std::max<int64_t>(a.seq, 1));
  cuda::check_launch("embedding_forward");
}

void CudaBackend::embedding_backward(const EmbeddingBwd& a) {
  cuda::expect_dtype(a.ids, DType::I32, "ids");
  cuda::expect_float(a.d_out, "d_out");
  const int64_t rows = a.d_out.rows(), h = a.d_out.cols();
  HWT_CHECK(a.ids.numel() == rows, "embedding backward ids {} d_out {}", a.ids.str(),
            a.d_out.str());
  float* dtable = nullptr;
  float* dpos = nullptr;
  int64_t vocab = 1;
  if (a.d_table.defined()) {
    cuda::expect_dtype(a.d_table, DType::F32, "d_table");
    HWT_CHECK(a.d_table.cols() == h, "d_table {} for d_out {}", a.d_table.str(), a.d_out.str());
    dtable = a.d_table.as<float>();
    vocab = a.d_table.rows();
  }
  if (a.d_pos.defined()) {
    cuda::expect_dtype(a.d_pos, DType::F32, "d_pos");
    HWT_CHECK(a.seq > 0 && rows % a.seq == 0 && a.d_pos.numel() >= a.seq * h, "d_pos {} for seq {}",
              a.d_pos.str(), a.seq);
    dpos = a.d_pos.as<float>();
  }
  const size_t bytes = dtable ? cuda::embedding_backward_scratch_bytes(rows, vocab) : 0;
  void* s = bytes ? scratch(bytes) : nullptr;
  cuda::embedding_backward(launch_, a.d_out.dtype, a.ids.as<int>(), a.d_out.data, dtable, dpos,
                           rows, h, vocab, std::max<int64_t>(a.seq, 1), s, bytes);
  cuda::check_launch("embedding_backward");
}

namespace {

// The kernels' view of a TTM table's cores (in `dt`) and, for backward, their f32 gradients.
cuda::TtmArgs ttm_args(const std::vector<Tensor>& cores, const std::vector<Tensor>& grads,
                       DType dt) {
  const TtmTable t = ttm_table(cores);
  HWT_CHECK(t.cores() <= static_cast<size_t>(cuda::kTtmMaxCores), "{} TTM cores; at most {}",
            t.cores(), cuda::kTtmMaxCores);
  cuda::TtmArgs a;
  a.cores = static_cast<int>(t.cores());
  for (size_t k = 0; k < t.cores(); ++k) {
    cuda::expect_dtype(cores[k], dt, "TTM core");
    HWT_CHECK(t.ranks[k + 1] <= cuda::kTtmMaxRank, "TTM rank {}; at most {}", t.ranks[k + 1],
              cuda::kTtmMaxRank);
    a.core[k] = cores[k].data;
    if (!grads.empty()) {
      cuda::expect_dtype(grads[k], DType::F32, "TTM core gradient");
      HWT_CHECK(grads[k].numel() == cores[k].numel(), "TTM core gradient {} for core {}",
                grads[k].str(), cores[k].str());
      a.grad[k] = grads[k].as<float>();
    }
    a.vocab[k] = t.vocab[k];
    a.hidden[k] = t.hidden[k];
  }
  for (size_t k = 0; k <= t.cores(); ++k) a.ranks[k] = t.ranks[k];
  a.rows = t.rows();
  a.cols = t.cols();
  return a;
}

}  // namespace

void CudaBackend::tt_embedding_forward(const TtEmbeddingFwd& a) {
  cuda::expect_dtype(a.ids, DType::I32, "ids");
  cuda::expect_float(a.out, "out");
  const cuda::TtmArgs t = ttm_args(a.cores, {}, a.out.dtype);
  const int64_t rows = a.out.rows();
  HWT_CHECK(a.ids.numel() == rows && a.out.cols() == t.cols, "TTM embedding ids {} out {}",
            a.ids.str(), a.out.str());
  if (a.pos.defined()) {
    cuda::expect_dtype(a.pos, a.out.dtype, "pos");
    HWT_CHECK(a.seq > 0 && a.pos.numel() >= a.seq * t.cols, "positions {} for seq {}", a.pos.str(),
              a.seq);
  }
  cuda::tt_embedding_forward(launch_, a.out.dtype, t, a.ids.as<int>(),
                             a.pos.defined() ? a.pos.data : nullptr, a.out.data, rows,
                             std::max<int64_t>(a.seq, 1));
  cuda::check_launch("tt_embedding_forward");
}

void CudaBackend::tt_embedding_backward(const TtEmbeddingBwd& a) {
  cuda::expect_dtype(a.ids, DType::I32, "ids");
  cuda::expect_float(a.d_out, "d_out");
  const cuda::TtmArgs t = ttm_args(a.cores, a.d_cores, a.d_out.dtype);
  const int64_t rows = a.d_out.rows();
  HWT_CHECK(a.ids.numel() == rows && a.d_out.cols() == t.cols, "TTM embedding ids {} d_out {}",
            a.ids.str(), a.d_out.str());
  const size_t bytes = cuda::tt_embedding_backward_scratch_bytes(t, rows);
  cuda::tt_embedding_backward(launch_, a.d_out.dtype, t, a.ids.as<int>(), a.d_out.data, rows,
                              bytes ? scratch(bytes) : nullptr);
  cuda::check_launch("tt_embedding_backward");
  // The position gradient is the dense embedding's, without a table.
  if (a.d_pos.defined()) embedding_backward({a.ids, a.d_out, {}, a.d_pos, a.seq});
}

void CudaBackend::pool_forward(const PoolFwd& a) {
  cuda::expect_float(a.x, "x");
  cuda::expect_dtype(a.out, a.x.dtype, "out");
  const int64_t batch = a.out.rows(), h = a.out.cols();
  HWT_CHECK(a.x.numel() == batch * a.seq * h, "pool x {} out {} seq {}", a.x.str(), a.out.str(),
            a.seq);
  const bool mean = a.mode == Pooling::Mean;
  if (mean) cuda::expect_dtype(a.lengths, DType::I32, "lengths");
  cuda::pool_forward(launch_, a.x.dtype, a.x.data, a.out.data, mean ? a.lengths.as<int>() : nullptr,
                     batch, a.seq, h, mean);
  cuda::check_launch("pool_forward");
}

void CudaBackend::pool_backward(const PoolBwd& a) {
  cuda::expect_float(a.d_out, "d_out");
  cuda::expect_dtype(a.d_x, a.d_out.dtype, "d_x");
  const int64_t batch = a.d_out.rows(), h = a.d_out.cols();
  HWT_CHECK(a.d_x.numel() == batch * a.seq * h, "pool d_x {} d_out {} seq {}", a.d_x.str(),
            a.d_out.str(), a.seq);
  const bool mean = a.mode == Pooling::Mean;
  if (mean) cuda::expect_dtype(a.lengths, DType::I32, "lengths");
  cuda::pool_backward(launch_, a.d_out.dtype, a.d_out.data, a.d_x.data,
                      mean ? a.lengths.as<int>() : nullptr, batch, a.seq, h, mean);
  cuda::check_launch("pool_backward");
}

void CudaBackend::cross_entropy(const CrossEntropy& a) {
  cuda::expect_float(a.logits, "logits");
  cuda::expect_dtype(a.targets, DType::I32, "targets");
  cuda::expect_dtype(a.losses, DType::F32, "losses");
  const int64_t rows = a.logits.rows(), c = a.logits.cols();
  const int64_t classes = a.classes > 0 ? a.classes : c;
  HWT_CHECK(classes <= c, "cross_entropy: {} classes in {} columns", classes, c);
  HWT_CHECK(a.targets.numel() == rows && a.losses.numel() == rows,
            "cross entropy logits {} targets {} losses {}", a.logits.str(), a.targets.str(),
            a.losses.str());
  if (a.d_logits.defined()) cuda::expect_same(a.d_logits, a.logits, "d_logits");
  cuda::CrossEntropyArgs ce;
  ce.dt = a.logits.dtype;
  ce.logits = a.logits.data;
  ce.targets = a.targets.as<int>();
  ce.losses = a.losses.as<float>();
  ce.d_logits = a.d_logits.defined() ? a.d_logits.data : nullptr;
  ce.rows = rows;
  ce.cols = c;
  ce.classes = classes;
  ce.grad_scale = a.grad_scale;
  if (a.loss_scale.defined()) {
    cuda::expect_dtype(a.loss_scale, DType::F32, "loss_scale");
    ce.loss_scale = a.loss_scale.as<float>();
  }
  if (a.lse.defined()) {
    cuda::expect_dtype(a.lse, DType::F32, "lse");
    HWT_CHECK(a.lse.numel() == rows, "cross entropy lse {} for {} rows", a.lse.str(), rows);
    ce.lse = a.lse.as<float>();
  }
  if (a.fp8.active())
    HWT_CHECK(ce.lse && a.d_logits.data != a.logits.data,
              "cross entropy's fp8 gradient needs lse and logits kept (d_logits apart)");
  cuda::cross_entropy(launch_, ce);
  if (a.fp8.active())
    cuda::cross_entropy_fp8(launch_, ce, cuda::fp8_cast_args(a.fp8, rows, c, "cross_entropy"));
  cuda::check_launch("cross_entropy");
}

void CudaBackend::argmax_rows(const ArgmaxRows& a) {
  const Tensor &logits = a.logits, &out = a.out;
  cuda::expect_float(logits, "logits");
  cuda::expect_dtype(out, DType::I32, "out");
  HWT_CHECK(out.numel() == logits.rows(), "argmax out {} for logits {}", out.str(), logits.str());
  HWT_CHECK(a.classes <= logits.cols(), "argmax: {} classes in {}", a.classes, logits.str());
  cuda::argmax_rows(launch_, logits.dtype, logits.data, out.as<int>(), logits.rows(), logits.cols(),
                    a.classes > 0 ? a.classes : logits.cols());
  cuda::check_launch("argmax_rows");
}

}  // namespace hwt
