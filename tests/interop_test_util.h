// Helpers of the Hugging Face interop tests: a checkpoint's logits on the CPU, tiny models of
// each exportable architecture.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "cli_util.h"
#include "model/model.h"
#include "train/checkpoint.h"

namespace hwt::test {

// Debian's torch, which tests/oracle/hf_folders.py needs ($HWT_TORCH_PYTHON to use another).
inline std::string torch_python() {
  const char* env = std::getenv("HWT_TORCH_PYTHON");
  return env ? env : "/usr/bin/python3";
}

// Whether torch_python() can import `module`.
inline bool python_has(const std::string& module) {
  return std::system((torch_python() + " -c 'import " + module + "' >/dev/null 2>&1").c_str()) == 0;
}

inline bool have_torch() {
  return python_has("torch");
}

// transformers (installed on the GPU machine, not in Debian): what tests/oracle/hf_transformers.py
// needs to make fresh parity fixtures.
inline bool have_transformers() {
  return python_has("transformers");
}

// Runs tests/oracle/hf_transformers.py with `args` ("import DIR" or "export DIR..."); true when
// every case was written.
inline bool run_transformers_oracle(const std::string& args) {
  const std::string cmd =
      torch_python() + " " + HWT_TEST_DIR + "/oracle/hf_transformers.py " + args + " >&2";
  return std::system(cmd.c_str()) == 0;
}

// $HWT_TRANSFORMERS_RECORD: a folder to copy freshly made parity fixtures into (to refresh
// tests/fixtures/hf_transformers on the GPU machine); empty when unset.
inline std::string transformers_record_dir() {
  const char* env = std::getenv("HWT_TRANSFORMERS_RECORD");
  return env ? env : "";
}

// The folders tests/oracle/hf_folders.py writes, once per test process.
inline const std::filesystem::path& hf_folders() {
  static TempDir dir("interop_hf_folders");
  static const bool written = [] {
    const std::string cmd =
        torch_python() + " " + HWT_TEST_DIR + "/oracle/hf_folders.py " + dir.path().string();
    return std::system(cmd.c_str()) == 0;
  }();
  EXPECT_TRUE(written);
  return dir.path();
}

// Logits of one sequence `ids` (batch 1) through the checkpoint's model, fp32 on the CPU:
// [ids.size(), classes] (an LM's padded vocabulary rows cut off).
inline std::vector<float> checkpoint_logits(const std::string& path,
                                            const std::vector<int32_t>& ids) {
  const Checkpoint ckpt(path);
  const ModelConfig& m = ckpt.info().config.model;
  CpuBackend cpu(2);
  Model model(m, cpu, DType::F32);
  const auto seq = static_cast<int64_t>(ids.size());
  model.plan(1, seq);
  ckpt.load_parameters(model.params(), m);
  Batch b;
  b.batch = 1;
  b.seq = seq;
  b.ids = ids;
  b.lengths = {static_cast<int32_t>(seq)};
  if (has_sequence_labels(m.head)) b.seq_labels = {0};
  if (has_token_outputs(m.head)) b.token_labels.assign(ids.size(), -1);
  model.set_batch(b);
  model.forward(false, 0);
  const Tensor t = has_token_outputs(m.head) ? model.token_logits() : model.seq_logits();
  std::vector<float> all(static_cast<size_t>(t.numel()));
  cpu.download(all.data(), t);
  const int64_t width = t.cols(), classes = m.head == Task::Lm          ? m.vocab_size
                                            : has_token_outputs(m.head) ? m.num_token_labels
                                                                        : m.num_labels;
  std::vector<float> out;
  for (int64_t r = 0; r < t.rows(); ++r)
    out.insert(out.end(), all.begin() + r * width, all.begin() + r * width + classes);
  return out;
}

// A checkpoint of `m` with random weights (train.seed 7), as `hwt train` writes one; `edit`, when
// given, may change each parameter's values before they are saved.
inline void write_random_checkpoint(
    const std::string& path, const ModelConfig& m,
    const std::vector<std::string>& token_labels = {},
    const std::function<void(const ParamInfo&, std::vector<float>&)>& edit = nullptr) {
  CpuBackend cpu(2);
  Model model(m, cpu, DType::F32);
  model.init_parameters(7);
  // Random biases and norms too (initialisation makes them 0 and 1), so a mapping that swaps
  // or drops one shows.
  std::vector<float> host(static_cast<size_t>(model.params().count()));
  cpu.download(host.data(), model.params().params_flat());
  for (size_t i = 0; i < host.size(); ++i)
    if (host[i] == 0.0f || host[i] == 1.0f) host[i] += 0.01f * static_cast<float>(i % 97) - 0.4f;
  std::vector<float> clean(host.size(), 0.0f), data;  // the storage padding stays zero
  for (const ParamInfo& p : model.params().infos()) {
    data.resize(static_cast<size_t>(p.data_shape().numel()));
    gather_data(p, host.data(), data.data());
    if (edit) edit(p, data);
    scatter_data(p, data.data(), clean.data());
  }
  cpu.upload(model.params().params_flat(), clean.data());
  RunConfig rc;
  rc.model = m;
  rc.data.max_len = std::min<int64_t>(rc.data.max_len, m.max_seq);
  const nlohmann::json vocab = {{"task", task_name(m.head)},
                                {"tokenizer", nullptr},
                                {"labels", nlohmann::json::array()},
                                {"token_labels", token_labels}};
  save_checkpoint(path, rc, vocab, TrainState{}, model.params(), nullptr);
}

}  // namespace hwt::test
