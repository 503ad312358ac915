#include "train/inference.h"

#include <algorithm>
#include <cmath>

#include "train/evaluate.h"
#include "train/run_setup.h"

namespace hwt {
namespace {

std::vector<float> download(Backend& be, Tensor t) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  be.download(v.data(), t);
  return v;
}

// Softmax of one row, in place.
void softmax(float* x, int64_t n) {
  const float mx = *std::max_element(x, x + n);
  double z = 0;
  for (int64_t i = 0; i < n; ++i) z += std::exp(static_cast<double>(x[i] - mx));
  for (int64_t i = 0; i < n; ++i)
    x[i] = static_cast<float>(std::exp(static_cast<double>(x[i] - mx)) / z);
}

}  // namespace

LoadedModel open_model(const Checkpoint& ckpt, DeviceChoice device, int threads,
                       const std::optional<PruneConfig>& prune, Precision precision) {
  LoadedModel m;
  m.config = ckpt.info().config;
  if (prune) m.config.model.prune = *prune;
  m.vocab = dataset_from_vocab_json(ckpt.info().vocab, m.config.model.head);
  m.config.model = resolve_model_config(m.config.model, m.vocab);
  TrainConfig run;  // default GPU options
  run.device = device;
  run.threads = threads;
  m.backend = make_backend(run);
  const DType act = m.backend->device() == Device::Cpu ? DType::F32 : activation_dtype(precision);
  m.model = std::make_unique<Model>(m.config.model, *m.backend, act);
  ckpt.load_parameters(m.model->params(), m.config.model);
  return m;
}

LoadedModel load_model(const Checkpoint& ckpt, DeviceChoice device, int threads, int64_t max_batch,
                       const std::optional<PruneConfig>& prune) {
  LoadedModel m = open_model(ckpt, device, threads, prune);
  m.model->plan(max_batch, m.config.data.max_len);
  return m;
}

TextPrediction predict_text(LoadedModel& m, const std::string& text) {
  const Tokenizer& tok = *m.vocab.tokenizer;
  const int64_t max_len = m.config.data.max_len;
  Batch b;
  b.ids = tok.encode_example(text, max_len);
  b.batch = 1;
  b.seq = std::ssize(b.ids);
  b.lengths = {static_cast<int32_t>(b.seq)};
  b.seq_labels = {-1};
  b.token_labels.assign(b.ids.size(), -1);
  Model& model = *m.model;
  model.set_batch(b);
  model.forward(false, 0);
  TextPrediction out;
  if (has_sequence_labels(model.config().head)) {
    std::vector<float> p = download(model.backend(), model.seq_logits());
    softmax(p.data(), std::ssize(p));
    const int64_t best = std::max_element(p.begin(), p.end()) - p.begin();
    out.label = m.vocab.labels.name(static_cast<int32_t>(best));
    out.probability = p[static_cast<size_t>(best)];
  }
  if (has_token_labels(model.config().head)) {
    const Predictions pred = model.predictions();
    out.tags.emplace();
    for (int64_t t = 1; t < b.seq; ++t)
      out.tags->emplace_back(tok.decode({b.ids[static_cast<size_t>(t)]}),
                             m.vocab.token_labels.name(pred.tokens[static_cast<size_t>(t)]));
  }
  return out;
}

}  // namespace hwt
