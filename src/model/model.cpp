#include "model/model.h"

#include <algorithm>
#include <atomic>

#include "core/error.h"
#include "model/rope.h"

namespace hwt {

double LossSums::mean() const {
  double m = 0;
  if (seq_count > 0) m += seq / static_cast<double>(seq_count);
  if (token_count > 0) m += token / static_cast<double>(token_count);
  return m;
}

namespace {
// Distinct keys for the kept decode graphs of every model of the process.
uint64_t next_graph_owner() {
  static std::atomic<uint64_t> owners{1};
  return owners++;
}
}  // namespace

Model::Model(const ModelConfig& cfg, Backend& backend, DType act_dtype, int64_t storage_multiple)
    : cfg_(cfg), backend_(backend), act_dtype_(act_dtype), graph_owner_(next_graph_owner()) {
  validate(cfg_);
  HWT_CHECK(cfg_.vocab_size > 0, "model.vocab_size must be known before building the model");
  HWT_CHECK(!has_sequence_labels(cfg_.head) || cfg_.num_labels > 0, "model.num_labels unknown");
  HWT_CHECK(!has_token_labels(cfg_.head) || cfg_.num_token_labels > 0,
            "model.num_token_labels unknown");
  // Each parameter's backward stage (set_backward_hook) follows from who added it.
  auto added = [&](int64_t stage) { grad_stage_.resize(params_.infos().size(), stage); };
  embed_ = std::make_unique<Embeddings>(cfg_, params_);
  added(cfg_.layers + 1);
  for (int i = 0; i < cfg_.layers; ++i) {
    blocks_.push_back(std::make_unique<Block>(cfg_, params_, i));
    added(cfg_.layers - i);
  }
  if (cfg_.norm == NormPlacement::Pre)
    final_ln_ = NormParams(params_, "final_ln", cfg_.padded_hidden(),
                           cfg_.padded_hidden() - cfg_.hidden, cfg_.norm_kind);
  heads_ = std::make_unique<Heads>(cfg_, params_, *embed_);
  added(0);
  params_.allocate(backend_, act_dtype_, storage_multiple);
  if (cfg_.prune.any()) pruning_ = std::make_unique<Pruning>(cfg_.prune, backend_, params_);
  decode_graphs_ = embed_->decode_positions_on_device();
}

Model::~Model() {
  drop_decode_graphs();
}

void Model::drop_decode_graphs() {
  for (const auto& [key, steps] : decode_steps_)
    if (steps > 1) backend_.drop_kept(key);
  decode_steps_.clear();
}

void Model::plan(int64_t max_batch, int64_t max_seq, int64_t kv_capacity, Recompute recompute) {
  HWT_CHECK(max_seq <= cfg_.max_seq && kv_capacity <= cfg_.max_seq,
            "planned sequence {} (KV cache {}) exceeds model.max_seq {}", max_seq, kv_capacity,
            cfg_.max_seq);
  HWT_CHECK(kv_capacity == 0 || (cfg_.head == Task::Lm && cfg_.causal),
            "a KV cache needs a causal language model");
  drop_decode_graphs();  // they point into the arena this plan replaces
  max_batch_ = max_batch;
  max_seq_ = max_seq;
  recompute_ = recompute;
  const int64_t rows = max_batch * max_seq, h = cfg_.padded_hidden();
  const DType dt = act_dtype_;
  // Owners as `hwt memory` groups the layers; "step": the batch and what the blocks share.
  arena_.set_owner("step");
  // A step's inputs side by side (input_view), so that they go to the device in one copy.
  inputs_ = arena_.reserve(DType::I32, rows + (kv_capacity > 0 ? 2 : 1) * max_batch);
  seq_labels_ = arena_.reserve(DType::I32, max_batch);
  token_labels_ = arena_.reserve(DType::I32, rows);
  arena_.set_owner("embedding");
  embed_->plan(arena_, dt, rows);
  for (auto& b : blocks_) b->plan(arena_, dt, rows, blocks_.front().get(), recompute);
  arena_.set_owner("head");
  if (cfg_.norm == NormPlacement::Pre) {
    final_out_ = arena_.reserve(dt, rows * h);
    final_mean_ = arena_.reserve(DType::F32, rows);
    final_rstd_ = arena_.reserve(DType::F32, rows);
    dfinal_ = arena_.reserve(dt, rows * h, ArenaUse::Intermediate);
  }
  heads_->plan(arena_, dt, max_batch, rows);
  arena_.set_owner("step");
  const auto scratch = [&](int64_t n) { return arena_.reserve(dt, n, ArenaUse::Intermediate); };
  dres_ = scratch(rows * h);
  const int64_t ctx = cfg_.padded_context(), ffn = cfg_.padded_ffn();
  scratch_ = {scratch(rows * h), scratch(rows * ctx), scratch(rows * ffn),
              scratch(rows * cfg_.padded_qkv()), cfg_.gated() ? scratch(rows * 2 * ffn) : 0};
  loss_sums_ = arena_.reserve(DType::F32, 2);
  seq_pred_ = arena_.reserve(DType::I32, max_batch);
  token_pred_ = arena_.reserve(DType::I32, rows);
  kv_capacity_ = kv_capacity;
  if (kv_capacity > 0) {
    for (auto& b : blocks_) b->plan_kv_cache(arena_, dt, max_batch, kv_capacity);
    arena_.set_owner("step");
    chain_tokens_ = arena_.reserve(DType::I32, max_batch * kv_capacity);
  }
  const bool rope = cfg_.position == Position::Rope;
  rope_rows_ = std::max(max_seq, kv_capacity);
  const int64_t rope_entries = rope_rows_ * (cfg_.rotary_dim() / 2);
  if (rope) {
    rope_cos_ = arena_.reserve(DType::F32, rope_entries);
    rope_sin_ = arena_.reserve(DType::F32, rope_entries);
  }
  arena_.allocate(backend_);
  if (rope) {
    const RopeTables t = rope_tables(cfg_, rope_rows_);
    backend_.upload(rope_table(rope_cos_), t.cos.data());
    backend_.upload(rope_table(rope_sin_), t.sin.data());
  }
}

Tensor Model::rope_table(ActivationArena::Slot slot) const {
  if (cfg_.position != Position::Rope) return {};
  return arena_.view(slot, Shape{rope_rows_, cfg_.rotary_dim() / 2});
}

std::vector<std::string> Model::tt_contractions() const {
  std::vector<std::string> out;
  for (const auto& [name, tt] : blocks_.front()->tt_layers())
    out.push_back(name + ": " + describe(tt->chain(), tt->contraction()));
  return out;
}

std::vector<ParamStore::Handle> Model::linear_weights() const {
  std::vector<ParamStore::Handle> w;
  for (size_t i = 0; i < params_.infos().size(); ++i)
    if (params_.infos()[i].linear_weight) w.push_back(i);
  if (cfg_.head == Task::Lm && cfg_.tie_embeddings) w.push_back(embed_->token_table());
  return w;
}

StepContext Model::context() {
  const bool decoding = kv_step_ == KvStep::Decode;
  return StepContext{backend_,
                     params_,
                     arena_,
                     act_dtype_,
                     batch_,
                     seq_,
                     training_,
                     false,
                     step_seed_,
                     input_view(Input::Lengths),
                     pruning_.get(),
                     rope_table(rope_cos_),
                     rope_table(rope_sin_),
                     kv_step_,
                     decoding ? std::span<const int32_t>(kv_lengths_) : std::span<const int32_t>{},
                     decoding ? input_view(Input::Positions) : Tensor{},
                     training_ ? fp8_ : nullptr};
}

void Model::set_batch(const Batch& b, float grad_multiplier) {
  set_inputs(b);
  const int64_t rows = b.batch * b.seq;
  targets_ = HeadTargets{};
  targets_.grad_multiplier = grad_multiplier;
  targets_.loss_scale = loss_scale_;
  if (has_sequence_labels(cfg_.head)) {
    HWT_CHECK(static_cast<int64_t>(b.seq_labels.size()) == b.batch, "batch has no sequence labels");
    targets_.seq_labels = arena_.view(seq_labels_, Shape{b.batch});
    backend_.upload(targets_.seq_labels, b.seq_labels.data());
    targets_.seq_valid = Batch::count_valid(b.seq_labels);
  }
  if (has_token_outputs(cfg_.head)) {
    HWT_CHECK(static_cast<int64_t>(b.token_labels.size()) == rows, "batch has no token labels");
    targets_.token_labels = arena_.view(token_labels_, Shape{rows});
    backend_.upload(targets_.token_labels, b.token_labels.data());
    targets_.token_valid = Batch::count_valid(b.token_labels);
  }
}

// The step's ids (a row each), key lengths and decode positions (a sequence each), one after
// the other.
Tensor Model::input_view(Input part) const {
  const int64_t rows = batch_ * seq_, per_sequence = kv_capacity_ > 0 ? 2 : 1;
  const Tensor all = arena_.view(inputs_, Shape{rows + per_sequence * batch_});
  switch (part) {
    case Input::Ids:
      return all.flat_slice(0, rows);
    case Input::Lengths:
      return all.flat_slice(rows, batch_);
    case Input::Positions:
      return all.flat_slice(rows + batch_, batch_);
  }
  return {};
}

void Model::set_inputs(const Batch& b, std::span<const int32_t> positions) {
  HWT_CHECK(max_batch_ > 0, "Model::plan must run before set_batch");
  HWT_CHECK(b.batch >= 1 && b.batch <= max_batch_ && b.seq >= 1 && b.seq <= max_seq_,
            "batch {}x{} exceeds the planned {}x{}", b.batch, b.seq, max_batch_, max_seq_);
  batch_ = b.batch;
  seq_ = b.seq;
  const int64_t rows = b.batch * b.seq;
  HWT_CHECK(static_cast<int64_t>(b.ids.size()) == rows &&
                static_cast<int64_t>(b.lengths.size()) == b.batch,
            "batch arrays do not match {}x{}", b.batch, b.seq);
  host_inputs_.assign(b.ids.begin(), b.ids.end());
  host_inputs_.insert(host_inputs_.end(), b.lengths.begin(), b.lengths.end());
  host_inputs_.insert(host_inputs_.end(), positions.begin(), positions.end());
  backend_.upload(arena_.view(inputs_, Shape{std::ssize(host_inputs_)}), host_inputs_.data());
}

void Model::forward(bool training, uint64_t step_seed) {
  training_ = training;
  step_seed_ = step_seed;
  const StepContext c = context();
  Tensor x = embed_->forward(c, input_view(Input::Ids));
  for (const auto& b : blocks_) x = b->forward(c, x);
  const float eps = static_cast<float>(cfg_.ln_eps);
  if (cfg_.norm == NormPlacement::Pre && heads_->decodes_fused(c)) {
    heads_->decode_forward(c, final_ln_.fused_product(c, x, {}, eps, cfg_.hidden));
    return;
  }
  if (cfg_.norm == NormPlacement::Pre) {
    backend_.set_scope("final_ln", Phase::Forward);
    const Tensor y = c.act(final_out_, cfg_.padded_hidden());
    backend_.layernorm_forward(
        {x, final_ln_.gamma(c), final_ln_.beta(c), y, final_ln_.mean(c, final_mean_),
         arena_.view(final_rstd_, Shape{c.rows()}), eps, cfg_.hidden, cfg_.norm_kind});
    x = y;
  }
  heads_->forward(c, x, targets_);
}

void Model::backward() {
  HWT_CHECK(training_, "backward needs a training forward first");
  const StepContext c = context();
  const bool pre = cfg_.norm == NormPlacement::Pre;
  // Block l's input is block l-1's output (its saved activation); block 0's is the embedding.
  std::vector<Tensor> inputs;
  Tensor x = embed_->output(c);
  for (const auto& b : blocks_) {
    inputs.push_back(x);
    x = b->output(c);
  }
  const int64_t h = cfg_.padded_hidden();
  const Tensor dres = c.act(dres_, h);
  if (pre) {
    const Tensor dfinal = c.act(dfinal_, h);
    heads_->backward(c, c.act(final_out_, h), dfinal);
    backend_.set_scope("final_ln", Phase::Backward);
    backend_.layernorm_backward(
        final_ln_.backward_args(c, final_mean_, final_rstd_, x, dfinal, dres, cfg_.hidden));
  } else {
    heads_->backward(c, x, dres);
  }
  auto finished = [&](int64_t stage) {
    if (backward_hook_) backward_hook_(stage);
  };
  finished(0);
  StepContext again = c;
  again.recompute = true;
  for (size_t i = blocks_.size(); i-- > 0;) {
    // Under recomputation the last block's activations are still the ones in the shared slots.
    if (i + 1 < blocks_.size()) blocks_[i]->recompute(again, inputs[i], recompute_);
    blocks_[i]->backward(c, inputs[i], dres, scratch_);
    finished(std::ssize(blocks_) - static_cast<int64_t>(i));
  }
  embed_->backward(c, input_view(Input::Ids), dres, c.act(scratch_.a, h));
  finished(cfg_.layers + 1);
}

void Model::prefill(Batch b) {
  HWT_CHECK(kv_capacity_ > 0, "Model::prefill needs a plan with a KV cache");
  HWT_CHECK(b.seq <= kv_capacity_, "prompt of {} exceeds the KV cache's {}", b.seq, kv_capacity_);
  set_inputs(b);
  targets_ = HeadTargets{};
  kv_lengths_ = b.lengths;
  kv_step_ = KvStep::Prefill;
  forward(false, 0);
  kv_step_ = KvStep::None;
}

void Model::start_decode(std::span<const int32_t> ids) {
  HWT_CHECK(ids.size() == kv_lengths_.size(), "decode of {} tokens for {} cached sequences",
            ids.size(), kv_lengths_.size());
  Batch b;
  b.batch = std::ssize(ids);
  b.seq = 1;
  b.ids.assign(ids.begin(), ids.end());
  // A full cache keeps its sequence at its last position (generation has ended it).
  for (int32_t& n : kv_lengths_) n = std::min<int32_t>(n, static_cast<int32_t>(kv_capacity_ - 1));
  for (const int32_t n : kv_lengths_) b.lengths.push_back(n + 1);  // the cache and itself
  set_inputs(b, kv_lengths_);  // each sequence's position: its cached length
  targets_ = HeadTargets{};
}

void Model::decode(std::span<const int32_t> ids) {
  start_decode(ids);
  kv_step_ = KvStep::Decode;
  run_decode_step(false);
  kv_step_ = KvStep::None;
  for (int32_t& n : kv_lengths_) ++n;
}

std::vector<int32_t> Model::decode_greedy(std::span<const int32_t> ids, int64_t steps) {
  HWT_CHECK(steps >= 1, "decode_greedy of {} steps", steps);
  start_decode(ids);
  const auto last = static_cast<int32_t>(kv_capacity_ - 1);
  const std::vector<int32_t> first = kv_lengths_;  // the first step's positions
  kv_step_ = KvStep::Decode;
  for (int64_t s = 0; s < steps; ++s) {
    // The host's copy follows the device's positions (decode_advance): a step that reads them
    // from the host (a tensor-train table's learned positions) needs it.
    if (s > 0)
      for (int32_t& n : kv_lengths_) n = std::min(n + 1, last);
    run_decode_step(true);
  }
  kv_step_ = KvStep::None;
  for (int32_t& n : kv_lengths_) ++n;  // as decode() leaves them
  const int64_t cap = kv_capacity_;
  std::vector<int32_t> tokens(static_cast<size_t>(batch_ * cap));
  backend_.download(tokens.data(), arena_.view(chain_tokens_, Shape{batch_, cap}));
  // Each step's pick sits at the position the step ran at.
  std::vector<int32_t> picks;
  picks.reserve(static_cast<size_t>(steps * batch_));
  for (int64_t s = 0; s < steps; ++s)
    for (size_t b = 0; b < first.size(); ++b) {
      const int64_t at = std::min<int64_t>(first[b] + s, last);
      picks.push_back(tokens[b * static_cast<size_t>(cap) + static_cast<size_t>(at)]);
    }
  return picks;
}

// Every input of a decode step (ids, positions, lengths) is in device memory, so a recorded step
// is right for any later token of the same batch size. The first step runs as it is: it may grow
// scratch or tune GEMMs, which a record may not.
void Model::run_decode_step(bool chained) {
  const auto step = [&] {
    forward(false, 0);
    if (chained) advance_greedy();
  };
  const uint64_t key = decode_graph_key(batch_, chained);
  int64_t& steps = decode_steps_[key];
  if (!decode_graphs_ || steps++ == 0) return step();
  if (backend_.replay_kept(key)) return;
  try {
    backend_.begin_capture();
    step();
    backend_.end_capture_kept(key);
  } catch (const Error&) {
    // Something in the step cannot be recorded (nothing of it ran): every step runs as it is.
    backend_.abort_capture();
    decode_graphs_ = false;
    step();
  }
}

void Model::advance_greedy() {
  const StepContext c = context();
  backend_.set_scope("generate", Phase::Other);
  const Tensor picks = arena_.view(token_pred_, Shape{batch_});
  backend_.argmax_rows({heads_->token_logits(c), picks, heads_->token_classes()});
  backend_.decode_advance({picks, input_view(Input::Ids), input_view(Input::Positions),
                           input_view(Input::Lengths),
                           arena_.view(chain_tokens_, Shape{batch_, kv_capacity_})});
}

LossSums Model::losses() {
  const StepContext c = context();
  backend_.set_scope("loss", Phase::Other);
  LossSums s;
  const Tensor sums = arena_.view(loss_sums_, Shape{2});
  if (has_sequence_labels(cfg_.head)) backend_.sum({heads_->seq_losses(c), sums.flat_slice(0, 1)});
  if (has_token_outputs(cfg_.head)) backend_.sum({heads_->token_losses(c), sums.flat_slice(1, 1)});
  float host[2] = {0, 0};
  backend_.download(host, sums);
  if (has_sequence_labels(cfg_.head)) s.seq = host[0], s.seq_count = targets_.seq_valid;
  if (has_token_outputs(cfg_.head)) s.token = host[1], s.token_count = targets_.token_valid;
  return s;
}

Predictions Model::predictions() {
  const StepContext c = context();
  Predictions p;
  if (has_sequence_labels(cfg_.head)) {
    const Tensor out = arena_.view(seq_pred_, Shape{batch_});
    backend_.argmax_rows({heads_->seq_logits(c), out});
    p.seq.resize(static_cast<size_t>(batch_));
    backend_.download(p.seq.data(), out);
  }
  if (has_token_outputs(cfg_.head)) {
    const Tensor out = arena_.view(token_pred_, Shape{c.rows()});
    backend_.argmax_rows({heads_->token_logits(c), out, heads_->token_classes()});
    p.tokens.resize(static_cast<size_t>(c.rows()));
    backend_.download(p.tokens.data(), out);
  }
  return p;
}

Tensor Model::seq_logits() {
  return has_sequence_labels(cfg_.head) ? heads_->seq_logits(context()) : Tensor{};
}
Tensor Model::token_logits() {
  return has_token_outputs(cfg_.head) ? heads_->token_logits(context()) : Tensor{};
}

}  // namespace hwt
