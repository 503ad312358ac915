// Generation with the KV cache against the model's full forward, for each causal-LM family hwt
// builds, and the generator's sampling, stop strings and batching (train/generate.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/trace/trace_backend.h"
#include "data/char_tokenizer.h"
#include "model/model.h"
#include "model_test_util.h"
#include "train/generate.h"

namespace hwt {
namespace {

// The vocabulary's logits of row `row` of the model's token logits.
std::vector<float> logits_row(Model& m, int64_t row) {
  const Tensor t = m.token_logits().row_slice(row, 1);
  std::vector<float> v(static_cast<size_t>(t.numel()));
  m.backend().download(v.data(), t);
  v.resize(static_cast<size_t>(m.config().vocab_size));
  return v;
}

// The next-token logits of `ids` by a forward over all of them (no cache).
std::vector<float> full_forward(Model& m, const std::vector<int32_t>& ids) {
  Batch b;
  b.batch = 1;
  b.seq = std::ssize(ids);
  b.ids = ids;
  b.lengths = {static_cast<int32_t>(ids.size())};
  b.token_labels.assign(ids.size(), -1);
  m.set_batch(b);
  m.forward(false, 0);
  return logits_row(m, b.seq - 1);
}

int32_t argmax(const std::vector<float>& v) {
  return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

float max_abs(const std::vector<float>& v) {
  float m = 0;
  for (float x : v) m = std::max(m, std::fabs(x));
  return m;
}

class CachedDecode : public ::testing::TestWithParam<std::string> {};

// Each decode step's logits equal those of a full forward over the same prefix, and greedy
// tokens by the cache equal greedy tokens by recomputing the whole prefix, for 64 tokens.
TEST_P(CachedDecode, EqualsTheFullForwardAtEveryStep) {
  const ModelConfig cfg = test::lm_family(GetParam());
  CpuBackend cpu(2);
  Model cached(cfg, cpu), full(cfg, cpu);
  cached.init_parameters(7);
  full.init_parameters(7);
  const std::vector<int32_t> prompt = {5, 17, 42, 8, 91, 3, 60};
  const int64_t steps = 64, total = std::ssize(prompt) + steps;
  cached.plan(1, std::ssize(prompt), total);
  full.plan(1, total);
  Batch b;
  b.batch = 1;
  b.seq = std::ssize(prompt);
  b.ids = prompt;
  b.lengths = {static_cast<int32_t>(prompt.size())};
  cached.prefill(b);
  std::vector<int32_t> ids = prompt;
  std::vector<float> got = logits_row(cached, b.seq - 1);
  for (int64_t step = 0; step < steps; ++step) {
    const std::vector<float> want = full_forward(full, ids);
    // fp32 on both sides; they differ by summation order only (one-row GEMMs and a softmax over
    // the cache against the whole-sequence kernels), which stays near 1e-6 of the logits' scale
    // through two layers; 1e-5 leaves room for the compiler's and BLAS's choices.
    float diff = 0;
    for (size_t i = 0; i < want.size(); ++i) diff = std::max(diff, std::fabs(got[i] - want[i]));
    ASSERT_LE(diff, 1e-5f * max_abs(want)) << GetParam() << " step " << step;
    const int32_t next = argmax(got);
    ASSERT_EQ(next, argmax(want)) << GetParam() << " step " << step;
    ids.push_back(next);
    if (step + 1 < steps) {
      cached.decode(std::vector<int32_t>{next});
      got = logits_row(cached, 0);
    }
  }
  EXPECT_EQ(cached.kv_lengths(), std::vector<int32_t>{static_cast<int32_t>(total - 1)});
}

INSTANTIATE_TEST_SUITE_P(Families, CachedDecode,
                         ::testing::Values("gpt2", "llama", "neox", "qwen2"),
                         [](const auto& i) { return i.param; });

// Greedy steps chained on the device give the picks of one decode and argmax per step, the same
// code on the same machine (bitwise), in chunks that do and do not divide the steps, with two
// prompts of different lengths; for GPT-2 also with a tensor-train token table, whose learned
// positions a decode step looks up from the host.
TEST_P(CachedDecode, ChainedGreedyStepsEqualSingleSteps) {
  std::vector<ModelConfig> cfgs = {test::lm_family(GetParam())};
  if (GetParam() == "gpt2") {
    cfgs.push_back(cfgs[0]);
    cfgs.back().tt.embedding = {{10, 10}, {6, 10}, {4}};
    cfgs.back().tie_embeddings = false;
  }
  CpuBackend cpu(2);
  const int64_t steps = 20;
  for (const ModelConfig& cfg : cfgs) {
    Batch b = test::random_batch(cfg, 2, 7, 3);
    b.lengths = {7, 4};
    std::vector<std::vector<int32_t>> picks, lengths;
    for (const int64_t chunk : {0, 1, 6, 20}) {
      Model m(cfg, cpu);
      m.init_parameters(7);
      m.plan(2, 7, 7 + steps + 1);
      picks.push_back(test::greedy_picks(m, b, steps, chunk));
      lengths.push_back(m.kv_lengths());
    }
    ASSERT_EQ(picks[0].size(), 2u * steps);
    for (size_t i = 1; i < picks.size(); ++i) {
      EXPECT_EQ(picks[i], picks[0]) << GetParam() << " chunking " << i;
      EXPECT_EQ(lengths[i], lengths[0]) << GetParam() << " chunking " << i;
    }
  }
}

// The ops of one decode step of `batch` sequences (prompts of 8 and 5 tokens) on the trace.
std::vector<OpRecord> decode_step_ops(const ModelConfig& cfg, int64_t batch, int64_t capacity) {
  TraceBackend trace;
  Model m(cfg, trace);
  m.plan(batch, 8, capacity);
  Batch b;
  b.batch = batch;
  b.seq = 8;
  b.ids.assign(static_cast<size_t>(8 * batch), 1);
  b.lengths = {8, 5};
  b.lengths.resize(static_cast<size_t>(batch));
  m.prefill(b);
  trace.clear();
  m.decode(std::vector<int32_t>(static_cast<size_t>(batch), 3));
  return trace.workload().ops;
}

// A decode step as the trace sees it: per layer one decode_attention that appends the new
// tokens' k and v (turned by their rotary angles, q too) and attends over the cache's capacity
// (4·b·h·capacity·d matrix FLOPs, 5 per score for the softmax, 3 per turned element), and no
// kv_append or whole-sequence attention of its own.
TEST(CachedDecodeTrace, RecordsTheCacheOps) {
  const ModelConfig cfg = test::lm_family("llama");
  const int64_t batch = 2, capacity = 40, d = cfg.padded_head_dim();
  int attentions = 0;
  for (const OpRecord& r : decode_step_ops(cfg, batch, capacity)) {
    EXPECT_NE(r.op, Op::attention_forward);
    EXPECT_NE(r.op, Op::kv_append);
    if (r.op != Op::decode_attention) continue;
    ++attentions;
    const double scores = static_cast<double>(batch * cfg.heads * capacity);
    const double turned = static_cast<double>(batch * (cfg.heads + cfg.kv()) * cfg.rotary_dim());
    EXPECT_DOUBLE_EQ(r.flops, 4 * scores * static_cast<double>(d) + 5 * scores + 3 * turned);
    // The context rows, and the new k and v rows into the cache.
    EXPECT_EQ(r.bytes_written, (batch * cfg.heads * d + 2.0 * batch * cfg.kv() * d) * 4);
  }
  EXPECT_EQ(attentions, cfg.layers);
}

// One sequence's decode step runs each block as four fused products (the norms, the residual
// adds and the gating inside them) and its attention, and the LM head as a fifth that takes the
// final norm in: no norm, residual, gating or plain product op of its own.
TEST(CachedDecodeTrace, OneSequenceFusesTheNormsAndResidualsIntoTheProducts) {
  for (const char* family : {"llama", "gpt2", "neox"}) {
    SCOPED_TRACE(family);
    const ModelConfig cfg = test::lm_family(family);
    int products = 0, norms = 0, plain = 0;
    for (const OpRecord& r : decode_step_ops(cfg, 1, 40)) {
      EXPECT_NE(r.op, Op::residual_forward);
      EXPECT_NE(r.op, Op::glu_forward);
      products += r.op == Op::fused_linear_forward;
      norms += r.op == Op::layernorm_forward;
      plain += r.op == Op::linear_forward;
    }
    EXPECT_EQ(products, 4 * cfg.layers + 1);
    EXPECT_EQ(norms, 0);
    EXPECT_EQ(plain, 0);
  }
}

// ---- the generator, on a character vocabulary

class Generate : public ::testing::Test {
 protected:
  std::unique_ptr<CharTokenizer> tok =
      CharTokenizer::train({std::string_view("abcdefghijklmnopqrstuvwxyz .,")});

  std::vector<Generation> run(const std::string& fam, const std::vector<std::string>& prompts,
                              const GenerateOptions& o) {
    ModelConfig cfg = test::lm_family(fam);
    cfg.vocab_size = tok->vocab_size();
    CpuBackend cpu(2);
    Model m(cfg, cpu);
    m.init_parameters(11);
    const auto ids = encode_prompts(*tok, prompts, cfg.max_seq);
    const GenerationPlan p = plan_generation(ids, o.max_new_tokens, cfg.max_seq);
    m.plan(p.batch, p.prompt_seq, p.kv_capacity);
    return generate(m, *tok, ids, o);
  }
  static GenerateOptions sampled(uint64_t seed) {
    GenerateOptions o;
    o.max_new_tokens = 40;
    o.sampling.temperature = 1.0;
    o.sampling.seed = seed;
    return o;
  }
};

TEST_F(Generate, TheSameSeedGivesTheSameTokens) {
  const auto a = run("llama", {"the cat"}, sampled(3)), b = run("llama", {"the cat"}, sampled(3));
  EXPECT_EQ(a[0].tokens, b[0].tokens);
  EXPECT_EQ(a[0].tokens.size(), 40u);
  EXPECT_EQ(a[0].finish, Finish::Length);
  EXPECT_NE(run("llama", {"the cat"}, sampled(4))[0].tokens, a[0].tokens);
}

TEST_F(Generate, TopOneAndATinyNucleusAreGreedy) {
  GenerateOptions greedy;
  greedy.max_new_tokens = 30;
  const auto want = run("gpt2", {"hello world."}, greedy)[0].tokens;
  GenerateOptions k1 = sampled(9), p0 = sampled(9);
  k1.max_new_tokens = p0.max_new_tokens = 30;
  k1.sampling.top_k = 1;
  p0.sampling.top_p = 1e-9;
  EXPECT_EQ(run("gpt2", {"hello world."}, k1)[0].tokens, want);
  EXPECT_EQ(run("gpt2", {"hello world."}, p0)[0].tokens, want);
}

TEST_F(Generate, AStopStringCutsTheText) {
  const Generation free = run("qwen2", {"a b c"}, sampled(5))[0];
  ASSERT_GE(free.text.size(), 10u);
  const std::string stop = free.text.substr(6, 2);
  GenerateOptions o = sampled(5);
  o.stop = {"never appears in this text", stop};
  const Generation cut = run("qwen2", {"a b c"}, o)[0];
  EXPECT_EQ(cut.finish, Finish::Stop);
  EXPECT_EQ(cut.text, free.text.substr(0, free.text.find(stop)));
  EXPECT_LE(cut.tokens.size(), free.tokens.size());
}

// A tokenizer whose model names its own end-of-generation ids (HfTokenizer::set_stop_ids).
class StopsAt final : public Tokenizer {
 public:
  StopsAt(const Tokenizer& inner, std::vector<int32_t> stops)
      : in_(inner), stops_(std::move(stops)) {}
  int64_t vocab_size() const override { return in_.vocab_size(); }
  std::vector<int32_t> encode_prefix(std::string_view text, int64_t max) const override {
    return in_.encode_prefix(text, max);
  }
  std::string decode(const std::vector<int32_t>& ids) const override { return in_.decode(ids); }
  nlohmann::json to_json() const override { return in_.to_json(); }
  std::vector<int32_t> stop_ids() const override { return stops_; }

 private:
  const Tokenizer& in_;
  std::vector<int32_t> stops_;
};

TEST_F(Generate, TheModelsStopIdsEndASequence) {
  const Generation free = run("llama", {"the cat"}, sampled(7))[0];
  ASSERT_GE(free.tokens.size(), 12u);
  const int32_t stop = free.tokens[10];
  const auto first = std::find(free.tokens.begin(), free.tokens.end(), stop) - free.tokens.begin();
  const StopsAt stopping(*tok, {12345, stop});
  ModelConfig cfg = test::lm_family("llama");
  cfg.vocab_size = tok->vocab_size();
  CpuBackend cpu(2);
  Model m(cfg, cpu);
  m.init_parameters(11);
  const auto ids = encode_prompts(stopping, {"the cat"}, cfg.max_seq);
  const GenerationPlan p = plan_generation(ids, 40, cfg.max_seq);
  m.plan(p.batch, p.prompt_seq, p.kv_capacity);
  const Generation cut = generate(m, stopping, ids, sampled(7))[0];
  EXPECT_EQ(cut.finish, Finish::EndOfText);
  EXPECT_EQ(cut.tokens, std::vector<int32_t>(free.tokens.begin(), free.tokens.begin() + first));
}

TEST_F(Generate, ABatchOfPromptsEqualsEachAlone) {
  const std::vector<std::string> prompts = {"the quick brown fox", "a", "jumps over."};
  for (const std::string fam : {"gpt2", "neox"}) {
    const auto together = run(fam, prompts, sampled(21));
    ASSERT_EQ(together.size(), prompts.size());
    for (size_t i = 0; i < prompts.size(); ++i) {
      const Generation alone = run(fam, {prompts[i]}, sampled(21))[0];
      EXPECT_EQ(together[i].tokens, alone.tokens) << fam << " prompt " << i;
      EXPECT_EQ(together[i].text, alone.text) << fam << " prompt " << i;
    }
  }
}

TEST_F(Generate, TheContextEndsASequence) {
  GenerateOptions o;
  o.max_new_tokens = 1000;
  const Generation g = run("llama", {"abc"}, o)[0];
  EXPECT_EQ(g.finish, Finish::Context);
  EXPECT_EQ(std::ssize(g.tokens), test::lm_family("llama").max_seq - 3);
}

TEST_F(Generate, StreamedPiecesMakeTheText) {
  GenerateOptions o = sampled(2);
  o.stop = {"never in this text"};  // held back 17 bytes at a time, then flushed at the end
  ModelConfig cfg = test::lm_family("gpt2");
  cfg.vocab_size = tok->vocab_size();
  CpuBackend cpu(1);
  Model m(cfg, cpu);
  m.init_parameters(11);
  const auto ids = encode_prompts(*tok, {"abc"}, cfg.max_seq);
  const GenerationPlan p = plan_generation(ids, o.max_new_tokens, cfg.max_seq);
  m.plan(p.batch, p.prompt_seq, p.kv_capacity);
  std::string streamed;
  GenerationSpeed speed;
  const auto g = generate(
      m, *tok, ids, o, [&](size_t, std::string_view s) { streamed += s; }, &speed);
  EXPECT_EQ(streamed, g[0].text);
  EXPECT_EQ(speed.prefill_tokens, 3);
  EXPECT_EQ(speed.decode_tokens, std::ssize(g[0].tokens) - 1);
}

// Probabilities 0.5, 0.3, 0.2: top-k 2 renormalises to 0.625 and 0.375, from which top-p 0.6
// keeps the first alone (of all three it would need two: 0.5 < 0.6).
TEST(SampleToken, TopPIsTakenFromWhatTopKKept) {
  const std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};
  SamplingOptions k2{1.0, 2, 1.0, 5}, k2p{1.0, 2, 0.6, 5}, p6{1.0, 0, 0.6, 5};
  int counts[3] = {0, 0, 0}, nucleus_of_all = 0;
  const int draws = 4000;
  for (int d = 0; d < draws; ++d) {
    ++counts[sample_token(logits, k2, static_cast<uint64_t>(d))];
    EXPECT_EQ(sample_token(logits, k2p, static_cast<uint64_t>(d)), 0);
    const int32_t t = sample_token(logits, p6, static_cast<uint64_t>(d));
    EXPECT_LT(t, 2);
    nucleus_of_all += t == 1;
  }
  EXPECT_EQ(counts[2], 0);
  // 4000 draws at 0.625: standard deviation 0.0077; 0.03 is about four of them.
  EXPECT_NEAR(counts[0] / static_cast<double>(draws), 0.625, 0.03);
  EXPECT_NEAR(nucleus_of_all / static_cast<double>(draws), 0.375, 0.03);
}

TEST(EncodePrompts, RefusesAnEmptyOrTooLongPrompt) {
  const auto tok = CharTokenizer::train({std::string_view("ab")});
  EXPECT_THROW(encode_prompts(*tok, {"ab", ""}, 8), InputError);
  EXPECT_THROW(encode_prompts(*tok, {"abababababab"}, 8), InputError);
  EXPECT_THROW(encode_prompts(*tok, {}, 8), InputError);
  EXPECT_EQ(encode_prompts(*tok, {"ab"}, 8).size(), 1u);
}

}  // namespace
}  // namespace hwt
