// Model: embeddings, transformer blocks and task heads over one ParamStore and one planned
// ActivationArena. Explicit forward and backward (no autograd); every op goes to the Backend.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "config/train_config.h"
#include "data/batch.h"
#include "model/block.h"
#include "model/embeddings.h"
#include "model/heads.h"

namespace hwt {

struct LossSums {
  double seq = 0, token = 0;  // sums of per-label losses
  int64_t seq_count = 0, token_count = 0;
  // Mean loss per head, summed over heads (the training objective).
  double mean() const;
};

struct Predictions {
  std::vector<int32_t> seq;     // [batch]
  std::vector<int32_t> tokens;  // [batch*seq]
};

class Model {
 public:
  // `act_dtype` is the dtype of activations and of the weight copies layers read;
  // storage_multiple rounds the flat parameter buffers up (ParamStore::allocate).
  Model(const ModelConfig& cfg, Backend& backend, DType act_dtype = DType::F32,
        int64_t storage_multiple = 1);
  ~Model();

  // Plans activations for batches up to (max_batch, max_seq); call before the first step.
  // kv_capacity > 0 also reserves each layer's KV cache for generation (prefill, decode):
  // max_batch sequences of up to kv_capacity positions (at most model.max_seq).
  // With recomputation (train.recompute) the blocks share the first block's slots for what the
  // mode recomputes, and backward() rewrites them for each block just before its gradients.
  void plan(int64_t max_batch, int64_t max_seq, int64_t kv_capacity = 0,
            Recompute recompute = Recompute::None);
  void init_parameters(uint64_t seed) { params_.initialize(seed); }

  // Uploads a batch; later forward/backward calls work on it.
  void set_batch(const Batch& b, float grad_multiplier = 1.0f);
  // fp16 dynamic loss scaling: the logit gradients (hence all gradients) are multiplied by
  // scale[0], an f32 [1] device tensor (LossScaler::scale()); undefined turns it off.
  void set_loss_scale(Tensor scale) { loss_scale_ = scale; }
  // fp8 training: the linear layers whose products run in fp8 in training steps (null: none).
  // The table must outlive the steps that use it.
  void set_fp8(const Fp8Linears* table) { fp8_ = table; }
  // The weights of the dense linear layers (ParamInfo::linear_weight) and of the LM head, tied
  // to the token embedding or not: the layers fp8 training may run in fp8.
  std::vector<ParamStore::Handle> linear_weights() const;
  // Logits and per-label losses; when training also the logit gradients (fused in the loss).
  void forward(bool training, uint64_t step_seed);
  // Accumulates parameter gradients (call after a training forward).
  void backward();
  // Data parallel sends gradients while the backward pass runs. The pass has stages: 0 the
  // heads (and final norm), 1..layers the blocks from the last, layers+1 the embeddings; `hook`
  // runs after each (empty: none). grad_stage(i) is the stage after which the gradient of
  // params().infos()[i] is final.
  void set_backward_hook(std::function<void(int64_t stage)> hook) {
    backward_hook_ = std::move(hook);
  }
  int64_t grad_stage(size_t param_index) const { return grad_stage_[param_index]; }
  int64_t backward_stages() const { return cfg_.layers + 2; }

  // Generation with the KV cache (a causal LM planned with kv_capacity). prefill runs the
  // prompts of `b` (right-padded; labels may be left empty) through the forward and caches every
  // layer's k and v; prompt i's next-token logits are then row i*b.seq + lengths[i] - 1 of
  // token_logits(). decode runs one token per sequence at position kv_lengths()[i], appends its
  // k and v, and leaves the next-token logits in token_logits() [batch, vocab]. A sequence
  // whose cache is full is run at its last position again (its caller has ended it).
  void prefill(Batch b);
  // On a backend with graphs (CUDA) the second decode step of a batch size is recorded and the
  // later ones launch that record again: one launch per token instead of one per op.
  void decode(std::span<const int32_t> ids);
  // Greedy decode steps chained on the device: the first runs `ids` as decode() does, each later
  // one the argmax of the step before, whose inputs the device makes itself (decode_advance), so
  // the host waits once for all of them. Returns their picks, `steps` rows of a token per
  // sequence: what `steps` rounds of decode() and predictions() give. A sequence whose cache is
  // full keeps only the last of its picks there (its caller has ended it).
  std::vector<int32_t> decode_greedy(std::span<const int32_t> ids, int64_t steps);
  const std::vector<int32_t>& kv_lengths() const { return kv_lengths_; }

  LossSums losses();          // downloads: synchronises
  Predictions predictions();  // argmax of the logits; downloads
  Tensor seq_logits();
  Tensor token_logits();

  const ModelConfig& config() const { return cfg_; }
  // model.prune's counters; null when every threshold is 0.
  Pruning* pruning() { return pruning_.get(); }
  ParamStore& params() { return params_; }
  const ParamStore& params() const { return params_; }
  Backend& backend() const { return backend_; }
  size_t activation_bytes() const { return arena_.bytes(); }
  const ActivationArena& arena() const { return arena_; }
  // One line per tensor-train layer kind (every block contracts alike): "attn.qkv: factored
  // (x·L'ᵀ)·R'ᵀ through rank 10, …" for the planned shape; empty for a dense model.
  std::vector<std::string> tt_contractions() const;

 private:
  // The batch's shape, ids and lengths, and a decode step's positions, in one upload: all that
  // generation's steps upload (they read only the logits, so no labels).
  void set_inputs(const Batch& b, std::span<const int32_t> positions = {});
  enum class Input { Ids, Lengths, Positions };
  Tensor input_view(Input part) const;
  StepContext context();
  // A rotary table [max_seq, rotary_dim / 2] (undefined without rotary positions).
  Tensor rope_table(ActivationArena::Slot slot) const;

  ModelConfig cfg_;
  Backend& backend_;
  DType act_dtype_;
  ParamStore params_;
  ActivationArena arena_;
  std::unique_ptr<Embeddings> embed_;
  std::vector<std::unique_ptr<Block>> blocks_;
  NormParams final_ln_;
  std::unique_ptr<Heads> heads_;
  std::unique_ptr<Pruning> pruning_;

  int64_t max_batch_ = 0, max_seq_ = 0;
  Recompute recompute_ = Recompute::None;
  // Current batch.
  int64_t batch_ = 0, seq_ = 0;
  HeadTargets targets_;
  Tensor loss_scale_;
  const Fp8Linears* fp8_ = nullptr;
  bool training_ = false;
  uint64_t step_seed_ = 0;
  // Arena slots.
  ActivationArena::Slot inputs_ = 0, seq_labels_ = 0, token_labels_ = 0;
  std::vector<int32_t> host_inputs_;  // the step's inputs on their way to inputs_
  ActivationArena::Slot final_out_ = 0, final_mean_ = 0, final_rstd_ = 0, dres_ = 0, dfinal_ = 0;
  ActivationArena::Slot loss_sums_ = 0, seq_pred_ = 0, token_pred_ = 0;
  ActivationArena::Slot chain_tokens_ = 0;  // decode_greedy's picks, [batch, kv capacity]
  ActivationArena::Slot rope_cos_ = 0, rope_sin_ = 0;
  int64_t rope_rows_ = 0;  // positions the rotary tables cover
  // Generation: the cache's capacity, the step's kind, each sequence's cached length.
  int64_t kv_capacity_ = 0;
  KvStep kv_step_ = KvStep::None;
  std::vector<int32_t> kv_lengths_;
  // Decode steps run per kind of step (decode_graph_key), and whether steps may be recorded
  // (decode's graphs).
  std::map<uint64_t, int64_t> decode_steps_;
  bool decode_graphs_ = true;
  const uint64_t graph_owner_;  // this model's part of the backend's kept-graph keys
  // A decode step's kept-graph key: its batch size, and whether it is a chained greedy step.
  uint64_t decode_graph_key(int64_t batch, bool chained) const {
    return (graph_owner_ << 21) | (uint64_t{chained} << 20) | static_cast<uint64_t>(batch);
  }
  // Caps the cached lengths and uploads a decode step's inputs.
  void start_decode(std::span<const int32_t> ids);
  void run_decode_step(bool chained);
  void advance_greedy();  // a chained step's argmax and next inputs
  void drop_decode_graphs();
  BlockScratch scratch_{};
  std::vector<int64_t> grad_stage_;  // per parameter
  std::function<void(int64_t)> backward_hook_;
};

}  // namespace hwt
