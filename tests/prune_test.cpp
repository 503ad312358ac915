// Runtime pruning (model.prune, docs/training.md): the CPU op against a direct loop, the
// thresholds' config errors, DynaTran touching inference only, DynaProp zeroing exactly the
// small gradients the optimizer sees (and counting the dense layers' weights apart), and the
// sparsity a run writes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <sstream>

#include "backend/cpu/cpu_backend.h"
#include "cli_util.h"
#include "config/run_config.h"
#include "core/safetensors.h"
#include "model/model.h"
#include "model_test_util.h"
#include "train/optimizer.h"
#include "train/trainer.h"

namespace hwt {
namespace {

// Random values with some exactly at +-tau, some zeros and some just above tau.
std::vector<float> values_with_ties(int64_t n, float tau, uint64_t seed) {
  std::vector<float> v = test::randn(n, seed, 0.1f);
  for (size_t i = 0; i < v.size(); i += 7) v[i] = (i % 2 ? tau : -tau);
  for (size_t i = 3; i < v.size(); i += 11) v[i] = 0.0f;
  for (size_t i = 5; i < v.size(); i += 13) v[i] = std::nextafter(tau, 1.0f);
  return v;
}

TEST(PruneSmallCpu, ZeroesExactlyTheSmallValuesAndCountsEveryZero) {
  CpuBackend be(2);
  const float tau = 0.05f;
  const int64_t n = 1001;
  std::vector<float> host = values_with_ties(n, tau, 3);
  DeviceBuffer xb(be, static_cast<size_t>(n) * 4), zb(be, 8);
  const Tensor x = xb.tensor(DType::F32, Shape{n}), zeros = zb.tensor(DType::I32, Shape{2});
  be.upload(x, host.data());
  const int32_t start[2] = {5, 0};  // the counter accumulates
  be.upload(zeros, start);
  be.prune_small({x, tau, zeros});

  std::vector<float> got(static_cast<size_t>(n));
  be.download(got.data(), x);
  uint64_t expected_zeros = 0;
  for (size_t i = 0; i < host.size(); ++i) {
    const float want = std::fabs(host[i]) <= tau ? 0.0f : host[i];
    EXPECT_EQ(got[i], want) << i;
    expected_zeros += want == 0.0f;
  }
  EXPECT_GT(expected_zeros, 200u);
  EXPECT_LT(expected_zeros, 1000u);
  EXPECT_EQ(test::read_counter(be, zeros), 5 + expected_zeros);
}

// DynaProp inside an optimizer step (GradPrune): gradients are compared as the step uses them,
// times 1 / loss scale and the clip factor; pruned ones do not move their parameter (SGD, no
// momentum or decay), the others move by lr · g; zeros are counted outside and inside the
// Linear ranges; an overflowed (skipped) step changes and counts nothing.
TEST(DynaPropStep, ComparesGradientsAfterUnscalingAndClippingAndCountsPerRange) {
  CpuBackend be(2);
  test::TensorPool pool(be);
  const int64_t n = 512;
  const std::vector<float> grads = test::randn(n, 9, 4.0f), params = test::randn(n, 10);
  const float scale = 8.0f, norm_sq = 4096.0f, max_norm = 2.0f, tau = 0.05f, lr = 0.5f;
  const Tensor clip_values = pool.f32({2}, {norm_sq, scale});
  const GradClip clip{clip_values.flat_slice(0, 1), max_norm, clip_values.flat_slice(1, 1)};
  const Tensor p = pool.f32({n}, params), g = pool.f32({n}, grads), m = pool.zeros({n});
  const Tensor zeros = pool.i32({4}, {3, 0, 4, 0});  // the counters accumulate
  const Tensor linear = pool.i32({8}, {10, 0, 100, 0, 200, 0, 256, 0});
  be.sgd_step({OptimizerTensors{p, g, {}, n, GradPrune{tau, zeros, linear}}, m, clip,
               at_step(SgdHyper{lr, 0.0f, 0.0f, false}, 1)});
  const float unscale = 1.0f / scale;
  const float mult = unscale * std::min(1.0f, max_norm / (std::sqrt(norm_sq) * unscale + 1e-6f));
  const std::vector<float> after = pool.read(p);
  uint64_t outside = 0, inside = 0;
  for (int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<size_t>(i);
    const float used = grads[k] * mult;
    if (std::fabs(used) <= tau) {
      EXPECT_EQ(after[k], params[k]) << i;
      ((i >= 10 && i < 100) || (i >= 200 && i < 256) ? inside : outside) += 1;
    } else {
      EXPECT_EQ(after[k], params[k] - lr * used) << i;
    }
  }
  EXPECT_GT(inside, 10u);
  EXPECT_GT(outside, 10u);
  uint64_t counts[2];
  be.download(counts, zeros);
  EXPECT_EQ(counts[0], 3 + outside);
  EXPECT_EQ(counts[1], 4 + inside);
  EXPECT_EQ(pool.read(g), grads);  // the gradient buffer itself is left alone

  be.upload(clip_values, std::vector<float>{INFINITY, scale}.data());
  be.sgd_step({OptimizerTensors{p, g, {}, n, GradPrune{1e9f, zeros, linear}}, m, clip,
               at_step(SgdHyper{lr, 0.0f, 0.0f, false}, 2)});
  EXPECT_EQ(pool.read(p), after);
  be.download(counts, zeros);
  EXPECT_EQ(counts[0], 3 + outside);
}

TEST(PruneConfig, NegativeThresholdsAreErrorsNamingTheKey) {
  for (const char* key :
       {"model.prune.tau_infer", "model.prune.tau_train", "model.prune.tau_act_grad"}) {
    try {
      load_run_config("", {std::string(key) + "=-0.1"});
      ADD_FAILURE() << key << " accepted a negative value";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(load_run_config("", {"model.prune.tau_infer=0.01", "model.prune.tau_train=0"}));
}

ModelConfig small_classifier(double tau_infer, double tau_train, double tau_act_grad) {
  ModelConfig m = test::small_decoder(4);
  m.head = Task::Classify;
  m.causal = false;
  m.num_labels = 3;
  m.dropout = m.attn_dropout = 0.0;
  m.prune = {tau_infer, tau_train, tau_act_grad};
  return m;
}

struct Pass {
  std::vector<float> grads;
  LossSums train_loss, eval_loss;
};

// A training forward and backward, then an evaluation forward, of a fresh model.
Pass run_pass(Model& model) {
  model.plan(4, 16);
  model.init_parameters(1);
  model.set_batch(test::random_batch(model.config(), 4, 16, 2));
  model.params().zero_grads();
  Pass p;
  model.forward(true, 7);
  p.train_loss = model.losses();
  model.backward();
  p.grads.resize(static_cast<size_t>(model.params().count()));
  model.backend().download(p.grads.data(), model.params().grads_flat());
  model.forward(false, 0);
  p.eval_loss = model.losses();
  return p;
}

TEST(DynaTran, ChangesEvaluationOnlyAndCountsItsPoints) {
  CpuBackend be(2);
  Model plain(small_classifier(0, 0, 0), be), pruned(small_classifier(0.5, 0, 0), be);
  const Pass a = run_pass(plain), b = run_pass(pruned);
  EXPECT_EQ(a.train_loss.seq, b.train_loss.seq);
  EXPECT_EQ(a.grads, b.grads);
  EXPECT_NE(a.eval_loss.seq, b.eval_loss.seq);
  EXPECT_EQ(plain.pruning(), nullptr);
  const std::vector<PruneCount> counts = pruned.pruning()->counts();
  ASSERT_EQ(counts.size(), 7u);  // the seven DynaTran points, from the evaluation pass only
  for (const PruneCount& c : counts) {
    EXPECT_LT(c.point, PrunePoint::QkvGrad);
    EXPECT_GT(c.sparsity(), 0.0) << prune_point_name(c.point);
  }
  EXPECT_EQ(counts[0].elements, 2u * 4 * 16 * 3 * 128);  // both blocks' q|k|v
  // Scores and probabilities: one per unmasked (query, key) pair of each block and head.
  ASSERT_EQ(counts[1].point, PrunePoint::AttnScores);
  ASSERT_EQ(counts[2].point, PrunePoint::AttnProbs);
  const auto heads = static_cast<uint64_t>(pruned.config().heads);
  EXPECT_EQ(counts[1].elements, counts[2].elements);
  EXPECT_GT(counts[1].elements, 2u * heads * 4 * 16);
  EXPECT_LE(counts[1].elements, 2u * heads * 4 * 16 * 16);
}

TEST(ActivationGradPruning, ChangesGradientsAndCountsTheDenseLayersInputGradients) {
  CpuBackend be(2);
  Model plain(small_classifier(0, 0, 0), be), pruned(small_classifier(0, 0, 1e-4), be);
  const Pass a = run_pass(plain), b = run_pass(pruned);
  EXPECT_EQ(a.train_loss.seq, b.train_loss.seq);
  EXPECT_NE(a.grads, b.grads);
  EXPECT_EQ(a.eval_loss.seq, b.eval_loss.seq);
  std::vector<std::string_view> names;
  for (const PruneCount& c : pruned.pruning()->counts()) names.push_back(prune_point_name(c.point));
  EXPECT_EQ(names, (std::vector<std::string_view>{"grad.attn.qkv", "grad.attn.out", "grad.mlp.fc1",
                                                  "grad.mlp.fc2"}));
}

// The optimizer's input: with plain SGD exactly the parameters whose clipped gradient is at
// most tau do not move, and the counts are theirs.
TEST(DynaProp, PrunesExactlyTheSmallGradientsTheOptimizerSees) {
  CpuBackend be(2);
  const float tau = 2e-4f, max_norm = 0.5f;
  Model model(small_classifier(0, tau, 0), be);
  OptimConfig oc;
  oc.name = OptimizerKind::Sgd;
  oc.sgd_momentum = 0;
  oc.weight_decay = 0;  // else decay moves the parameters whose gradient was pruned
  Optimizer opt(oc, model.params(), max_norm);
  opt.set_pruning(model.pruning());
  const Pass p = run_pass(model);
  const auto n = static_cast<size_t>(model.params().count());
  std::vector<float> before(n), after(n);
  be.download(before.data(), model.params().params_flat());
  opt.step(1, 0.1);
  be.download(after.data(), model.params().params_flat());

  double norm_sq = 0;  // as sum_squares computes it, in the CPU's chunk order: compare loosely
  for (float g : p.grads) norm_sq += static_cast<double>(g) * g;
  const float clip = std::min(1.0f, max_norm / (static_cast<float>(std::sqrt(norm_sq)) + 1e-6f));
  uint64_t pruned = 0;
  for (size_t i = 0; i < n; ++i) {
    const float seen = std::fabs(p.grads[i] * clip);
    if (std::fabs(seen - tau) < 1e-6f * tau) continue;  // too close to call with a rounded norm
    EXPECT_EQ(after[i] == before[i], seen <= tau) << i << " gradient " << p.grads[i];
    pruned += seen <= tau && p.grads[i] != 0.0f;
  }
  EXPECT_GT(pruned, n / 100);
  // What did not move was pruned (zero gradients included). param_grads.linear: the dense
  // layers' weight matrices (decayed, named *.weight; norms' weights are not decayed), without
  // embeddings, norms and biases.
  uint64_t zeros = 0, linear_zeros = 0, linear_elements = 0;
  for (size_t i = 0; i < n; ++i) zeros += after[i] == before[i];
  for (const ParamInfo& info : model.params().infos()) {
    const std::string& name = info.name;
    if (!info.decay || name.size() < 7 || name.compare(name.size() - 7, 7, ".weight") != 0)
      continue;
    for (int64_t i = info.offset; i < info.offset + info.shape.numel(); ++i)
      linear_zeros += after[static_cast<size_t>(i)] == before[static_cast<size_t>(i)];
    linear_elements += static_cast<uint64_t>(info.shape.numel());
  }
  const std::vector<PruneCount> counts = model.pruning()->counts();
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[0].point, PrunePoint::ParamGrads);
  EXPECT_EQ(counts[0].zeros, zeros);
  EXPECT_EQ(counts[0].elements, n);
  EXPECT_EQ(counts[1].point, PrunePoint::LinearWeightGrads);
  EXPECT_EQ(counts[1].zeros, linear_zeros);
  EXPECT_EQ(counts[1].elements, linear_elements);
  EXPECT_GT(linear_elements, n / 2);  // the blocks' and the head's matrices...
  EXPECT_LT(linear_elements, n);      // ... without the embeddings, norms and biases
  EXPECT_NE(counts[1].sparsity(), counts[0].sparsity());
}

// On crafted gradients, param_grads.linear counts exactly the Linear weights' elements of the
// part it is given, also a ZeRO-1 shard that starts and ends inside them; param_grads counts
// every element, and the pruning itself is the same as over one piece.
TEST(DynaProp, CountsLinearWeightsApartOnAnyShard) {
  CpuBackend be(1);
  ParamStore ps;
  ps.add("embed", Shape{4, 2}, true, Init::Zeros);                            // elements 0-7
  ps.mark_linear_weight(ps.add("a.weight", Shape{2, 3}, true, Init::Zeros));  // 8-13
  ps.mark_linear_weight(ps.add("b.weight", Shape{3, 2}, true, Init::Zeros));  // 14-19
  ps.add("table", Shape{2, 2}, true, Init::Zeros);                            // 20-23
  ps.add("b.bias", Shape{2}, false, Init::Zeros);                             // 24-25
  ps.allocate(be, DType::F32);
  ASSERT_EQ(ps.count(), 26);
  const float tau = 0.1f;
  std::vector<float> host(26);
  for (size_t i = 0; i < host.size(); ++i) host[i] = i % 3 == 0 ? 0.05f : 1.0f;  // 9 small
  test::TensorPool pool(be);
  for (const auto& [first, size] : {std::pair<int64_t, int64_t>{0, 26}, {5, 12}, {10, 16}}) {
    be.upload(ps.grads_flat(), host.data());
    be.fill({ps.params_flat(), 0.0f});
    PruneConfig cfg;
    cfg.tau_train = tau;
    Pruning pruning(cfg, be, ps);
    // One SGD step with lr 1 over the part: a parameter becomes -g, or stays 0 if pruned.
    const OptimizerTensors t{ps.params_flat().flat_slice(first, size),
                             ps.grads_flat().flat_slice(first, size),
                             {},
                             0,
                             pruning.param_grads(first, size)};
    be.sgd_step({t, pool.zeros({size}), {}, at_step(SgdHyper{1.0f, 0.0f, 0.0f, false}, 1)});
    std::vector<float> got(26);
    be.download(got.data(), ps.params_flat());
    uint64_t zeros = 0, linear_zeros = 0, linear = 0;
    for (int64_t i = 0; i < 26; ++i) {
      const auto k = static_cast<size_t>(i);
      const bool inside = i >= first && i < first + size;
      EXPECT_EQ(got[k], inside && host[k] >= tau ? -host[k] : 0.0f) << i;
      if (!inside) continue;
      zeros += got[k] == 0.0f;
      if (i >= 8 && i < 20) {
        ++linear;
        linear_zeros += got[k] == 0.0f;
      }
    }
    const std::vector<PruneCount> c = pruning.counts();
    ASSERT_EQ(c.size(), 2u) << first;
    EXPECT_EQ(c[0].point, PrunePoint::ParamGrads);
    EXPECT_EQ(c[0].zeros, zeros) << first;
    EXPECT_EQ(c[0].elements, static_cast<uint64_t>(size)) << first;
    EXPECT_EQ(c[1].point, PrunePoint::LinearWeightGrads);
    EXPECT_EQ(c[1].zeros, linear_zeros) << first;
    EXPECT_EQ(c[1].elements, linear) << first;
  }
}

// A run with DynaTran trains the same weights as one without (training never prunes), logs
// window sparsity at log lines and writes sparsity.json.
TEST(PruneRun, DynaTranLeavesTrainingAloneAndWritesSparsity) {
  test::TempDir dir("prune_run");
  dir.write("train.tsv", test::tiny_sentiment_tsv(200, 5));
  RunConfig c = test::tiny_tsv_classifier(dir);
  c.train.max_steps = 10;
  c.train.eval_every = 5;
  const nlohmann::json plain = train({c, dir / "plain", "", false});
  c.model.prune.tau_infer = 0.02;
  c.model.prune.tau_train = 1e-6;
  train({c, dir / "pruned", "", false});
  c.model.prune.tau_train = 0;
  const nlohmann::json dynatran = train({c, dir / "dynatran", "", false});
  // Every tensor (weights, optimizer state) bit for bit; the metadata differs (the config's
  // tau_infer, and the best validation score, which DynaTran changes).
  const SafetensorsFile a = SafetensorsFile::open(dir / "plain/checkpoint.safetensors");
  const SafetensorsFile b = SafetensorsFile::open(dir / "dynatran/checkpoint.safetensors");
  ASSERT_EQ(a.names(), b.names());
  for (const std::string& name : a.names()) {
    const SafetensorsFile::View x = a.get(name), y = b.get(name);
    ASSERT_EQ(x.bytes, y.bytes) << name;
    EXPECT_EQ(std::memcmp(x.data, y.data, x.bytes), 0) << name;
  }
  EXPECT_NE(plain["results"]["valid"], dynatran["results"]["valid"]);

  const auto s = nlohmann::json::parse(test::slurp(dir.path() / "pruned/sparsity.json"));
  EXPECT_EQ(s["tau_infer"], 0.02);
  for (const char* p : {"attn.qkv", "attn.context", "attn.out", "mlp.fc1", "mlp.fc2", "param_grads",
                        "param_grads.linear"}) {
    ASSERT_TRUE(s["points"].contains(p)) << p;
    const auto& e = s["points"][p];
    EXPECT_DOUBLE_EQ(e["sparsity"].get<double>(),
                     e["zeros"].get<double>() / e["elements"].get<double>());
  }
  EXPECT_GT(s["overall"]["sparsity"].get<double>(), 0.0);
  // param_grads.linear is a part of param_grads: the overall fraction counts it once.
  uint64_t elements = 0;
  for (const auto& [name, e] : s["points"].items())
    if (name != "param_grads.linear") elements += e["elements"].get<uint64_t>();
  EXPECT_EQ(s["overall"]["elements"].get<uint64_t>(), elements);
  EXPECT_LT(s["points"]["param_grads.linear"]["elements"].get<uint64_t>(),
            s["points"]["param_grads"]["elements"].get<uint64_t>());
  std::istringstream lines(test::slurp(dir.path() / "pruned/metrics.jsonl"));
  int logged = 0;
  for (std::string l; std::getline(lines, l);) {
    const auto j = nlohmann::json::parse(l);
    if (j.contains("split")) continue;
    ASSERT_TRUE(j.contains("sparsity")) << l;
    EXPECT_TRUE(j["sparsity"].contains("param_grads")) << l;
    EXPECT_TRUE(j["sparsity"].contains("overall")) << l;
    ++logged;
  }
  EXPECT_EQ(logged, 2);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "plain/sparsity.json"));

  // hwt eval evaluates a checkpoint trained without DynaTran with it, and refuses other model
  // keys (the model's shape is the checkpoint's).
  const std::string ckpt = dir / "plain/checkpoint.safetensors";
  const test::CliResult base = test::run_hwt("eval " + ckpt + " --split valid --json", dir);
  const test::CliResult tau =
      test::run_hwt("eval " + ckpt + " --split valid --json --set model.prune.tau_infer=0.05", dir);
  ASSERT_EQ(base.exit_code, 0) << base.err;
  ASSERT_EQ(tau.exit_code, 0) << tau.err;
  EXPECT_NE(nlohmann::json::parse(base.out)["loss"], nlohmann::json::parse(tau.out)["loss"]);
  EXPECT_FALSE(nlohmann::json::parse(base.out).contains("sparsity"));
  EXPECT_GT(nlohmann::json::parse(tau.out)["sparsity"]["attn.qkv"].get<double>(), 0.0);
  const test::CliResult shape = test::run_hwt("eval " + ckpt + " --set model.hidden=64", dir);
  EXPECT_EQ(shape.exit_code, 2);
  EXPECT_NE(shape.err.find("only model.prune.* can be set"), std::string::npos) << shape.err;
}

}  // namespace
}  // namespace hwt
