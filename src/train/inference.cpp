#include "train/inference.h"

#include "backend/backend_factory.h"
#include "train/evaluate.h"

namespace hwt {

LoadedModel load_model(const Checkpoint& ckpt, DeviceChoice device, int threads,
                       int64_t max_batch) {
  LoadedModel m;
  m.config = ckpt.info().config;
  m.vocab = dataset_from_vocab_json(ckpt.info().vocab, m.config.model.head);
  m.config.model = resolve_model_config(m.config.model, m.vocab);
  TrainConfig run;  // inference: fp32, default GPU options
  run.device = device;
  run.threads = threads;
  m.backend = make_backend(run);
  m.model = std::make_unique<Model>(m.config.model, *m.backend, DType::F32);
  m.model->plan(max_batch, m.config.data.max_len);
  ckpt.load_parameters(m.model->params());
  return m;
}

}  // namespace hwt
