#include "cli/checkpoint_config.h"

#include "core/error.h"

namespace hwt {

RunConfig checkpoint_config(const Checkpoint& ckpt, const std::string& path,
                            const std::vector<std::string>& sets) {
  const RunConfig& saved = ckpt.info().config;
  RunConfig cfg = saved;
  for (const std::string& kv : sets) apply_override(cfg, kv);
  validate(cfg);
  RunConfig asked = saved;  // every model key but the pruning thresholds is the trained one's
  asked.model = cfg.model;
  asked.model.prune = saved.model.prune;
  if (to_json(asked) != to_json(saved))
    fail_input(
        "--set: {} holds a trained model whose keys cannot change; of model.* only "
        "model.prune.* can be set",
        path);
  return cfg;
}

}  // namespace hwt
