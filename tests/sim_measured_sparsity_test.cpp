// hwt sim --sparsity: a run's sparsity.json read back, each pruning point's fraction landing on
// the GEMM operands it was measured on (and nowhere else), the sources in the report, every
// bad file, and a pruned training run simulated end to end. Also hwt predict's threshold
// override, which takes the same --set as hwt eval.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "accel/simulator.h"
#include "cli_util.h"
#include "config/run_config.h"
#include "sim_test_util.h"
#include "train/sparsity_log.h"

namespace hwt::accel {
namespace {

using testing::small_model;

// A sparsity.json as hwt train writes it, with the given fractions (zeros / elements of 1000).
std::string sparsity_file(const std::map<std::string, double>& points, double tau_act_grad = 0) {
  nlohmann::json p = nlohmann::json::object();
  for (const auto& [name, f] : points)
    p[name] = {{"zeros", f * 1000}, {"elements", 1000}, {"sparsity", f}};
  return nlohmann::json{{"tau_infer", 0.05},
                        {"tau_train", 1e-4},
                        {"tau_act_grad", tau_act_grad},
                        {"points", p},
                        {"overall", {{"zeros", 0}, {"elements", 0}, {"sparsity", 0}}}}
      .dump(2);
}

// What hwt sim --sparsity builds: measured points, every other tensor dense.
Sparsity measured(const test::TempDir& dir, const std::string& contents) {
  dir.write("sparsity.json", contents);
  return Sparsity::measured_in(read_run_sparsity(dir.path().string()));  // the folder works too
}

// The GEMM stages of the `nth` op labelled `label` (ops repeat per block: layers.0 first).
std::vector<Stage> gemms(const SimWorkload& w, const std::string& label, int nth = 0) {
  for (const SimOp& op : w.ops) {
    if (op.label != label || nth-- > 0) continue;
    std::vector<Stage> out;
    for (size_t i = op.first_stage; i < op.first_stage + op.stage_count; ++i)
      if (w.stages[i].kind == StageKind::Gemm) out.push_back(w.stages[i]);
    return out;
  }
  ADD_FAILURE() << "no op " << label;
  return {};
}

// A linear layer's backward GEMMs: dx = dy.W (B a weight), then dW = dy^T.x (B an activation).
std::vector<Stage> linear_backward(const SimWorkload& w, const std::string& label, int nth = 0) {
  std::vector<Stage> g = gemms(w, label, nth);
  EXPECT_EQ(g.size(), 2u) << label;
  if (g.size() != 2) return {Stage{}, Stage{}};
  EXPECT_EQ(g[0].b, Operand::Weight) << label;
  EXPECT_EQ(g[1].b, Operand::Activation) << label;
  return g;
}

void expect_densities(const Stage& s, double a, double b, double c, const std::string& what) {
  EXPECT_DOUBLE_EQ(s.dens_a, a) << what << " A";
  EXPECT_DOUBLE_EQ(s.dens_b, b) << what << " B";
  EXPECT_DOUBLE_EQ(s.dens_c, c) << what << " C";
}

const std::map<std::string, double> kDynaTranAndProp = {
    {"attn.qkv", 0.2}, {"attn.context", 0.3}, {"attn.out", 0.4},          {"mlp.fc1", 0.5},
    {"mlp.fc2", 0.6},  {"param_grads", 0.7},  {"param_grads.linear", 0.4}};

// Inference: DynaTran's points on the outputs they prune and on the GEMMs that read them.
TEST(SimMeasuredSparsity, DynaTranPointsLandOnTheirOperandsInInference) {
  test::TempDir dir("sim_measured_infer");
  const Sparsity s = measured(dir, sparsity_file(kDynaTranAndProp));
  const SimWorkload w =
      build_sim_workload(trace_step(small_model(TraceMode::Infer)), TraceMode::Infer, s);
  for (int layer : {0, 1}) {
    const std::string attn = "layers." + std::to_string(layer) + ".attn ";
    const std::string mlp = "layers." + std::to_string(layer) + ".mlp ";
    expect_densities(gemms(w, attn + "linear_forward", 0)[0], 1, 1, 0.8, "qkv");
    const std::vector<Stage> att = gemms(w, attn + "attention_forward");
    ASSERT_EQ(att.size(), 2u);
    expect_densities(att[0], 0.8, 0.8, 1, "Q.K^T");
    expect_densities(att[1], 1, 0.8, 0.7, "P.V");
    expect_densities(gemms(w, attn + "linear_forward", 1)[0], 0.7, 1, 0.6, "attn.out");
    expect_densities(gemms(w, mlp + "linear_forward", 0)[0], 1, 1, 0.5, "fc1");
    expect_densities(gemms(w, mlp + "linear_forward", 1)[0], 0.5, 1, 0.4, "fc2");
  }
  expect_densities(gemms(w, "head.classifier linear_forward")[0], 1, 1, 1, "head");
}

// The scores and probabilities DynaTran prunes inside attention: the scores on Q·Kᵀ's output,
// the probabilities on P·V's P; in training neither applies.
TEST(SimMeasuredSparsity, AttentionScoresAndProbabilitiesLandOnTheAttentionProducts) {
  test::TempDir dir("sim_measured_attn");
  const Sparsity s = measured(
      dir, sparsity_file({{"attn.qkv", 0.2}, {"attn.scores", 0.25}, {"attn.probs", 0.75}}));
  const SimWorkload infer =
      build_sim_workload(trace_step(small_model(TraceMode::Infer)), TraceMode::Infer, s);
  const std::vector<Stage> att = gemms(infer, "layers.1.attn attention_forward");
  ASSERT_EQ(att.size(), 2u);
  expect_densities(att[0], 0.8, 0.8, 0.75, "Q.K^T");
  expect_densities(att[1], 0.25, 0.8, 1, "P.V");
  const SimWorkload train =
      build_sim_workload(trace_step(small_model(TraceMode::Train)), TraceMode::Train, s);
  const std::vector<Stage> tatt = gemms(train, "layers.1.attn attention_forward");
  ASSERT_EQ(tatt.size(), 2u);
  expect_densities(tatt[0], 1, 1, 1, "training Q.K^T");
  expect_densities(tatt[1], 1, 1, 1, "training P.V");
}

// Training: forwards are never pruned by DynaTran, so its points do not apply; DynaProp's
// fractions land on the weight gradients and the optimizer's gradient read only, and the
// activation gradients stay dense, unlike the constant, which hits every gradient. The weight
// gradients the GEMMs write take the dense layers' own fraction (param_grads.linear), not the
// whole model's, which embedding rows and norms dilute or inflate; the optimizer reads them all.
TEST(SimMeasuredSparsity, ParamGradsSparsityReachesWeightGradientsOnly) {
  test::TempDir dir("sim_measured_train");
  const Sparsity s = measured(dir, sparsity_file(kDynaTranAndProp));
  const Workload traced = trace_step(small_model(TraceMode::Train));
  const SimWorkload w = build_sim_workload(traced, TraceMode::Train, s);
  for (const Stage& st : gemms(w, "layers.0.attn linear_forward"))
    expect_densities(st, 1, 1, 1, "training forward");
  for (const char* op : {"layers.0.mlp linear_backward", "layers.0.attn linear_backward"})
    for (int nth : {0, 1}) {
      const std::vector<Stage> g = linear_backward(w, op, nth);
      expect_densities(g[0], 1, 1, 1, std::string(op) + " dx = dy.W");
      expect_densities(g[1], 1, 1, 0.6, std::string(op) + " dW = dy^T.x");
    }
  expect_densities(linear_backward(w, "head.classifier linear_backward")[1], 1, 1, 0.6, "head dW");

  const SimWorkload constant = build_sim_workload(traced, TraceMode::Train, Sparsity{0, 0, 0.7});
  expect_densities(linear_backward(constant, "layers.0.mlp linear_backward")[0], 0.3, 1, 0.3,
                   "the constant on dx = dy.W");

  // The optimizer reads its gradients at the measured density (as the constant 0.7 would have
  // it), its parameters and moments dense.
  auto optimizer_read = [](const SimWorkload& sw) {
    for (const SimOp& op : sw.ops)
      if (op.label.find("adamw_step") != std::string::npos)
        return sw.stages[op.first_stage].dens_in;
    ADD_FAILURE() << "no optimizer op";
    return 0.0;
  };
  EXPECT_LT(optimizer_read(w), 0.9);
  EXPECT_DOUBLE_EQ(optimizer_read(w), optimizer_read(constant));
}

// With tau_act_grad the input gradients the dense layers write take their points' fractions,
// as do the GEMMs that read them next (fc1's dy is fc2's dx; the attention reads attn.out's).
TEST(SimMeasuredSparsity, ActivationGradientPointsWhenTheRunPrunedThem) {
  test::TempDir dir("sim_measured_act_grad");
  const Sparsity s = measured(dir, sparsity_file({{"grad.attn.qkv", 0.1},
                                                  {"grad.attn.out", 0.2},
                                                  {"grad.mlp.fc1", 0.3},
                                                  {"grad.mlp.fc2", 0.4},
                                                  {"param_grads.linear", 0.5}},
                                                 1e-4));
  const SimWorkload w =
      build_sim_workload(trace_step(small_model(TraceMode::Train)), TraceMode::Train, s);
  const std::vector<Stage> fc2 = linear_backward(w, "layers.1.mlp linear_backward", 0);
  const std::vector<Stage> fc1 = linear_backward(w, "layers.1.mlp linear_backward", 1);
  expect_densities(fc2[0], 1, 1, 0.6, "fc2 dx");
  expect_densities(fc2[1], 1, 1, 0.5, "fc2 dW");
  expect_densities(fc1[0], 0.6, 1, 0.7, "fc1 dx");
  expect_densities(fc1[1], 0.6, 1, 0.5, "fc1 dW");
  expect_densities(linear_backward(w, "layers.1.attn linear_backward", 0)[0], 1, 1, 0.8,
                   "attn.out dx");
  const std::vector<Stage> att = gemms(w, "layers.1.attn attention_backward");
  ASSERT_EQ(att.size(), 4u);
  expect_densities(att[0], 1, 0.8, 1, "dV = P^T.dO");
  expect_densities(att[1], 0.8, 1, 1, "dP = dO.V^T");
  expect_densities(att[2], 1, 1, 1, "dQ");
  expect_densities(att[3], 1, 1, 1, "dK");
  expect_densities(linear_backward(w, "layers.1.attn linear_backward", 1)[0], 1, 1, 0.9, "qkv dx");
}

// Measured sparsity maps onto dense blocks: a tensor-train model is refused, not guessed at.
TEST(SimMeasuredSparsity, TensorTrainModelsAreRefused) {
  test::TempDir dir("sim_measured_tt");
  const Sparsity s = measured(dir, sparsity_file({{"param_grads", 0.5}}));
  StepSpec spec = small_model(TraceMode::Train);
  spec.config = load_run_config("tt_tiny", {"model.vocab_size=1000", "model.num_labels=2"});
  spec.seq = 16;
  try {
    build_sim_workload(trace_step(spec), TraceMode::Train, s);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor-train"), std::string::npos) << e.what();
  }
}

// The report says where each sparsity came from; constants given with --sparsity cover the
// tensors the run did not prune.
TEST(SimMeasuredSparsityCli, ReportsSources) {
  test::TempDir dir("sim_measured_cli");
  dir.write("sparsity.json", sparsity_file(kDynaTranAndProp));
  const std::string base =
      "sim --config bert_tiny --batch 2 --seq 32 --sparsity " + (dir / "sparsity.json");
  const test::CliResult r = test::run_hwt(base + " --json", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = nlohmann::json::parse(r.out)["workload"]["sparsity"];
  EXPECT_EQ(s["gradient"]["value"], 0.0);
  EXPECT_EQ(s["gradient"]["source"], "not pruned by the run");
  EXPECT_EQ(s["measured"]["file"], dir / "sparsity.json");
  EXPECT_EQ(s["measured"]["points"]["param_grads"]["value"], 0.7);
  EXPECT_EQ(s["measured"]["points"]["param_grads"]["used"], true);
  EXPECT_EQ(s["measured"]["points"]["attn.qkv"]["used"], false);

  const test::CliResult g = test::run_hwt(base + " --grad-sparsity 0.25 --json", dir);
  ASSERT_EQ(g.exit_code, 0) << g.err;
  const auto gs = nlohmann::json::parse(g.out)["workload"]["sparsity"];
  EXPECT_EQ(gs["gradient"]["value"], 0.25);
  EXPECT_EQ(gs["gradient"]["source"], "--grad-sparsity");

  const test::CliResult text = test::run_hwt(base + " --mode infer", dir);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("attn.qkv 0.2, attn.context 0.3"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("not for inference (gradients): param_grads 0.7"), std::string::npos)
      << text.out;
  const test::CliResult plain = test::run_hwt("sim --config bert_tiny --batch 2 --seq 32", dir);
  EXPECT_NE(plain.out.find("gradients 0.9 (AccelTran's constant)"), std::string::npos) << plain.out;
}

TEST(SimMeasuredSparsityCli, BadFilesAreOneLineAndExitCode2) {
  test::TempDir dir("sim_measured_bad");
  dir.write("not_json.json", "{\"points\": ");
  dir.write("array.json", "[1, 2]");
  dir.write("no_tau.json", R"({"points": {}})");
  dir.write("string.json",
            R"({"tau_infer": 0, "tau_train": 0, "tau_act_grad": 0,
                "points": {"attn.qkv": {"sparsity": "high"}}})");
  dir.write("above_one.json", sparsity_file({{"mlp.fc1", 1.5}}));
  dir.write("negative.json", sparsity_file({{"mlp.fc1", -0.1}}));
  dir.write("unknown.json", sparsity_file({{"attn.weights", 0.5}}));
  std::filesystem::create_directories(dir.path() / "empty_run");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {dir / "missing.json", "cannot read sparsity file"},
      {dir / "empty_run", "no sparsity.json"},
      {dir / "not_json.json", "not valid JSON"},
      {dir / "array.json", "no \"points\" object"},
      {dir / "no_tau.json", "tau_infer must be a number"},
      {dir / "string.json", "points.attn.qkv.sparsity must be a number"},
      {dir / "above_one.json", "points.mlp.fc1.sparsity 1.5 is outside [0, 1]"},
      {dir / "negative.json", "points.mlp.fc1.sparsity -0.1 is outside [0, 1]"},
      {dir / "unknown.json", "unknown pruning point 'attn.weights'"},
  };
  for (const auto& [file, message] : cases) {
    const test::CliResult r = test::run_hwt("sim --config bert_tiny --sparsity " + file, dir);
    EXPECT_EQ(r.exit_code, 2) << file;
    EXPECT_NE(r.err.find(message), std::string::npos) << file << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  dir.write("ok.json", sparsity_file({{"param_grads", 0.5}}));
  const test::CliResult both =
      test::run_hwt("sim --config bert_tiny --dense --sparsity " + (dir / "ok.json"), dir);
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("--sparsity and --dense exclude each other"), std::string::npos)
      << both.err;
}

// The model keys of the tiny run below, for hwt train and hwt sim alike.
std::string tiny_model_sets(const test::TempDir& dir) {
  return "--set data.format=tsv --set data.path=" + (dir / "train.tsv") +
         " --set data.min_freq=1 --set data.max_len=16 --set model.hidden=32 --set model.heads=4"
         " --set model.ffn=64 --set model.layers=2 --set model.max_seq=16"
         " --set train.batch_size=16 --set train.threads=1";
}

// A short CPU run with all three thresholds on, then hwt sim on its folder in both modes: the
// measured points apply, and the pruned step costs less than the dense one.
TEST(SimMeasuredSparsityCli, SimulatesAPrunedTrainingRun) {
  test::TempDir dir("sim_measured_e2e");
  dir.write("train.tsv", test::tiny_sentiment_tsv(200, 5));
  const std::string sets = tiny_model_sets(dir);
  const test::CliResult train = test::run_hwt(
      "train " + sets +
          " --set train.max_steps=10 --set train.eval_every=5 --set model.prune.tau_infer=0.05"
          " --set model.prune.tau_train=1e-3 --set model.prune.tau_act_grad=1e-4 --quiet --out " +
          (dir / "run"),
      dir);
  ASSERT_EQ(train.exit_code, 0) << train.err;
  for (const char* mode : {"train", "infer"}) {
    const std::string sim = "sim " + sets + " --accel edge --mode " + mode + " --json";
    const test::CliResult pruned = test::run_hwt(sim + " --sparsity " + (dir / "run"), dir);
    const test::CliResult dense = test::run_hwt(sim + " --dense", dir);
    ASSERT_EQ(pruned.exit_code, 0) << pruned.err;
    ASSERT_EQ(dense.exit_code, 0) << dense.err;
    const auto p = nlohmann::json::parse(pruned.out), d = nlohmann::json::parse(dense.out);
    const auto& points = p["workload"]["sparsity"]["measured"]["points"];
    for (const char* point :
         {"attn.qkv", "mlp.fc1", "param_grads", "param_grads.linear", "grad.mlp.fc1"}) {
      ASSERT_TRUE(points.contains(point)) << point;
      EXPECT_GT(points[point]["value"].get<double>(), 0.0) << point;
      EXPECT_EQ(points[point]["used"], (point[0] == 'a' || point[0] == 'm') == (mode[0] == 'i'))
          << point;
    }
    EXPECT_LT(p["energy_j"].get<double>(), d["energy_j"].get<double>()) << mode;
    EXPECT_LT(p["totals"]["main_memory_bytes"].get<double>(),
              d["totals"]["main_memory_bytes"].get<double>())
        << mode;
  }

  // hwt predict takes the same threshold override as hwt eval: the saved threshold (0.05) by
  // default, pruning off at 0, which changes the prediction; other model keys stay the
  // checkpoint's.
  const std::string ckpt = dir / "run/checkpoint.safetensors";
  const std::string text = " --text 'a good film' --json";
  const test::CliResult as_saved = test::run_hwt("predict " + ckpt + text, dir);
  const test::CliResult same =
      test::run_hwt("predict " + ckpt + text + " --set model.prune.tau_infer=0.05", dir);
  const test::CliResult off =
      test::run_hwt("predict " + ckpt + text + " --set model.prune.tau_infer=0", dir);
  ASSERT_EQ(as_saved.exit_code, 0) << as_saved.err;
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_EQ(same.out, as_saved.out);
  EXPECT_NE(nlohmann::json::parse(off.out)["probability"],
            nlohmann::json::parse(as_saved.out)["probability"]);
  const test::CliResult shape =
      test::run_hwt("predict " + ckpt + text + " --set model.layers=3", dir);
  EXPECT_EQ(shape.exit_code, 2);
  EXPECT_NE(shape.err.find("only model.prune.* can be set"), std::string::npos) << shape.err;
}

}  // namespace
}  // namespace hwt::accel
