// Launchers of the CUDA kernels, callable from host C++ (the .cu files implement them).
// Arguments are raw device pointers and sizes; the CudaBackend validates tensors before calling.
// Every launcher only enqueues work on `stream`; none synchronises.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "backend/optimizer_hyper.h"
#include "core/activation_math.h"
#include "core/dtype.h"
#include "core/fp8_scale_rule.h"
#include "core/hostdevice.h"

namespace hwt::cuda {

// Bits of the device error word (see CudaBackend::check_device_errors).
constexpr int kErrTokenId = 1;  // an embedding id outside the vocabulary
constexpr int kErrTarget = 2;   // a cross-entropy target >= the class count

struct Launch {
  cudaStream_t stream = nullptr;
  int sms = 132;          // multiprocessors, for grid sizing
  int64_t l2_bytes = 0;   // the L2 cache's size
  int* errors = nullptr;  // device-visible error word
  // Programmatic dependent launch (launch_kernel in cuda_common.cuh): the device is sm_90 or
  // later and the kernels were built for it (dependent_launch_built).
  bool pdl = false;
};

// Whether the kernels were compiled for sm_90 or later (their PTX version), whose grid
// dependency control programmatic dependent launches need: a build for older devices runs on an
// H100 through PTX without it.
bool dependent_launch_built();

struct DropArgs {
  float p = 0.0f;
  uint64_t seed = 0;
  float scale = 1.0f;  // 1 / (1 - p)
  HWT_HD bool active() const { return p > 0.0f; }
};

// ---- memory (cuda_memory.cu)
void fill(const Launch& l, void* p, DType dt, int64_t n, float value);
void convert(const Launch& l, void* dst, DType dst_dt, const void* src, DType src_dt, int64_t n);
void dropout(const Launch& l, DType dt, const void* x, void* y, int64_t n, DropArgs d);

// ---- fp8 casts (cuda_fp8.cu): Fp8Cast (ops.h). x [rows, cols] of x_dt; out [rows, cols] and
// out_t [cols, rows] of out_dt (F8E4M3 or F8E5M2), either null; *amax raised, counts[0..2] added
// to (both null: no figures kept).
struct Fp8CastArgs {
  DType x_dt = DType::F32, out_dt = DType::F8E4M3;
  const void* x = nullptr;
  void* out = nullptr;
  void* out_t = nullptr;
  int64_t rows = 0, cols = 0;
  const float* scale = nullptr;
  float* amax = nullptr;
  int32_t* counts = nullptr;
};
void fp8_cast(const Launch& l, const Fp8CastArgs& a);
// A gated unit's forward (dy null) or backward writing its output's fp8 copies (GluFwd / GluBwd
// with Fp8Out): cast's x_dt is pre's dtype, out and out_t the copies of its [rows, cols] output
// (x unused); y the output in x_dt, optional.
struct GluFp8Args {
  Fp8CastArgs cast;
  const void* pre = nullptr;
  const void* dy = nullptr;
  void* y = nullptr;
  int64_t n = 0;
  Activation kind = Activation::SwiGlu;
};
void glu_fp8(const Launch& l, const GluFp8Args& g);

// ---- delayed scaling (cuda_fp8.cu): Fp8ScaleUpdate (ops.h) for `tensors` tensors with a
// history of `len` steps each; max_value is the format's largest finite value.
struct Fp8ScaleUpdateArgs {
  float *amax = nullptr, *history = nullptr, *scale = nullptr, *scale_inv = nullptr;
  int64_t tensors = 0, len = 0;
  int64_t scale_inv_stride = 1;  // floats from tensor t's scale_inv to t + 1's
  float max_value = 448.0f;
  AmaxAlgorithm algorithm = AmaxAlgorithm::Max;
  int margin = 0;
};
void fp8_scale_update(const Launch& l, const Fp8ScaleUpdateArgs& a);

// ---- runtime pruning (cuda_prune.cu): x[i] = 0 where |x[i]| <= tau, in place; *zeros += the
// zeros x then holds. (DynaProp runs inside the optimizer kernels: OptCommon.)
void prune_small(const Launch& l, DType dt, void* x, int64_t n, float tau,
                 unsigned long long* zeros);

// ---- reductions (cuda_reduce.cu): out[0] = sum of x (or of x²), deterministic.
constexpr int kReduceBlocks = 1024;  // partials buffer holds this many doubles
void reduce_sum(const Launch& l, DType dt, const void* x, int64_t n, bool squares, float* out,
                double* partials);
// Column sums of a [rows, cols] f32 matrix of partial sums, added in a fixed order (so
// deterministic): out_lo[c] += sum for c < split, out_hi[c - split] += sum for the rest.
void add_column_sums(const Launch& l, const float* partials, int64_t rows, int64_t cols,
                     int64_t split, float* out_lo, float* out_hi);

// ---- matrix-vector products (cuda_gemv.cu)
// y = act(x · wᵀ + bias) for one row x (a batch-1 decode step), at the speed of reading w once.
// x [k], w [n, k], y [n]; pre_act [n] keeps x · wᵀ + bias when act is not None; bias [n] or null.
// With gamma, x is first normalised as a norm_forward row (width, eps, rms); with a gated act
// the product's (gate | up) halves are gated (w has 2n rows); with residual it is added last
// (FusedLinearFwd). pre_act is written only by an ungated act without those fusions.
struct GemvArgs {
  DType dt = DType::F32;
  const void* x = nullptr;
  const void* w = nullptr;
  const void* bias = nullptr;
  void* y = nullptr;
  void* pre_act = nullptr;
  int64_t n = 0, k = 0;
  Activation act = Activation::None;
  const void* gamma = nullptr;
  const void* beta = nullptr;
  float eps = 1e-5f;
  int64_t width = 0;
  bool rms = false;
  const void* residual = nullptr;
  // Launched as a programmatic dependent launch: it reads w (only) before the grid ahead of it
  // ends, so no kernel just before it may write w (true of weights in a forward).
  bool dependent = false;
};
// Whether gemv serves this product, and is faster there than cuBLASLt (cuda_gemv.cu says why).
bool gemv_fits(DType dt, int64_t rows, int64_t k, const void* x, const void* w);
void gemv(const Launch& l, const GemvArgs& a);

// ---- linear helpers (cuda_linear.cu)
// z += bias (when bias); then y = act(z) (when act is not None; y may differ from z).
void bias_act(const Launch& l, DType dt, void* z, const void* bias, void* y, int64_t rows,
              int64_t cols, Activation act);
// dy *= act'(pre) in place (when act is not None); db += column sums of dy (when db).
size_t bias_grad_scratch_bytes(int64_t rows, int64_t cols);
void act_backward_bias_grad(const Launch& l, DType dt, void* dy, const void* pre, Activation act,
                            float* db, int64_t rows, int64_t cols, float* scratch);

// ---- layernorm and residual (cuda_norm.cu)
struct NormFwdArgs {
  DType dt = DType::F32;
  int64_t rows = 0, cols = 0;
  const void* x = nullptr;
  const void* residual = nullptr;  // residual mode: sum = residual + dropout(x)
  void* sum = nullptr;
  DropArgs drop;
  const void* gamma = nullptr;  // layernorm of x (or of sum in residual mode)
  const void* beta = nullptr;   // unused with rms
  void* y = nullptr;
  float* mean = nullptr;  // unused with rms
  float* rstd = nullptr;
  float eps = 1e-5f;
  // The layernorm's true width (<= cols): the columns after it are padding, zero in x (or sum),
  // gamma and beta, so they add nothing to the mean and y is zero there.
  int64_t width = 0;
  bool rms = false;  // RMSNorm: mean 0, no beta
};
void norm_forward(const Launch& l, const NormFwdArgs& a);

// out = base + layernorm_backward(dy), base = out itself (accumulate), or d_sum, or 0;
// then d_drop = dropout(out) when defined. dgamma/dbeta += (deterministic partial sums).
struct NormBwdArgs {
  DType dt = DType::F32;
  int64_t rows = 0, cols = 0;
  const void* x = nullptr;  // the normalised input (sum in residual mode)
  const void* gamma = nullptr;
  const float* mean = nullptr;
  const float* rstd = nullptr;
  const void* dy = nullptr;
  const void* d_sum = nullptr;
  bool accumulate = false;
  void* out = nullptr;
  void* d_drop = nullptr;
  DropArgs drop;
  float* dgamma = nullptr;
  float* dbeta = nullptr;  // unused with rms
  float* scratch = nullptr;
  // As NormFwdArgs::width; dy is zero in the padding too, and out gets nothing added there.
  int64_t width = 0;
  bool rms = false;  // RMSNorm: mean 0 (no mean term in dx), no dbeta
};
size_t norm_backward_scratch_bytes(const Launch& l, int64_t rows, int64_t cols);
void norm_backward(const Launch& l, const NormBwdArgs& a);
// QK-norm (HeadNormFwd/HeadNormBwd in backend/ops.h): RMSNorm over each q and k head of packed
// qkv, in place. Forward: saved gets the heads as they came in, rstd one value per head.
// Backward: qkv is d_qkv; d_q_gamma/d_k_gamma += (deterministic partial sums in scratch).
struct HeadNormArgs {
  DType dt = DType::F32;
  int64_t rows = 0, cols = 0;       // of qkv
  int64_t heads = 0, normed = 0;    // q heads; q and k heads
  int64_t head_dim = 0, width = 0;  // stored and true head size
  float eps = 1e-6f;
  void* qkv = nullptr;
  void* saved = nullptr;
  float* rstd = nullptr;
  const void* q_gamma = nullptr;
  const void* k_gamma = nullptr;
  float* d_q_gamma = nullptr;
  float* d_k_gamma = nullptr;
  float* scratch = nullptr;
};
constexpr int64_t kHeadNormMaxHeadDim = 1024;
void head_norm_forward(const Launch& l, const HeadNormArgs& a);
size_t head_norm_backward_scratch_bytes(const Launch& l, int64_t rows, int64_t normed,
                                        int64_t head_dim);
void head_norm_backward(const Launch& l, const HeadNormArgs& a);
// Residual backward without layernorm: d_res = d_sum (or 0), d_x = dropout(d_res).
void residual_backward_plain(const Launch& l, DType dt, const void* d_sum, void* d_res, void* d_x,
                             int64_t n, DropArgs d);

// ---- gated activations and rotary positions (cuda_modern.cu)
// y[r, :n] = activate(kind, gate) * up with pre[r] = (gate | up), each n wide (GluFwd).
void glu_forward(const Launch& l, DType dt, const void* pre, void* y, int64_t rows, int64_t n,
                 Activation kind);
// d_pre[r] = (dy * up * act'(gate) | dy * act(gate)) (GluBwd).
void glu_backward(const Launch& l, DType dt, const void* pre, const void* dy, void* d_pre,
                  int64_t rows, int64_t n, Activation kind);
// Rotates the q and k heads of qkv [rows, (heads + 2 kv_heads) * head_dim] in place (Rope in
// backend/ops.h); inverse: by minus the angle (the backward).
struct RopeArgs {
  DType dt = DType::F32;
  void* qkv = nullptr;
  const float* cos = nullptr;  // [>= seq, rotary_dim / 2]
  const float* sin = nullptr;
  const int* positions = nullptr;  // [rows]: each row's table row; null: row % seq
  int64_t rows = 0, seq = 0, heads = 0, head_dim = 0, rotary_dim = 0;
  int64_t kv_heads = 0;  // the K/V heads' count (heads for multi-head attention)
  bool inverse = false;
};
void rope(const Launch& l, const RopeArgs& a);

// ---- attention: cuda_flash.cu (Hopper warpgroups, head sizes 64 to 128), cuda_flash_mma.cu
// (mma.sync, head sizes up to 256), cuda_attention.cu (generic fp32 kernels and the dispatch)
struct AttnArgs {
  DType dt = DType::F32;
  int64_t batch = 0, seq = 0, heads = 0, head_dim = 0;
  // Grouped-query attention: query head h reads K/V head h / (heads / kv_heads); qkv rows are
  // (q: heads | k: kv_heads | v: kv_heads) heads. 0: heads.
  int64_t kv_heads = 0;
  bool causal = false;
  bool tf32 = false;  // fp32 activations may be multiplied as TF32 (train.precision tf32)
  float scale = 1.0f;
  DropArgs drop;
  const int* key_lengths = nullptr;
  const void* qkv = nullptr;
  void* out = nullptr;
  float* lse = nullptr;
  const void* d_out = nullptr;
  void* d_qkv = nullptr;
  float* dvec = nullptr;  // scratch f32 [batch, heads, seq] for rowsum(dO ∘ O)
  // Scratch f32 [batch, heads, seq, head_dim], 16-byte aligned: when set, the tensor-core
  // backward adds dQ here with atomics (faster, not bitwise reproducible).
  float* dq_accum = nullptr;
  // Deterministic split of the dK/dV kernels (attention_dkv_splits): with dkv_splits > 1 the
  // query heads of each K/V head's group are shared out over that many blocks, each writing its
  // fp32 partial (scaled dK, then dV, laid out as d_qkv's k and v rows) to
  // dkv_partials [dkv_splits][batch * seq][2][kv heads][head_dim]; attention_backward then
  // adds the partials in split order.
  int64_t dkv_splits = 1;
  float* dkv_partials = nullptr;
  // When set, the forward prunes scores and probabilities (AttentionPrune in backend/ops.h):
  // three counters, zero scores, zero probabilities, scores.
  unsigned long long* prune_counts = nullptr;
  float prune_tau = 0.0f;
  // The backward of rotary positions (Rope in backend/ops.h), when rope_half > 0: the dQ and dK
  // the backward writes come out turned back, columns c and c + rope_half (c < rope_half) of
  // position p by minus the angles rope_cos/rope_sin [p * rope_half + c]. The tensor-core kernels
  // apply it to their accumulators before the stores (rope_fused); otherwise attention_backward
  // runs the rope kernel on d_qkv after them.
  const float* rope_cos = nullptr;
  const float* rope_sin = nullptr;
  int rope_half = 0;
  HWT_HD int64_t kv() const { return kv_heads > 0 ? kv_heads : heads; }
  HWT_HD int64_t group() const { return heads / kv(); }  // query heads per K/V head
  HWT_HD int64_t qkv_stride() const { return (heads + 2 * kv()) * head_dim; }
};
void attention_forward(const Launch& l, const AttnArgs& a);
void attention_backward(const Launch& l, const AttnArgs& a);
// Whether the tensor-core backward kernels apply the rotary backward (AttnArgs::rope_half)
// themselves: a half of whole 8-column fragments, on the Hopper kernels or the mma.sync ones up
// to head size 128.
bool rope_fused(const AttnArgs& a);
// How many blocks the backward shares each group's query heads over (a divisor of group()):
// 1 when the dK/dV kernel has enough blocks to fill the GPU, else enough for two full waves of
// resident blocks, so that under a causal mask the long blocks of the first keys finish early.
// atomic_dq: dQ will be added by atomics (a.dq_accum set).
int64_t attention_dkv_splits(const Launch& l, const AttnArgs& a, bool atomic_dq);
// The smallest divisor s of `group` that makes blocks * s at least two waves of
// `resident_per_sm` blocks on each of the l.sms multiprocessors (group when none does).
int64_t dkv_split_count(const Launch& l, int64_t blocks, int64_t group, int resident_per_sm);
// Whether the tensor-core kernels take these arguments (else the generic kernels run).
bool flash_supported(const AttnArgs& a);
void flash_forward(const Launch& l, const AttnArgs& a);
void flash_backward(const Launch& l, const AttnArgs& a);  // computes a.dvec itself
int64_t flash_dkv_splits(const Launch& l, const AttnArgs& a, bool atomic_dq);
// Why the mma.sync kernels cannot take these arguments, or empty when they can.
std::string_view mma_attention_unsupported(const AttnArgs& a);
void mma_attention_forward(const Launch& l, const AttnArgs& a);
void mma_attention_backward(const Launch& l, const AttnArgs& a);  // computes a.dvec itself
int64_t mma_dkv_splits(const Launch& l, const AttnArgs& a);
// Why attention with these arguments runs the generic kernels, or empty.
std::string_view attention_slow_reason(const AttnArgs& a);
// Copies `groups` runs of d_src elements (stored back to back) into runs of d_dst elements:
// padding with zeros (d_dst > d_src) or dropping the padding (d_dst < d_src).
void repack_heads(const Launch& l, DType dt, const void* src, void* dst, int64_t groups,
                  int64_t d_src, int64_t d_dst);

// ---- generation's KV cache (cuda_decode_attention.cu): KvAppend and DecodeAttention of
// backend/ops.h. Caches are [cache_batch, kv_heads, capacity, head_dim].
struct KvArgs {
  DType dt = DType::F32;
  int64_t batch = 0, heads = 0, kv_heads = 0, head_dim = 0, capacity = 0;
  int64_t cache_batch = 0;  // the caches' first dimension (>= batch)
};
// With rope_half > 0, q and k of qkv are first turned in place at their positions (start[b] + t),
// by the angles rope_cos/rope_sin [position * rope_half + c] (Rope in backend/ops.h), and the
// cache gets the turned keys.
void kv_append(const Launch& l, const KvArgs& a, void* qkv, const int* start, int64_t seq, void* k,
               void* v, const float* rope_cos = nullptr, const float* rope_sin = nullptr,
               int rope_half = 0);
// Keys split into `splits` chunks per (sequence, head) (flash-decoding): each block's partial
// softmax (max, sum, weighted values) goes to `partials` (f32, decode_partial_floats of them),
// and the last block of a (sequence, head) to finish, counted in `done` (batch * heads words,
// zero before the call and left zero after it), combines them; with one split the block writes
// out directly. With `start` the kernel appends the new token's k and v itself, k (and q)
// turned when rope_half > 0 (DecodeAttention).
int64_t decode_splits(const Launch& l, const KvArgs& a);
size_t decode_partial_floats(const KvArgs& a, int64_t splits);
void decode_attention(const Launch& l, const KvArgs& a, const void* qkv, void* k, void* v,
                      const int* lengths, void* out, float scale, int64_t splits, float* partials,
                      unsigned* done, const int* start = nullptr, const float* rope_cos = nullptr,
                      const float* rope_sin = nullptr, int rope_half = 0);

// Generation's greedy chain (DecodeAdvance): the next decode step's ids, positions and lengths
// from this step's picks, each pick also kept in tokens [batch, capacity] at its position.
void decode_advance(const Launch& l, const int* picks, int* ids, int* positions, int* lengths,
                    int* tokens, int64_t batch, int64_t capacity);

// ---- embeddings and pooling (cuda_embedding.cu)
// positions: each row's row of pos (null: row % seq).
void embedding_forward(const Launch& l, DType dt, const int* ids, const void* table,
                       const void* pos, const int* positions, void* out, int64_t rows, int64_t cols,
                       int64_t vocab, int64_t seq);
size_t embedding_backward_scratch_bytes(int64_t rows, int64_t vocab);
void embedding_backward(const Launch& l, DType dt, const int* ids, const void* d_out,
                        float* d_table, float* d_pos, int64_t rows, int64_t cols, int64_t vocab,
                        int64_t seq, void* scratch, size_t scratch_bytes);
void pool_forward(const Launch& l, DType dt, const void* x, void* out, const int* lengths,
                  int64_t batch, int64_t seq, int64_t cols, bool mean);
void pool_backward(const Launch& l, DType dt, const void* d_out, void* d_x, const int* lengths,
                   int64_t batch, int64_t seq, int64_t cols, bool mean);

// ---- tensor-train-matrix token tables (cuda_tt_embedding.cu)
constexpr int kTtmMaxCores = 8;
constexpr int kTtmMaxRank = 64;
// The cores (TtEmbeddingFwd): core k is [ranks[k], vocab[k], hidden[k], ranks[k+1]] in the
// launch's dtype; grad[k] (backward) its f32 gradient.
struct TtmArgs {
  int cores = 0;
  const void* core[kTtmMaxCores] = {};
  float* grad[kTtmMaxCores] = {};
  int64_t ranks[kTtmMaxCores + 1] = {}, vocab[kTtmMaxCores] = {}, hidden[kTtmMaxCores] = {};
  int64_t rows = 1, cols = 1;  // Π vocab, Π hidden
};
// out[r] = row ids[r] of the table + pos[r % seq] (pos optional); one thread per element.
void tt_embedding_forward(const Launch& l, DType dt, const TtmArgs& t, const int* ids,
                          const void* pos, void* out, int64_t rows, int64_t seq);
size_t tt_embedding_backward_scratch_bytes(const TtmArgs& t, int64_t rows);
// grad[k] += the core gradients of d_out's rows: each row's slice gradients into scratch, then
// summed in row order (deterministic).
void tt_embedding_backward(const Launch& l, DType dt, const TtmArgs& t, const int* ids,
                           const void* d_out, int64_t rows, void* scratch);

// ---- losses (cuda_loss.cu)
// CrossEntropy (ops.h): rows of `cols` logits of which the first `classes` are classes (the
// rest: padding, out of the softmax, gradient 0); loss_scale (device f32[1], optional) multiplies
// the gradient besides grad_scale. d_logits and lse optional.
struct CrossEntropyArgs {
  DType dt = DType::F32;
  const void* logits = nullptr;
  const int* targets = nullptr;
  float* losses = nullptr;
  void* d_logits = nullptr;
  float* lse = nullptr;
  int64_t rows = 0, cols = 0, classes = 0;
  float grad_scale = 1.0f;
  const float* loss_scale = nullptr;
};
void cross_entropy(const Launch& l, const CrossEntropyArgs& a);
// The gradient of a cross_entropy that wrote lse, written as its fp8 copies (cuda_fp8.cu's tile
// kernel): cast's out and out_t of the [rows, cols] gradient (its x and x_dt unused).
void cross_entropy_fp8(const Launch& l, const CrossEntropyArgs& a, const Fp8CastArgs& cast);
void argmax_rows(const Launch& l, DType dt, const void* logits, int* out, int64_t rows,
                 int64_t cols, int64_t classes);

// ---- optimizers (cuda_optimizer.cu)
struct OptCommon {
  float* params = nullptr;
  const float* grads = nullptr;
  void* compute = nullptr;  // lower-precision copy of params, optional
  DType compute_dt = DType::BF16;
  int64_t n = 0, n_decay = 0;
  const float* norm_sq = nullptr;  // device grad_norm_sq, with max_norm > 0 or loss_scale
  float max_norm = 0.0f;
  const float* loss_scale = nullptr;  // device scale: unscale grads, skip on overflow
  // DynaProp (GradPrune in backend/ops.h): with prune_zeros set, gradients |g| <= prune_tau
  // (after unscale and clip) enter the update as 0 and are counted: [0] outside the sorted
  // [begin, end) pairs of `linear` (linear_pairs of them), [1] inside.
  unsigned long long* prune_zeros = nullptr;
  float prune_tau = 0.0f;
  const int64_t* linear = nullptr;
  int64_t linear_pairs = 0;
};
// One fused launch per step. The states are fp32 like params (SGD's buf is nullptr without
// momentum); the hyper-parameters are the op's own struct, bias corrections included, and reach
// the kernel by value.
void adamw_step(const Launch& l, const OptCommon& c, float* m, float* v, const AdamWHyper& h);
void adan_step(const Launch& l, const OptCommon& c, float* m, float* v, float* n, float* prev,
               const AdanHyper& h);
void sgd_step(const Launch& l, const OptCommon& c, float* buf, const SgdHyper& h);
// Dynamic loss scaling: state = {scale, clean steps}; see LossScaleUpdate in ops.h.
void loss_scale_update(const Launch& l, float* state, const float* norm_sq, float growth,
                       float backoff, int64_t interval);

}  // namespace hwt::cuda
