// Checks of hwt against what transformers itself computed (tests/oracle/hf_transformers.py):
// the logits, the language-model loss and the greedy tokens of an imported folder
// (expected.json), the logits of an exported checkpoint as from_pretrained loads it, and the
// losses of a 50-step fine-tune from an imported folder (finetune.json).
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "interop/hf_import.h"
#include "interop_test_util.h"
#include "train/optimizer.h"

namespace hwt::test {

inline nlohmann::json read_expected(const std::filesystem::path& dir) {
  return nlohmann::json::parse(slurp(dir / "expected.json"));
}

// hwt's logits of expected["ids"] against transformers' float32 ones.
inline void expect_transformers_logits(const std::vector<float>& got, const nlohmann::json& e,
                                       const std::string& what) {
  const auto want = e["logits"].get<std::vector<double>>();
  ASSERT_EQ(got.size(), want.size()) << what;
  double worst = 0, scale = 1;
  for (size_t i = 0; i < want.size(); ++i) {
    worst = std::max(worst, std::abs(got[i] - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  // Both sides are float32 through two small layers and differ only in summation order and in
  // how each library evaluates exp, erf and tanh: about 1e-6 of the logits' scale. A mapping
  // error (a transposed matrix, a head's rows in the wrong order, a missing bias) moves them by
  // the scale itself. 1e-4 is the bound the issue states.
  EXPECT_LE(worst, 1e-4 * scale) << what << ": logits up to " << scale;
}

// The model of a checkpoint, planned for `batch` sequences of `seq` tokens (and a KV cache of
// `kv_capacity`), fp32 on the CPU.
struct LoadedCheckpoint {
  LoadedCheckpoint(const std::string& path, int64_t seq, int64_t kv_capacity = 0, int64_t batch = 1)
      : ckpt(path), model(ckpt.info().config.model, cpu, DType::F32) {
    model.plan(batch, seq, kv_capacity);
    ckpt.load_parameters(model.params(), ckpt.info().config.model);
  }
  Checkpoint ckpt;
  CpuBackend cpu{2};
  Model model;
};

// Mean cross-entropy of each token's logits against the next token (transformers' labels=ids).
inline double checkpoint_lm_loss(const std::string& path, const std::vector<int32_t>& ids) {
  LoadedCheckpoint c(path, std::ssize(ids));
  Batch b;
  b.batch = 1;
  b.seq = std::ssize(ids);
  b.ids = ids;
  b.lengths = {static_cast<int32_t>(ids.size())};
  b.token_labels.assign(ids.begin() + 1, ids.end());
  b.token_labels.push_back(-1);
  c.model.set_batch(b);
  c.model.forward(false, 0);
  const LossSums l = c.model.losses();
  return l.token / static_cast<double>(l.token_count);
}

// `count` greedy tokens after `prompt` through the KV cache (Model::prefill, Model::decode).
inline std::vector<int32_t> checkpoint_greedy(const std::string& path,
                                              const std::vector<int32_t>& prompt, int64_t count) {
  const int64_t n = std::ssize(prompt);
  LoadedCheckpoint c(path, n, n + count);
  const int64_t vocab = c.ckpt.info().config.model.vocab_size;
  Batch b;
  b.batch = 1;
  b.seq = n;
  b.ids = prompt;
  b.lengths = {static_cast<int32_t>(n)};
  c.model.prefill(b);
  std::vector<int32_t> out;
  Tensor row = c.model.token_logits().row_slice(n - 1, 1);
  std::vector<float> logits(static_cast<size_t>(row.numel()));
  while (std::ssize(out) < count) {
    c.cpu.download(logits.data(), row);
    out.push_back(static_cast<int32_t>(std::max_element(logits.begin(), logits.begin() + vocab) -
                                       logits.begin()));
    if (std::ssize(out) == count) break;
    c.model.decode(std::vector<int32_t>{out.back()});
    row = c.model.token_logits().row_slice(0, 1);
  }
  return out;
}

// A folder transformers saved: imported, it gives transformers' logits, loss and greedy tokens.
inline void expect_import_matches_transformers(const std::filesystem::path& dir) {
  const std::string name = dir.filename().string();
  SCOPED_TRACE(name);
  const nlohmann::json e = read_expected(dir);
  TempDir tmp("transformers_import_" + name);
  const std::string ckpt = tmp / "m.safetensors";
  import_hf_model(dir.string(), ckpt);
  const auto ids = e["ids"].get<std::vector<int32_t>>();
  expect_transformers_logits(checkpoint_logits(ckpt, ids), e, name);
  if (e.contains("loss")) {
    const double want = e["loss"].get<double>();
    // A mean of log-softmax terms over logits that agree to 1e-6 of their scale.
    EXPECT_NEAR(checkpoint_lm_loss(ckpt, ids), want, 1e-5 * std::max(1.0, want)) << name;
  }
  if (e.contains("greedy")) {
    const auto want = e["greedy"].get<std::vector<int32_t>>();
    // The script picked a prompt whose steps all have a top-two gap of min_margin, far above
    // the logits' agreement, so rounding cannot decide a token here.
    EXPECT_EQ(checkpoint_greedy(ckpt, ids, std::ssize(want)), want)
        << name << ": smallest top-two gap " << e["min_margin"];
  }
}

// `dir` holds an hwt checkpoint (hwt.safetensors) and its export, which transformers loaded
// (expected.json): nothing missing, unexpected or mismatched, and hwt's logits.
inline void expect_export_matches_transformers(const std::filesystem::path& dir) {
  const std::string name = dir.filename().string();
  SCOPED_TRACE(name);
  const nlohmann::json e = read_expected(dir);
  EXPECT_EQ(e["missing"], nlohmann::json::array()) << name;
  EXPECT_EQ(e["unexpected"], nlohmann::json::array()) << name;
  EXPECT_EQ(e["mismatched"], nlohmann::json::array()) << name;
  expect_transformers_logits(
      checkpoint_logits(dir / "hwt.safetensors", e["ids"].get<std::vector<int32_t>>()), e, name);
}

// `dir` holds a folder transformers saved and fine-tuned (finetune.json: its batches, AdamW's
// settings, the loss of each step): imported and fine-tuned alike by hwt, the same losses.
inline void expect_finetune_matches_transformers(const std::filesystem::path& dir) {
  SCOPED_TRACE(dir.filename().string());
  const nlohmann::json f = nlohmann::json::parse(slurp(dir / "finetune.json"));
  TempDir tmp("transformers_finetune");
  import_hf_model(dir.string(), tmp / "m.safetensors");
  const int64_t batch = f["batch"], seq = f["seq"];
  LoadedCheckpoint c(tmp / "m.safetensors", seq, 0, batch);
  OptimConfig o;
  o.name = OptimizerKind::AdamW;
  o.lr = f["lr"];
  o.adamw_beta1 = f["beta1"];
  o.adamw_beta2 = f["beta2"];
  o.eps = f["eps"];
  o.weight_decay = 0;
  Optimizer opt(o, c.model.params(), 0.0);  // no clipping, as the script
  const auto want = f["losses"].get<std::vector<double>>();
  auto batch_of = [&](const nlohmann::json& rows) {
    Batch b;
    b.batch = batch;
    b.seq = seq;
    for (const nlohmann::json& row : rows) {
      const auto ids = row.get<std::vector<int32_t>>();
      b.ids.insert(b.ids.end(), ids.begin(), ids.end());
      b.token_labels.insert(b.token_labels.end(), ids.begin() + 1, ids.end());
      b.token_labels.push_back(-1);  // labels = inputs, shifted inside transformers' loss
      b.lengths.push_back(static_cast<int32_t>(seq));
    }
    return b;
  };
  // The loss the imported weights give the last batch before any step: the fine-tune must move
  // it by far more than the tolerance, or the comparison could not tell steps from none.
  c.model.set_batch(batch_of(f["batches"].back()));
  c.model.forward(false, 0);
  const double untrained = c.model.losses().mean();
  std::vector<double> got;
  for (const nlohmann::json& rows : f["batches"]) {
    const Batch b = batch_of(rows);
    c.model.params().zero_grads();
    c.model.set_batch(b);
    c.model.forward(true, static_cast<uint64_t>(got.size() + 1));
    got.push_back(c.model.losses().mean());
    c.model.backward();
    opt.step(std::ssize(got), o.lr);
  }
  ASSERT_EQ(got.size(), want.size());
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i)
    worst = std::max(worst, std::abs(got[i] - want[i]) / want[i]);
  // Both fine-tunes run in float32 from the same weights on the same batches; the steps differ
  // only by rounding (summation order of GEMMs and reductions, ~1e-6 relative per step), which
  // 50 AdamW steps at lr 1e-3 carry into the losses at about 1e-5 of their size. A wrong
  // gradient, a tied head updated once instead of through both uses, or another AdamW
  // convention moves them by percents within a few steps.
  std::printf("[ %s ] 50 steps: worst loss relative difference %.2e; the last batch's loss %.4f "
              "untrained, %.4f after (transformers %.4f)\n",
              dir.filename().string().c_str(), worst, untrained, got.back(), want.back());
  EXPECT_LT(worst, 1e-4) << "losses " << got.front() << " -> " << got.back() << ", transformers "
                         << want.front() << " -> " << want.back();
  EXPECT_GT(std::abs(want.back() - untrained) / want.back(), 1e-2)
      << "50 steps moved the last batch's loss only from " << untrained << " to " << want.back();
}

// With $HWT_TRANSFORMERS_RECORD set: `dir` (expected.json included) copied there as `name`.
inline void record_transformers_fixture(const std::filesystem::path& dir, const std::string& name) {
  const std::string to = transformers_record_dir();
  if (to.empty()) return;
  std::filesystem::create_directories(to);
  std::filesystem::remove_all(std::filesystem::path(to) / name);
  std::filesystem::copy(dir, std::filesystem::path(to) / name,
                        std::filesystem::copy_options::recursive);
}

}  // namespace hwt::test
