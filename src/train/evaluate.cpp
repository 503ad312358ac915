#include "train/evaluate.h"

namespace hwt {

EvalResult evaluate(Model& model, const Dataset& data, const Split& split, int64_t batch_size,
                    int64_t max_len, int64_t max_batches, Communicator* comm) {
  BatchIterator it(data, split, batch_size, max_len, /*shuffle=*/false, 0);
  MetricAccumulator acc(data.task, data.token_labels);
  const int64_t rank = comm ? comm->rank() : 0, ranks = comm ? comm->size() : 1;
  Batch b;
  for (int64_t n = 0; (max_batches == 0 || n < max_batches) && it.next(b); ++n) {
    if (n % ranks != rank) continue;
    model.set_batch(b);
    model.forward(/*training=*/false, 0);
    acc.add(b, model.predictions(), model.losses());
  }
  if (comm) {
    std::vector<double> t = acc.totals();
    comm->sum_host(t);
    acc.set_totals(t);
  }
  return acc.result();
}

ModelConfig resolve_model_config(ModelConfig m, const Dataset& data) {
  const int64_t vocab = data.tokenizer->vocab_size();
  if (m.vocab_size == 0) m.vocab_size = vocab;
  if (m.vocab_size < vocab)
    fail_input("config model.vocab_size={} is smaller than the tokenizer's {} tokens", m.vocab_size,
               vocab);
  auto labels = [](int64_t& configured, int64_t have, const char* key) {
    if (configured == 0) configured = have;
    if (configured < have)
      fail_input("config {}={} is smaller than the {} classes in the data", key, configured, have);
  };
  if (has_sequence_labels(m.head)) labels(m.num_labels, data.labels.size(), "model.num_labels");
  if (has_token_labels(m.head))
    labels(m.num_token_labels, data.token_labels.size(), "model.num_token_labels");
  return m;
}

}  // namespace hwt
