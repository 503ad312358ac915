#include "workload/trace_step.h"

#include "backend/trace/trace_backend.h"
#include "model/model.h"
#include "train/optimizer.h"

namespace hwt {

ModelConfig with_analysis_defaults(ModelConfig m) {
  if (m.vocab_size == 0) m.vocab_size = 30522;
  if (m.num_labels == 0) m.num_labels = 2;
  if (m.num_token_labels == 0) m.num_token_labels = 8;
  return m;
}

Workload trace_step(const TraceRequest& r) {
  if (r.seq > r.model.max_seq)
    fail_input("sequence length {} exceeds model.max_seq={}", r.seq, r.model.max_seq);
  if (r.batch < 1 || r.seq < 1) fail_input("batch and sequence length must be positive");
  TraceBackend be;
  Model model(r.model, be, r.dtype);
  model.plan(r.batch, r.seq);
  const bool train = r.mode == TraceMode::Train;
  std::unique_ptr<Optimizer> opt;
  if (train) opt = std::make_unique<Optimizer>(r.optim, model.params(), r.max_grad_norm);

  Batch b;
  b.batch = r.batch;
  b.seq = r.seq;
  b.ids.assign(static_cast<size_t>(r.batch * r.seq), 0);
  b.lengths.assign(static_cast<size_t>(r.batch), static_cast<int32_t>(r.seq));
  b.seq_labels.assign(static_cast<size_t>(r.batch), 0);
  b.token_labels.assign(static_cast<size_t>(r.batch * r.seq), 0);
  model.set_batch(b);
  be.clear();  // keep only the step's ops, not the setup

  model.forward(train, 0);
  if (train) {
    model.backward();
    opt->step(1, r.optim.lr);
  }
  Workload w = be.take_workload();
  w.batch = r.batch;
  w.seq = r.seq;
  w.parameters = model.params().count();
  return w;
}

}  // namespace hwt
