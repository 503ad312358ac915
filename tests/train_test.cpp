// End-to-end training through the library: learning happens, resume is bit-exact, and the
// run folder holds what the docs promise.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "core/safetensors.h"
#include "cuda_test_util.h"
#include "train/trainer.h"

namespace hwt {
namespace {

using test::TempDir;

std::vector<uint8_t> tensor_bytes(const std::string& path, bool params_only) {
  const SafetensorsFile f = SafetensorsFile::open(path);
  std::vector<uint8_t> out;
  for (const std::string& n : f.names()) {
    if (params_only && n.rfind("optim.", 0) == 0) continue;
    const auto v = f.get(n);
    out.insert(out.end(), static_cast<const uint8_t*>(v.data),
               static_cast<const uint8_t*>(v.data) + v.bytes);
  }
  return out;
}

TEST(Train, LearnsATinyTextTaskAndWritesRunFiles) {
  TempDir dir("train_learns");
  dir.write("train.tsv", test::tiny_sentiment_tsv(400, 7));
  RunConfig c = test::tiny_tsv_classifier(dir);
  c.train.epochs = 4;
  c.optim.warmup_steps = 5;
  const nlohmann::json run = train({c, dir / "out", "", false});
  EXPECT_GT(run["results"]["test"]["accuracy"].get<double>(), 0.9);
  for (const char* f :
       {"run.json", "metrics.jsonl", "loss.svg", "checkpoint.safetensors", "best.safetensors"})
    EXPECT_TRUE(std::filesystem::exists(dir.path() / "out" / f)) << f;
  EXPECT_EQ(nlohmann::json::parse(test::slurp(dir.path() / "out" / "run.json")), run);
  for (const char* k : {"data", "forward", "backward", "optimizer"})
    EXPECT_GT(run["timing"]["step_phase_ms"][k].get<double>(), 0) << k;
  EXPECT_GT(run["timing"]["train_s"].get<double>(), 0);
  // Every metrics line is a JSON object; training lines carry the documented fields.
  std::istringstream lines(test::slurp(dir.path() / "out" / "metrics.jsonl"));
  int train_lines = 0;
  for (std::string l; std::getline(lines, l);) {
    const auto j = nlohmann::json::parse(l);
    if (j.contains("split")) continue;
    ++train_lines;
    for (const char* k : {"step", "loss", "lr", "tokens_per_s"}) EXPECT_TRUE(j.contains(k)) << l;
  }
  EXPECT_GT(train_lines, 2);
}

TEST(Train, ResumeIsBitExact) {
  TempDir dir("train_resume");
  dir.write("train.tsv", test::tiny_sentiment_tsv(200, 3));
  RunConfig c = test::tiny_tsv_classifier(dir);
  c.model.dropout = c.model.attn_dropout = 0.1;  // dropout masks must repeat after resume
  c.train.max_steps = 20;
  c.train.grad_accum = 2;
  c.train.eval_every = 5;
  c.train.checkpoint_every = 10;
  c.optim.name = OptimizerKind::Adan;
  c.optim.warmup_steps = 4;
  train({c, dir / "straight", "", false});
  train({c, dir / "resumed", dir / "straight/checkpoint-step10.safetensors", false});
  const auto a = tensor_bytes(dir / "straight/checkpoint.safetensors", false);
  const auto b = tensor_bytes(dir / "resumed/checkpoint.safetensors", false);
  ASSERT_FALSE(a.empty());
  EXPECT_TRUE(a == b) << "parameters or optimizer state differ after resume";
  // And resuming really continued (different from the step-10 weights).
  EXPECT_FALSE(tensor_bytes(dir / "straight/checkpoint-step10.safetensors", true) ==
               tensor_bytes(dir / "straight/checkpoint.safetensors", true));
}

// The training losses of a run's metrics.jsonl, in order.
std::vector<double> logged_losses(const std::string& path) {
  std::vector<double> losses;
  std::istringstream lines(test::slurp(path));
  for (std::string l; std::getline(lines, l);) {
    const auto j = nlohmann::json::parse(l);
    if (!j.contains("split")) losses.push_back(j["loss"].get<double>());
  }
  return losses;
}

// Trains twice, without and with train.cuda_graph (dropout on, gradient accumulation, logged
// and unlogged steps, batches of varying length): the weights, optimizer state and losses must
// agree bit for bit.
void expect_cuda_graph_changes_no_bit(RunConfig c, const TempDir& dir) {
  dir.write("train.tsv", test::tiny_sentiment_tsv(200, 5));
  c.model.dropout = c.model.attn_dropout = 0.1;
  c.train.max_steps = 12;
  c.train.grad_accum = 2;
  const nlohmann::json eager = train({c, dir / "eager", "", false});
  c.train.cuda_graph = true;
  const nlohmann::json graph = train({c, dir / "graph", "", false});
  const auto a = tensor_bytes(dir / "eager/checkpoint.safetensors", false);
  ASSERT_FALSE(a.empty());
  EXPECT_TRUE(a == tensor_bytes(dir / "graph/checkpoint.safetensors", false))
      << "parameters or optimizer state differ with train.cuda_graph";
  const std::vector<double> losses = logged_losses(dir / "eager/metrics.jsonl");
  EXPECT_GE(losses.size(), 3u);
  EXPECT_EQ(logged_losses(dir / "graph/metrics.jsonl"), losses);
  EXPECT_EQ(graph["results"], eager["results"]);
}

// fp16: the captured steps' losses are scaled, and the loss scaler's overflow check reads them.
TEST(Train, CudaGraphStepsMatchUncapturedInFp16OnTheGpu) {
  HWT_REQUIRE_GPU();
  TempDir dir("train_graph_gpu_fp16");
  RunConfig c = test::tiny_tsv_classifier(dir);
  c.train.device = DeviceChoice::Cuda;
  c.train.precision = Precision::Fp16;
  expect_cuda_graph_changes_no_bit(c, dir);
}

TEST(Train, CudaGraphStepsMatchUncapturedOnTheGpu) {
  HWT_REQUIRE_GPU();
  TempDir dir("train_graph_gpu");
  RunConfig c = test::tiny_tsv_classifier(dir);
  c.train.device = DeviceChoice::Cuda;
  c.train.precision = Precision::Bf16;
  expect_cuda_graph_changes_no_bit(c, dir);
}

}  // namespace
}  // namespace hwt
