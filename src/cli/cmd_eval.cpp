// `hwt eval`: evaluate a checkpoint on a split of its dataset.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/checkpoint_config.h"
#include "cli/commands.h"
#include "data/token_cache.h"
#include "report/progress_meter.h"
#include "train/evaluate.h"
#include "train/inference.h"
#include "train/sparsity_log.h"

namespace hwt {

void add_eval_command(CLI::App& app) {
  CLI::App* cmd =
      app.add_subcommand("eval", "Evaluate a checkpoint on its dataset's validation or test split");
  struct Opts {
    std::string checkpoint, split = "test";
    std::vector<std::string> sets;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("checkpoint", o->checkpoint, "checkpoint.safetensors or best.safetensors")
      ->required();
  cmd->add_option("--split", o->split, "valid or test")->check(CLI::IsMember({"valid", "test"}));
  cmd->add_option("--set", o->sets,
                  "Override a key of the saved config, e.g. data.path or model.prune.tau_infer "
                  "(repeatable; the model's shape is the checkpoint's)");
  cmd->add_flag("--json", o->json, "Print the metrics as JSON");
  cmd->callback([o] {
    const Checkpoint ckpt(o->checkpoint);
    const RunConfig cfg = checkpoint_config(ckpt, o->checkpoint, o->sets);
    ProgressMeter encoding("tokenising", "MB", true);
    const TokenizeOptions tokenize = tokenize_with_meter(cfg.train.threads, encoding, true);
    const Dataset data = load_dataset(cfg.data, cfg.model.head, tokenize);
    if (data.vocab_json() != ckpt.info().vocab)
      fail_input("the data's vocabulary or labels differ from those {} was trained with",
                 o->checkpoint);
    LoadedModel m = load_model(ckpt, cfg.train.device, static_cast<int>(cfg.train.threads),
                               cfg.train.batch_size, cfg.model.prune);
    const Split& split = o->split == "test" ? data.test : data.valid;
    if (split.size() == 0) fail_input("the {} split of {} is empty", o->split, data.source);
    const EvalResult r = evaluate(*m.model, data, split, cfg.train.batch_size, cfg.data.max_len);
    nlohmann::json j = r.to_json();
    std::string pruned;
    if (const Pruning* p = m.model->pruning()) {  // DynaTran's realised sparsity
      j["sparsity"] = sparsity_fractions(p->counts());
      pruned =
          fmt::format(", DynaTran sparsity {:.1f}%", 100 * j["sparsity"]["overall"].get<double>());
    }
    if (o->json)
      fmt::print("{}\n", j.dump(2));
    else
      fmt::print("{} ({} examples): {}{}\n", o->split, r.examples, r.summary(), pruned);
  });
}

}  // namespace hwt
