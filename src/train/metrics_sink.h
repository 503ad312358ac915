// The one place a training run's metrics go: every line to metrics.jsonl and, with
// train.tensorboard, the same numbers as TensorBoard scalars ("train/loss", "valid/accuracy", …),
// the resolved config as text, and histograms of the weights and gradients at each evaluation.
// `hwt report` and `hwt compare` read what this writes.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "model/param_store.h"
#include "report/tensorboard_writer.h"
#include "train/run_files.h"

namespace hwt {

class MetricsSink {
 public:
  // metrics.jsonl in `out_dir` (appended to when `append`: a resumed run), and a TensorBoard
  // event file beside it when `tensorboard`.
  MetricsSink(const std::string& out_dir, bool append, bool tensorboard);

  // A training line ({"step", "loss", "lr", …}) or an evaluation line (with "split"): numbers
  // become scalars tagged "<split or train>/<key>"; "step" and "epoch" are not scalars.
  void write(const nlohmann::json& line);
  // The run's config (TOML) as markdown text, at step 0.
  void config_text(const std::string& toml);
  // Histograms "weights/<name>" and "gradients/<name>" of every parameter (padding left out).
  void histograms(int64_t step, const ParamStore& params);

  // The event file's path; empty without TensorBoard.
  std::string tensorboard_path() const { return tb_ ? tb_->path() : std::string(); }

 private:
  MetricsLog log_;
  std::unique_ptr<TensorBoardWriter> tb_;
};

}  // namespace hwt
