// The backend op set: each op's arguments, then the list of ops (HWT_BACKEND_OPS), declared once.
// Every op has a CPU reference, a CUDA implementation and a trace record; layers describe their
// work only through these structs.
//
// Conventions: activations are row-major [rows, cols] with rows = batch * seq; linear weights
// use PyTorch's nn.Linear layout [out, in]; parameter gradients are accumulated (+=), activation
// gradients are written unless an op says otherwise; optional tensors are left undefined.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "backend/optimizer_hyper.h"
#include "core/activation_math.h"
#include "core/fp8_scale_rule.h"
#include "core/norm_kind.h"
#include "core/pooling.h"
#include "core/tensor.h"

namespace hwt {

// dst = src: same dtype and element count.
struct Copy {
  Tensor dst, src;
};

// Every element of t = value.
struct Fill {
  Tensor t;
  float value = 0.0f;
};

// dst = src cast to dst's dtype; same element count.
struct Convert {
  Tensor dst, src;
};

// The fp8 operand copies of a [rows, cols] tensor: `out` laid out as it is ([rows, cols]), `out_t`
// transposed ([cols, rows]: the K-major copy a backward GEMM reads), either undefined where not
// wanted; one-byte fp8 of one format (F8E4M3 or F8E5M2), each code fp8(v · scale) rounded to
// nearest even and saturating (core/fp8.h's quantize_fp8), so a copy's value is code / scale.
// scale: f32 [1], in the backend's memory (the delayed-scaling state). What the casts saw is added
// once to what earlier casts left: amax (f32 [1]) becomes the larger of itself and the largest
// |v| over the finite values, and counts (i32 [3]) gain the values that saturated, the non-zero
// values that became zero, and the NaN or infinite ones. amax and counts both undefined: casts
// whose figures are already kept (a tensor cast before with the same scale). An element-wise op
// writing them (GluFwd, GluBwd) casts its fp32 result, before the output's own rounding.
struct Fp8Out {
  Tensor out, out_t, scale, amax, counts;
  bool active() const { return out.defined() || out_t.defined(); }
  DType dtype() const { return (out.defined() ? out : out_t).dtype; }  // the copies' format
};

// x, seen as a [rows, cols] matrix, written as its fp8 copies `to` (one pass over x for both).
struct Fp8Cast {
  Tensor x;
  Fp8Out to;
};

// Delayed scaling's end of a step for T fp8 tensors of one format (train/fp8_scaling.h). amax
// f32 [T]: what this step's casts of each tensor saw; history f32 [T, H]: each tensor's amaxes
// of its last H steps, oldest first; scale f32 [T]; scale_inv f32 [T] or [T, k] (column 0 is
// tensor t's: k = 4 puts each on a 16-byte boundary of its own). Per tensor the history moves
// on by one step (the oldest leaves, amax comes in last), the next scale follows
// core/fp8_scale_rule.h from the window's largest amax (Max) or from amax (MostRecent), scale_inv
// becomes 1 / scale, and amax is zeroed for the next step's casts. Device-side, so a captured
// step needs no host read.
struct Fp8ScaleUpdate {
  Tensor amax, history, scale, scale_inv;
  Fp8Format format = Fp8Format::E4M3;
  AmaxAlgorithm algorithm = AmaxAlgorithm::Max;
  int margin = 0;  // the scale leaves a headroom of 2^margin
};

// Inverted dropout: keep element i with probability 1 - p (Philox draw of (seed, i)), scale
// 1/(1-p).
struct Dropout {
  float p = 0.0f;
  uint64_t seed = 0;
  bool active() const { return p > 0.0f; }
};

// One fp8 tensor's delayed-scaling state (train/fp8_scaling.h's views): the scale its casts
// multiply by and its inverse (f32 [1]), the amax they raise (f32 [1]), their counts (i32 [3]).
struct Fp8Scaled {
  Tensor scale, scale_inv, amax, counts;
};

// Operand copies of an fp8 linear that the op producing its x or dy already wrote (Fp8Out):
// x [M,K] and xᵀ [K,M] (E4M3), dy [M,N] and dyᵀ [N,M] (E5M2). The products read them in place
// of casting, and the producer kept their figures.
struct Fp8Copies {
  Tensor x, x_t, dy, dy_t;
};

// The fp8 form of a linear layer's products (train.precision = "fp8"): each runs in fp8 where
// its flag says so and as without this otherwise (the per-GEMM choice). x and w are cast to
// E4M3, dy to E5M2, each with its own scale; the casts land in `workspace` (a one-byte dtype, at
// least fp8_linear_workspace_bytes, backend/fp8_linear.h), which the products use in turn.
struct Fp8Linear {
  Fp8Scaled x, w, dy;
  bool forward = false, input_grad = false, weight_grad = false;
  Tensor workspace;
  // Where the forward's cast of w also writes wᵀ (one-byte, at least N·K bytes) for the
  // input-grad product, when both run in fp8: kept from the forward to the backward, so w is
  // read once a step. Undefined: the input-grad product casts w again.
  Tensor w_t;
  Fp8Copies made{};
  bool any() const { return forward || input_grad || weight_grad; }
};

// y[M,N] = act(x[M,K] · wᵀ + b); w is [N,K]. With an activation, pre_act keeps x·wᵀ + b.
// Gated activations are not fused here (GluFwd follows the linear instead).
struct LinearFwd {
  Tensor x, w, b, y;
  Activation act = Activation::None;
  Tensor pre_act;
  Fp8Linear fp8{};
};

// An inference linear with its neighbours fused in (generation's steps; nothing is kept for a
// backward): y = residual + g(norm(x) · wᵀ + b), where
// - norm, when gamma is defined, is LayerNormFwd's (eps, width, kind) of each row of x;
// - g is `act` of each column as in LinearFwd or, for a gated act (is_gated), GluFwd's of the
//   (gate | up) halves of the product: w [2n, k] (and b [2n]) give y [rows, n];
// - residual, when defined, is added last ([rows, n], not aliasing y).
// Every stage is rounded to the activation dtype as the plain ops it stands for round
// (backend/fused_linear.h composes them: the CPU's reference).
struct FusedLinearFwd {
  Tensor x, w, b, y;
  Tensor gamma, beta;
  float eps = 1e-5f;
  int64_t width = 0;
  NormKind kind = NormKind::LayerNorm;
  Activation act = Activation::None;
  Tensor residual;
};

// Backward of LinearFwd. dy is the gradient of y; with an activation it is overwritten by the
// gradient of pre_act. dx is written (added with accumulate_dx); dw and db are accumulated.
struct LinearBwd {
  Tensor x, w, dy, pre_act;
  Activation act = Activation::None;
  Tensor dx, dw, db;
  bool accumulate_dx = false;
  Fp8Linear fp8{};
};

// c = act(alpha · op(a) · op(b) + beta · c + bias), rank 2 ([M,K]) or batched rank 3
// ([batch, M, K]). c has a's dtype, or f32 (weight
// gradients). bias (optional, [N], a's dtype) and act work as in LinearFwd, which is this with
// trans_b; an activation needs beta = 0 and pre_act. Every GEMM of the linear ops runs as one.
// fp8 operands (Fp8Cast's copies; E4M3 or E5M2 each, not both E5M2) stand for their codes times
// a_scale_inv and b_scale_inv (f32 [1] each, 1 / the cast's scale); both are K-major, c = a · bᵀ
// (trans_b only, as Hopper's fp8 tensor cores read them), rank 2, and c is bf16, f16 or f32
// (bias, activation and beta as for any other product).
struct Matmul {
  Tensor a, b, c;
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 0.0f;
  Tensor bias{};
  Activation act = Activation::None;
  Tensor pre_act{};
  Tensor a_scale_inv{}, b_scale_inv{};
};

// Every norm op takes `width`, the true width of rows stored padded (model.hidden_multiple):
// the statistics are over the first `width` columns and the outputs and dx are zero after them.
// The padding columns of x, dy, gamma and beta must be zero. 0: the whole row.
// `kind` picks LayerNorm or RMSNorm (core/norm_kind.h); RMSNorm has no beta, no dbeta and no
// mean (leave them undefined): the layernorm ops serve both kinds.
inline int64_t norm_width(int64_t width, int64_t cols) {
  return width > 0 ? width : cols;
}

struct LayerNormFwd {
  Tensor x, gamma, beta, y, mean, rstd;  // mean, rstd: f32 [rows]
  float eps = 1e-5f;
  int64_t width = 0;
  NormKind kind = NormKind::LayerNorm;
};

// dx is written, or added to with accumulate_dx; dgamma and dbeta are accumulated.
struct LayerNormBwd {
  Tensor x, gamma, mean, rstd, dy, dx, dgamma, dbeta;
  bool accumulate_dx = false;
  int64_t width = 0;
  NormKind kind = NormKind::LayerNorm;
};

// sum = residual + dropout(x); when gamma is defined also y = layernorm(sum).
// Serves pre-LN blocks (sum is the residual stream, y feeds the next sublayer) and post-LN
// blocks (y is the block output, sum is kept for backward).
struct ResidualFwd {
  Tensor x, residual, sum;
  Dropout drop;
  Tensor gamma, beta, y, mean, rstd;
  float eps = 1e-5f;
  int64_t width = 0;  // of the layernorm
  NormKind kind = NormKind::LayerNorm;
};

// g = d_sum (if defined) + layernorm_backward(d_y) (if gamma defined); d_residual = g;
// d_x = dropout_backward(g). d_residual may alias d_sum or d_y. d_gamma, d_beta are accumulated.
struct ResidualBwd {
  Tensor d_sum, d_y, sum, gamma, mean, rstd;
  Dropout drop;
  Tensor d_x, d_residual, d_gamma, d_beta;
  int64_t width = 0;  // of the layernorm
  NormKind kind = NormKind::LayerNorm;
};

struct DropoutFwd {
  Tensor x, y;  // y may alias x
  Dropout drop;
};

struct DropoutBwd {
  Tensor dy, dx;  // dx may alias dy
  Dropout drop;
};

// A gated MLP's activation: pre [rows, 2n] holds (gate | up) per row, y [rows, n] =
// activate(kind, gate) · up, kind SwiGlu or GeGlu (core/activation_math.h). With fp8 active, y
// ([rows, n]) is also or only (y undefined) written as its fp8 copies.
struct GluFwd {
  Tensor pre, y;
  Activation kind = Activation::SwiGlu;
  Fp8Out fp8{};
};

// d_pre [rows, 2n] is written: d_gate = dy · up · act'(gate), d_up = dy · act(gate); with fp8
// active, also or only (d_pre undefined) as its fp8 copies ([rows, 2n] and [2n, rows]).
struct GluBwd {
  Tensor pre, dy, d_pre;
  Activation kind = Activation::SwiGlu;
  Fp8Out fp8{};
};

// Multi-head scaled dot-product attention over packed projections, with grouped-query
// attention (Ainslie et al. 2023): query head h reads K/V head h / (heads / kv_heads).
// qkv: [batch*seq, (heads + 2*kv_heads)*head_dim] laid out (q | k | v), each head-major;
// out: [batch*seq, heads*head_dim]; lse: f32 [batch, heads, seq], the log-sum-exp of each
// softmax row, all that backward needs (probabilities are recomputed, never stored).
// key_lengths (i32 [batch], optional) masks keys at positions >= length; causal masks j > i.
// Attention dropout element index: ((b*heads + h)*seq + i)*seq + j.
struct AttentionDims {
  int64_t batch = 0, seq = 0, heads = 0, head_dim = 0;
  bool causal = false;
  Tensor key_lengths;
  float scale = 1.0f;
  Dropout drop;
  int64_t kv_heads = 0;  // dividing heads; 0: heads (multi-head attention)
  int64_t kv() const { return kv_heads > 0 ? kv_heads : heads; }
  int64_t qkv_width() const { return (heads + 2 * kv()) * head_dim; }
};

// DynaTran inside attention (inference forwards only; no backward follows): a scaled score s
// with |s| <= tau becomes 0 before the softmax, a probability p <= tau becomes 0 after it (the
// rest are not renormalised); lse is that of the pruned scores. counts: three 64-bit unsigned
// counters stored as i32 [6], += the zero scores, the zero probabilities and the scores
// (unmasked query-key pairs) of this call.
struct AttentionPrune {
  float tau = 0.0f;
  Tensor counts;
  bool active() const { return counts.defined(); }
};

// Rotary position embedding (Su et al. 2021, RoFormer) of q and k in packed qkv (AttentionDims'
// layout), in place, as GPT-NeoX and Llama lay it out ("rotate half"): in each head, element
// i < rotary_dim/2 and element i + rotary_dim/2 turn by the angle of (position, i), position =
// row % seq, or positions[row] when given (generation's decode: each sequence at its own
// length); elements from rotary_dim on stay. cos, sin: f32 [seq or more, rotary_dim/2], the
// angles' cosines and sines, computed once per model. rope_backward turns by minus the angle,
// the backward of the rotation (it is orthogonal), on a gradient of qkv.
struct Rope {
  Tensor qkv, cos, sin;
  int64_t seq = 0, heads = 0, kv_heads = 0, head_dim = 0, rotary_dim = 0;
  Tensor positions{};                                             // I32 [rows], optional
  int64_t kv() const { return kv_heads > 0 ? kv_heads : heads; }  // 0 K/V heads: one per head
};

// QK-norm (Qwen3; Dehghani et al. 2023): RMSNorm over each q head and each k head of packed
// qkv (AttentionDims' layout), in place, q heads scaled by q_gamma and k heads by k_gamma
// ([head_dim] each, shared by the heads), applied before the rotation. The statistics are over
// the first `width` columns of a head (its true size; the padding columns are zero and stay
// zero). v is left alone.
struct HeadNormShape {
  int64_t heads = 0, kv_heads = 0, head_dim = 0, width = 0;
  float eps = 1e-6f;
  int64_t kv() const { return kv_heads > 0 ? kv_heads : heads; }
  int64_t normed() const { return heads + kv(); }  // heads a row normalises: q's, then k's
  // The true head width, after checking that the tensors fit this shape (InternalError if not).
  int64_t checked_width(const Tensor& qkv, const Tensor& saved, const Tensor& rstd,
                        const Tensor& q_gamma, const Tensor& k_gamma) const;
};

// saved: [rows, normed() * head_dim], the q and k heads as they came in, for the backward;
// rstd: f32 [rows, normed()].
struct HeadNormFwd {
  HeadNormShape shape;
  Tensor qkv, q_gamma, k_gamma, saved, rstd;
};

// d_qkv's q and k heads hold the gradient of the norm's output and are overwritten with that of
// its input; v's part stays. d_q_gamma and d_k_gamma (f32) are accumulated.
struct HeadNormBwd {
  HeadNormShape shape;
  Tensor d_qkv, saved, rstd, q_gamma, k_gamma, d_q_gamma, d_k_gamma;
};

struct AttentionFwd {
  AttentionDims dims;
  Tensor qkv, out, lse;
  AttentionPrune prune{};
};

// When rope.rotary_dim > 0, q and k of qkv were rotated by rope_forward: d_qkv's q and k parts
// come out turned back as rope_backward turns them (the gradient of the projection's output).
// rope.qkv is d_qkv. The CUDA backend applies it inside the kernels' stores where it can.
struct AttentionBwd {
  AttentionDims dims;
  Tensor qkv, out, d_out, lse, d_qkv;
  Rope rope{};
};

// A layer's key/value cache for generation: k, v [batch, kv_heads, capacity, head_dim] in the
// activations' dtype, keys after the rotary turn (Rope), grouped-query K/V heads at their count.
struct KvCache {
  Tensor k, v;
  int64_t capacity() const { return k.dim(2); }
};

// Writes the k and v heads of qkv [batch*seq, (heads + 2*kv_heads)*head_dim] (AttentionDims'
// layout) into the cache: row (b, t) goes to position start[b] + t (start: i32 [batch];
// undefined: 0, the prompt). Every position must lie below the cache's capacity. When
// rope.rotary_dim > 0 (rope.qkv is qkv, rope.positions undefined), q and k of qkv are first
// turned in place as rope_forward turns them at those positions, so the cache gets the turned
// keys (generation's decode step: one kernel on CUDA).
struct KvAppend {
  Tensor qkv;
  KvCache cache;
  Tensor start;
  int64_t seq = 0, heads = 0, kv_heads = 0, head_dim = 0;
  Rope rope{};
  int64_t kv() const { return kv_heads > 0 ? kv_heads : heads; }
};

// Attention of one query row per sequence (generation's decode step) over its cached keys:
// q = the q heads of qkv [batch, (heads + 2*kv_heads)*head_dim] (AttentionDims' layout), keys
// and values positions [0, lengths[b]) of the cache (i32 [batch], each >= 1), grouped-query as
// AttentionFwd; out [batch, heads*head_dim]. Without `start` the new token's own k and v are
// already in the cache. With `start` (i32 [batch], each lengths[b] - 1) this op appends them
// first, as kv_append appends them there with this `rope` (whose qkv is this qkv), and attends
// with q turned alike; qkv itself is left as it is.
struct DecodeAttention {
  Tensor qkv;
  KvCache cache;
  Tensor lengths, out;
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
  float scale = 1.0f;
  Tensor start{};
  Rope rope{};
  int64_t kv() const { return kv_heads > 0 ? kv_heads : heads; }
};

// Generation's greedy decode chain: the next decode step's inputs made on the device from this
// step's picks (its argmax), so that steps follow each other without the host. All i32 [batch]
// but tokens, i32 [batch, capacity]: tokens[b, positions[b]] = picks[b] (the pick that follows
// the token at that position); ids[b] = picks[b]; positions[b] = min(positions[b] + 1,
// capacity - 1) (a full cache keeps its last position, as Model::decode does); lengths[b] =
// positions[b] + 1, the cache and the new token.
struct DecodeAdvance {
  Tensor picks, ids, positions, lengths, tokens;
  // The batch, after checking the tensors' dtypes and sizes (InternalError if they differ).
  int64_t checked_batch() const;
};

// out[r] = table[ids[r]] + pos[r % seq] (pos optional), or pos[positions[r]] when positions
// (I32 [rows]) is given.
struct EmbeddingFwd {
  Tensor ids, table, pos, out;
  int64_t seq = 0;
  Tensor positions{};
};

// d_table[ids[r]] += d_out[r]; d_pos[r % seq] += d_out[r]. Deterministic on every backend.
struct EmbeddingBwd {
  Tensor ids, d_out, d_table, d_pos;
  int64_t seq = 0;
};

// A tensor-train-matrix token table (model.tt.embedding): core k is [r_k, vocab_k, hidden_k,
// r_{k+1}] with r_0 = r_d = 1, and with ids[r] = (v_1 … v_d), hidden index h = (h_1 … h_d) (the
// row-major digits of the cores' factors), out[r, h] = G_1[:, v_1, h_1, :] ··· G_d[:, v_d, h_d, :]
// + pos[r % seq] (pos optional). The table itself is never formed.
struct TtEmbeddingFwd {
  Tensor ids;
  std::vector<Tensor> cores;
  Tensor pos, out;
  int64_t seq = 0;
};

// d_cores[k] (f32) += the gradient of every looked-up row through core k; d_pos as
// EmbeddingBwd. Deterministic on every backend.
struct TtEmbeddingBwd {
  Tensor ids, d_out;
  std::vector<Tensor> cores, d_cores;
  Tensor d_pos;
  int64_t seq = 0;
};

// out[b] = x[b*seq] (First) or the mean of x[b*seq + t] for t < lengths[b] (Mean).
struct PoolFwd {
  Tensor x, out, lengths;
  int64_t seq = 0;
  Pooling mode = Pooling::First;
};

// Accumulates into d_x.
struct PoolBwd {
  Tensor d_out, d_x, lengths;
  int64_t seq = 0;
  Pooling mode = Pooling::First;
};

// Row-wise softmax cross-entropy. targets: i32 [N], negative = ignored (loss 0, gradient 0).
// Columns from `classes` on (when > 0) pad the row: out of the softmax, gradient 0.
// losses: f32 [N]. When d_logits is defined (it may alias logits) it receives
// (softmax - onehot) · grad_scale, in one pass, without storing probabilities elsewhere.
// loss_scale (optional f32 [1], the dynamic loss scale) multiplies the gradient as well.
// lse (optional f32 [N]) receives each row's log-sum-exp over its classes (0 where ignored).
// With fp8 active the gradient is also or only (d_logits undefined) written as its fp8 copies
// ([N, cols] and [cols, N], from its fp32 values): the LM head's dy, read by its fp8 backward.
// The CUDA backend needs lse for that, and d_logits undefined or apart from logits.
struct CrossEntropy {
  Tensor logits, targets, losses, d_logits;
  float grad_scale = 1.0f;
  Tensor loss_scale{};
  int64_t classes = 0;  // 0: every column
  Tensor lse{};
  Fp8Out fp8{};
};

// out[r] = the index of the largest logits[r, :classes] (classes 0: every column). out: i32 [rows].
struct ArgmaxRows {
  Tensor logits, out;
  int64_t classes = 0;
};

// out[0] = the sum (sum) or sum of squares (sum_squares) of every element of x. out: f32 [1].
struct Reduce {
  Tensor x, out;
};

// Gradient preprocessing fused into optimizer steps: each gradient is multiplied by
// clip = min(1, max_norm / (sqrt(grad_norm_sq) + 1e-6)) when max_norm > 0.
// grad_norm_sq is f32 [1] in device memory, so no host synchronisation is needed.
// With dynamic loss scaling, loss_scale (f32 [1] in device memory) is the factor the gradients
// carry: they (and the norm) are divided by it, and when grad_norm_sq is not finite (an
// overflow) the step changes nothing. grad_norm_sq must then be computed on every step.
struct GradClip {
  Tensor grad_norm_sq;
  float max_norm = 0.0f;
  Tensor loss_scale{};
};

// Runtime pruning of activations and activation gradients (DynaTran): x[i] = 0 where
// |x[i]| <= tau, in place; then zeros[0] += the number of zeros x now holds. zeros is a 64-bit
// unsigned counter stored as i32 [2] (8-byte aligned, device memory), so counts stay on the
// device until read.
struct PruneSmall {
  Tensor x;
  float tau = 0.0f;
  Tensor zeros;
};

// DynaProp fused into an optimizer step: a gradient g as the step uses it (times GradClip's
// factor) with |g| <= tau enters the update as 0; the gradient buffer itself is left as it is.
// zeros: two 64-bit unsigned counters stored as i32 [4] (8-byte aligned), += the zero gradients
// outside and inside `linear`: sorted, disjoint [begin, end) element ranges of this step's
// buffers (the dense layers' weights), 64-bit indices stored as i32 [4k]; undefined: none. A
// skipped step (overflow) counts nothing.
struct GradPrune {
  float tau = 0.0f;
  Tensor zeros, linear;
  bool active() const { return zeros.defined(); }
};

// Parameters are one flat fp32 buffer; elements [0, n_decay) take weight decay, the rest
// (biases, norms) do not. params_compute, when defined, receives a lower-precision copy.
struct OptimizerTensors {
  Tensor params, grads, params_compute;
  int64_t n_decay = 0;
  GradPrune prune{};
};

// Each optimizer step takes its hyper-parameters as one struct (optimizer_hyper.h) with the
// step's bias corrections filled in by at_step, so no backend computes them.

// AdamW (Loshchilov & Hutter): decoupled decay theta *= 1 - lr*wd before the Adam update.
struct AdamWStep {
  OptimizerTensors t;
  Tensor m, v;
  GradClip clip;
  AdamWHyper h;
};

// Adan (Xie et al. 2022), betas as its code (sail-sg/Adan) writes them, 1 - the paper's: d = g -
// g_prev (d = 0 at step 1); m, v, n with bias correction on all three; proximal decay theta /= 1 +
// lr*wd by default.
struct AdanStep {
  OptimizerTensors t;
  Tensor m, v, n, prev_grad;
  GradClip clip;
  AdanHyper h;
};

// SGD with (optionally Nesterov) momentum and coupled L2 weight decay, as torch.optim.SGD.
struct SgdStep {
  OptimizerTensors t;
  Tensor momentum_buf;
  GradClip clip;
  SgdHyper h;
};

// Dynamic loss-scale bookkeeping after an optimizer step, on the device. state: f32 [2] =
// {scale, clean steps}; grad_norm_sq: the step's squared norm of the scaled gradients. Not
// finite: scale *= backoff and the count restarts; else the count grows, and after `interval`
// clean steps scale *= growth.
struct LossScaleUpdate {
  Tensor state, grad_norm_sq;
  float growth = 2.0f, backoff = 0.5f;
  int64_t interval = 2000;
};

// The ops: X(name, Args) is an op `name` taking `const Args&`. From this list come the pure
// virtuals of Backend, the overrides every backend declares (HWT_BACKEND_OP_OVERRIDE), the Op
// enum the trace records and op_name(). A new op: its Args struct above, a line here, its CPU,
// CUDA and trace implementations, and a test of CUDA against the CPU (docs/architecture.md).
#define HWT_BACKEND_OPS(X)                 \
  X(copy, Copy)                            \
  X(fill, Fill)                            \
  X(convert, Convert)                      \
  X(fp8_cast, Fp8Cast)                     \
  X(fp8_scale_update, Fp8ScaleUpdate)      \
  X(linear_forward, LinearFwd)             \
  X(fused_linear_forward, FusedLinearFwd)  \
  X(linear_backward, LinearBwd)            \
  X(matmul, Matmul)                        \
  X(layernorm_forward, LayerNormFwd)       \
  X(layernorm_backward, LayerNormBwd)      \
  X(residual_forward, ResidualFwd)         \
  X(residual_backward, ResidualBwd)        \
  X(dropout_forward, DropoutFwd)           \
  X(dropout_backward, DropoutBwd)          \
  X(glu_forward, GluFwd)                   \
  X(glu_backward, GluBwd)                  \
  X(head_norm_forward, HeadNormFwd)        \
  X(head_norm_backward, HeadNormBwd)       \
  X(rope_forward, Rope)                    \
  X(rope_backward, Rope)                   \
  X(attention_forward, AttentionFwd)       \
  X(attention_backward, AttentionBwd)      \
  X(kv_append, KvAppend)                   \
  X(decode_attention, DecodeAttention)     \
  X(decode_advance, DecodeAdvance)         \
  X(embedding_forward, EmbeddingFwd)       \
  X(embedding_backward, EmbeddingBwd)      \
  X(tt_embedding_forward, TtEmbeddingFwd)  \
  X(tt_embedding_backward, TtEmbeddingBwd) \
  X(pool_forward, PoolFwd)                 \
  X(pool_backward, PoolBwd)                \
  X(cross_entropy, CrossEntropy)           \
  X(argmax_rows, ArgmaxRows)               \
  X(sum, Reduce)                           \
  X(sum_squares, Reduce)                   \
  X(prune_small, PruneSmall)               \
  X(adamw_step, AdamWStep)                 \
  X(adan_step, AdanStep)                   \
  X(sgd_step, SgdStep)                     \
  X(loss_scale_update, LossScaleUpdate)

// In a backend class: `HWT_BACKEND_OPS(HWT_BACKEND_OP_OVERRIDE)` declares every op.
#define HWT_BACKEND_OP_OVERRIDE(name, Args) void name(const Args& a) override;

enum class Op : uint8_t {
#define HWT_OP_ENUMERATOR(name, Args) name,
  HWT_BACKEND_OPS(HWT_OP_ENUMERATOR)
#undef HWT_OP_ENUMERATOR
};

// The op's name as it appears in traces and profiles: "linear_forward".
std::string_view op_name(Op op);

}  // namespace hwt
