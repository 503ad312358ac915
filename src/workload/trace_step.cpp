#include "workload/trace_step.h"

#include "backend/trace/trace_backend.h"
#include "data/gpt2_tokenizer.h"
#include "train/run_setup.h"

namespace hwt {

StepSpec step_spec(RunConfig config, int64_t batch, int64_t seq, TraceMode mode) {
  ModelConfig& m = config.model;
  // A word tokenizer keeps at most data.max_vocab words (a tensor-train embedding's rows are
  // sized to it); a character tokenizer's size is the data's alone; GPT-2's is fixed; WordPiece's
  // is its vocab.txt's and hf's its tokenizer.json's, which analyses do not read: BERT's 30522
  // stands in.
  if (m.vocab_size == 0)
    m.vocab_size = config.data.tokenizer == TokenizerKind::Word   ? config.data.max_vocab
                   : config.data.tokenizer == TokenizerKind::Gpt2 ? Gpt2Tokenizer::kVocabSize
                                                                  : 30522;
  if (m.num_labels == 0) m.num_labels = 2;
  if (m.num_token_labels == 0) m.num_token_labels = 8;
  StepSpec s;
  s.batch = batch > 0 ? batch : config.train.batch_size;
  s.seq = seq > 0 ? seq : config.data.max_len;
  s.mode = mode;
  s.config = std::move(config);
  return s;
}

namespace {

// A batch of the step's shape: token 0 everywhere, every label class 0.
Batch placeholder_batch(int64_t batch, int64_t seq) {
  Batch b;
  b.batch = batch;
  b.seq = seq;
  b.ids.assign(static_cast<size_t>(batch * seq), 0);
  b.lengths.assign(static_cast<size_t>(batch), static_cast<int32_t>(seq));
  b.seq_labels.assign(static_cast<size_t>(batch), 0);
  b.token_labels.assign(static_cast<size_t>(batch * seq), 0);
  return b;
}

}  // namespace

void check_step_shape(const StepSpec& s) {
  if (s.seq > s.config.model.max_seq)
    fail_input("sequence length {} exceeds model.max_seq={}", s.seq, s.config.model.max_seq);
  if (s.batch < 1 || s.seq < 1) fail_input("batch and sequence length must be positive");
}

Workload trace_step(const StepSpec& s) {
  check_step_shape(s);
  TraceBackend be;
  // Training builds what `hwt train` builds; inference the model alone (no optimizer state).
  std::unique_ptr<TrainingModel> training;
  std::unique_ptr<Model> inference;
  if (s.mode == TraceMode::Train)
    training = std::make_unique<TrainingModel>(s.config, be, s.batch, s.seq, 1, s.choose_fp8);
  else
    inference =
        std::make_unique<Model>(s.config.model, be, activation_dtype(s.config.train.precision));
  Model& model = training ? training->model() : *inference;
  if (inference) model.plan(s.batch, s.seq);
  model.set_batch(placeholder_batch(s.batch, s.seq));
  be.clear();  // keep only the step's ops, not the setup

  model.forward(training != nullptr, 0);
  if (training) {
    model.backward();
    training->update(1, s.config.optim.lr);
  }
  Workload w = be.take_workload();
  w.batch = s.batch;
  w.seq = s.seq;
  w.parameters = model.params().parameters();
  for (const ParamInfo& p : model.params().infos()) w.params.push_back({p.name, p.shape.numel()});
  return w;
}

}  // namespace hwt
