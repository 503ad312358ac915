// Tensor-train layers (model.tt, issue 14): the TT linear layer and the TTM token table against
// the dense layers built from their reconstructed matrices, finite differences on the cores, the
// planner's FLOPs against the trace, the initialisation's variance, config errors, parameter
// counts and a whole TT model that learns.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "backend/trace/trace_backend.h"
#include "backend/ttm_table.h"
#include "cli_util.h"
#include "config/run_config.h"
#include "core/error.h"
#include "model/model.h"
#include "model/tt_linear.h"
#include "model/tt_svd.h"
#include "test_util.h"
#include "train/checkpoint.h"
#include "train/compress.h"
#include "train/inference.h"
#include "train/trainer.h"

namespace hwt {
namespace {

using test::randn;
using test::rel_err;

// One TtLinear on a backend, with its parameters and activations.
struct TtLinearRig {
  Backend& be;
  ParamStore ps;
  ActivationArena arena;
  TtLinear lin;
  int64_t rows;

  TtLinearRig(Backend& backend, const TtChain& chain, int64_t n_rows, float std = 0.5f)
      : be(backend), rows(n_rows) {
    lin = TtLinear(ps, "t", chain, true, std);
    ps.allocate(be, DType::F32);
    ps.initialize(11);
    lin.plan(arena, DType::F32, rows);
    arena.allocate(be);
  }
  StepContext context() {
    return StepContext{be, ps, arena, DType::F32, rows, 1, true, false, 0, {}, nullptr, {}, {}};
  }
  ParamStore::Handle bias() const { return ps.infos().size() - 1; }
  std::vector<std::vector<double>> cores() {
    std::vector<std::vector<double>> out;
    for (ParamStore::Handle h : lin.cores()) {
      std::vector<float> v(static_cast<size_t>(ps.param(h).numel()));
      be.download(v.data(), ps.param(h));
      out.push_back(test::to_double(v));
    }
    return out;
  }
};

// y = x·Wᵀ + b in double.
std::vector<double> dense_forward(const std::vector<double>& w, const std::vector<float>& b,
                                  const std::vector<float>& x, int64_t rows, int64_t in,
                                  int64_t out) {
  std::vector<double> y(static_cast<size_t>(rows * out));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double s = b[o];
      for (int64_t i = 0; i < in; ++i) s += x[r * in + i] * w[o * in + i];
      y[r * out + o] = s;
    }
  return y;
}

// Forward against the dense layer of the reconstructed matrix; backward (input gradient and
// every core gradient) against finite differences of that dense layer in the cores.
void check_against_dense(const TtChain& chain, int64_t rows, bool factored) {
  auto cpu = make_cpu_backend(1);
  TtLinearRig rig(*cpu, chain, rows);
  ASSERT_EQ(rig.lin.contraction().factored, factored) << describe(chain, rig.lin.contraction());
  const int64_t in = chain.in_dim(), out = chain.out_dim();
  test::TensorPool pool(*cpu);
  const std::vector<float> b = randn(out, 3), xh = randn(rows * in, 4), dyh = randn(rows * out, 5);
  cpu->upload(rig.ps.param(rig.bias()), b.data());
  const Tensor x = pool.f32(Shape{rows, in}, xh), y = pool.poisoned(Shape{rows, out});
  const StepContext c = rig.context();
  rig.lin.forward(c, x, y);
  const auto cores = rig.cores();
  const std::vector<double> w = tt_merge(cores, chain.factors);
  EXPECT_LT(rel_err(pool.read(y), dense_forward(w, b, xh, rows, in, out)), 1e-5);

  rig.ps.zero_grads();
  const Tensor dy = pool.f32(Shape{rows, out}, dyh), dx = pool.poisoned(Shape{rows, in});
  rig.lin.backward(c, x, dy, dx);
  std::vector<double> dx_want(static_cast<size_t>(rows * in), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o)
      for (int64_t i = 0; i < in; ++i) dx_want[r * in + i] += dyh[r * out + o] * w[o * in + i];
  EXPECT_LT(rel_err(pool.read(dx), dx_want), 1e-5);
  for (size_t k = 0; k < cores.size(); ++k) {
    const auto loss = [&](const std::vector<double>& core) {
      auto changed = cores;
      changed[k] = core;
      const auto yk = dense_forward(tt_merge(changed, chain.factors), b, xh, rows, in, out);
      double s = 0;
      for (size_t i = 0; i < yk.size(); ++i) s += yk[i] * dyh[i];
      return s;
    };
    EXPECT_LT(rel_err(pool.read(rig.ps.grad(rig.lin.cores()[k])),
                      test::numeric_grad(loss, cores[k], 1e-4)),
              1e-4)
        << "core " << k + 1;
  }
}

TEST(TtLinear, FactoredEqualsDenseLayerOfItsMatrix) {
  // 12 -> 6 through rank 2 in the middle: the bi-directional (x·L'ᵀ)·R'ᵀ flow.
  check_against_dense(tt_linear_chain({2, 3}, {3, 2, 2}, {2, 2, 3, 2}), 5, true);
}

TEST(TtLinear, SingleCoreSidesAndDensePlan) {
  check_against_dense(tt_linear_chain({6}, {4}, {3}), 4, true);
  // Ranks above the dimensions: forming W costs less than going through the middle rank.
  check_against_dense(tt_linear_chain({2, 2}, {2, 2}, {4, 8, 4}), 64, false);
}

TEST(TtLinear, TracedFlopsEqualThePlannersCount) {
  for (const int64_t rows : {1, 32, 1024}) {
    const TtChain chain = tt_linear_chain({12, 8, 8}, {8, 8, 12}, {10, 10, 10, 10, 10});
    TraceBackend trace;
    TtLinearRig rig(trace, chain, rows);
    const StepContext c = rig.context();
    ActivationArena io;  // shapes only: the trace reads no data
    const auto sx = io.reserve(DType::F32, rows * chain.in_dim());
    const auto sy = io.reserve(DType::F32, rows * chain.out_dim());
    const auto sdx = io.reserve(DType::F32, rows * chain.in_dim());
    io.allocate(trace);
    trace.clear();
    const Tensor x = io.view(sx, Shape{rows, chain.in_dim()});
    const Tensor y = io.view(sy, Shape{rows, chain.out_dim()});
    const Tensor dx = io.view(sdx, Shape{rows, chain.in_dim()});
    rig.lin.forward(c, x, y);
    double forward = 0;
    for (const OpRecord& r : trace.workload().ops) forward += r.gemm_flops();
    rig.lin.backward(c, x, y, dx);
    double all = 0;
    for (const OpRecord& r : trace.workload().ops) all += r.gemm_flops();
    const TtPlan& p = rig.lin.contraction();
    EXPECT_DOUBLE_EQ(forward, p.forward_flops) << rows;
    EXPECT_DOUBLE_EQ(all - forward, p.backward_flops) << rows;
    // 768 x 768 at rank 10: from the paper's 32 rows on, far below the dense layer's
    // 2·rows·768² forward FLOPs (a single row pays mostly for merging the cores).
    if (rows >= 32) {
      EXPECT_LT(p.forward_flops, 0.1 * 2.0 * static_cast<double>(rows) * 768 * 768);
    }
  }
}

TEST(TtLinear, PlannerPrefersFewerFlopsThenSmallerIntermediates) {
  const TtChain chain = tt_linear_chain({12, 8, 8}, {8, 8, 12}, {10, 10, 10, 10, 10});
  const TtPlan p = plan_tt_linear(chain, 32);
  EXPECT_TRUE(p.factored);
  // Merging the out cores from the small end first is cheaper: G3·… never meets a 12·8 block
  // twice. Every merge of the chosen order builds a contiguous run, children first.
  for (size_t i = 0; i < p.merges.size(); ++i) {
    const TtMerge& m = p.merges[i];
    EXPECT_LE(m.first, m.split);
    EXPECT_LT(m.split, m.last);
  }
  EXPECT_NE(describe(chain, p).find("factored"), std::string::npos);
}

TEST(TtLinear, InitialisationKeepsTheDenseVariance) {
  // var(W) = Π r_k · σ^{2D}: measured over the merged matrices of several initialisations.
  const TtChain chain = tt_linear_chain({4, 8}, {8, 4}, {6, 5, 6});
  const double std = 0.02;
  auto cpu = make_cpu_backend(1);
  double sum_sq = 0, count = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    ParamStore ps;
    TtLinear lin(ps, "w", chain, false, static_cast<float>(std));
    ps.allocate(*cpu, DType::F32);
    ps.initialize(seed);
    std::vector<std::vector<double>> cores;
    for (ParamStore::Handle h : lin.cores()) {
      std::vector<float> v(static_cast<size_t>(ps.param(h).numel()));
      cpu->download(v.data(), ps.param(h));
      cores.push_back(test::to_double(v));
    }
    for (double w : tt_merge(cores, chain.factors)) sum_sq += w * w, ++count;
  }
  EXPECT_NEAR(std::sqrt(sum_sq / count) / std, 1.0, 0.1);
}

TEST(TtSvd, RecoversATensorOfKnownTtRanksExactly) {
  const std::vector<int64_t> modes{4, 6, 5, 3}, ranks{1, 3, 4, 2, 1};
  std::vector<std::vector<double>> cores;
  for (size_t k = 0; k < modes.size(); ++k)
    cores.push_back(test::to_double(randn(ranks[k] * modes[k] * ranks[k + 1], 40 + k)));
  const std::vector<double> w = tt_merge(cores, modes);
  const auto back = tt_svd(w, modes, {3, 4, 2});
  EXPECT_LT(rel_err(tt_merge(back, modes), w), 1e-12);
  // Higher caps pad with zeros and change nothing; lower ones lose what they cut.
  EXPECT_LT(rel_err(tt_merge(tt_svd(w, modes, {5, 9, 4}), modes), w), 1e-12);
  EXPECT_GT(rel_err(tt_merge(tt_svd(w, modes, {2, 2, 2}), modes), w), 1e-3);
  EXPECT_EQ(tt_svd(w, modes, {5, 9, 4})[1].size(), 5u * 6 * 9);
}

TEST(TtEmbedding, RowsAndCoreGradientsMatchTheDenseTable) {
  // A 4·3 = 12-row table of 2·3 = 6 columns, ranks 1-3-1.
  const std::vector<int64_t> vocab{4, 3}, hidden{2, 3}, ranks{1, 3, 1};
  auto cpu = make_cpu_backend(2);
  test::TensorPool pool(*cpu);
  std::vector<std::vector<float>> hosts;
  std::vector<Tensor> cores, grads;
  for (size_t k = 0; k < vocab.size(); ++k) {
    const Shape s{ranks[k], vocab[k], hidden[k], ranks[k + 1]};
    hosts.push_back(randn(s.numel(), 20 + k));
    cores.push_back(pool.f32(s, hosts.back()));
    grads.push_back(pool.zeros(s));
  }
  const TtmTable t = ttm_table(cores);
  // The dense table from the cores (double): row (v0, v1), column (h0, h1).
  const auto table = [&](const std::vector<std::vector<double>>& g) {
    std::vector<double> out(static_cast<size_t>(t.rows() * t.cols()));
    for (int64_t v0 = 0; v0 < 4; ++v0)
      for (int64_t v1 = 0; v1 < 3; ++v1)
        for (int64_t h0 = 0; h0 < 2; ++h0)
          for (int64_t h1 = 0; h1 < 3; ++h1) {
            double s = 0;
            for (int64_t a = 0; a < 3; ++a)
              s += g[0][(v0 * 2 + h0) * 3 + a] * g[1][(a * 3 + v1) * 3 + h1];
            out[(v0 * 3 + v1) * 6 + h0 * 3 + h1] = s;
          }
    return out;
  };
  std::vector<std::vector<double>> g{test::to_double(hosts[0]), test::to_double(hosts[1])};
  const std::vector<int32_t> ids{5, 0, 11, 5, 7, 3};
  const int64_t rows = 6, seq = 3;
  const std::vector<float> pos = randn(seq * 6, 30), dout = randn(rows * 6, 31);
  const Tensor out = pool.poisoned(Shape{rows, 6}), dpos = pool.zeros(Shape{seq, 6});
  const Tensor id_t = pool.i32(Shape{rows}, ids), pos_t = pool.f32(Shape{seq, 6}, pos);
  cpu->tt_embedding_forward({id_t, cores, pos_t, out, seq});
  std::vector<double> want;
  const auto dense = table(g);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < 6; ++j) want.push_back(dense[ids[r] * 6 + j] + pos[(r % seq) * 6 + j]);
  EXPECT_LT(rel_err(pool.read(out), want), 1e-6);

  cpu->tt_embedding_backward({id_t, pool.f32(Shape{rows, 6}, dout), cores, grads, dpos, seq});
  for (size_t k = 0; k < 2; ++k) {
    const auto loss = [&](const std::vector<double>& core) {
      auto changed = g;
      changed[k] = core;
      const auto d = table(changed);
      double s = 0;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < 6; ++j) s += d[ids[r] * 6 + j] * dout[r * 6 + j];
      return s;
    };
    EXPECT_LT(rel_err(pool.read(grads[k]), test::numeric_grad(loss, g[k])), 1e-6) << k;
  }
  std::vector<double> dpos_want(seq * 6, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < 6; ++j) dpos_want[(r % seq) * 6 + j] += dout[r * 6 + j];
  EXPECT_LT(rel_err(pool.read(dpos), dpos_want), 1e-6);
}

TEST(TtConfig, BadFactorisationsAreConfigErrors) {
  const auto error = [](std::vector<std::string> sets) {
    try {
      load_run_config("", sets);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::vector<std::string> ffn{"model.hidden=32", "model.ffn=64"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), ffn.begin(), ffn.end());
    return more;
  };
  EXPECT_EQ(
      error(with({"model.tt.ffn.in=4,8", "model.tt.ffn.out=8,8", "model.tt.ffn.ranks=2,2,2"})),
      "no error");
  EXPECT_EQ(
      error(with({"model.tt.ffn.in=4,4", "model.tt.ffn.out=8,8", "model.tt.ffn.ranks=2,2,2"})),
      "config model.tt.ffn.in=[4, 4] multiplies to 16, not model.hidden=32");
  EXPECT_EQ(
      error(with({"model.tt.ffn.in=4,8", "model.tt.ffn.out=8,8", "model.tt.ffn.ranks=2,0,2"})),
      "config model.tt.ffn.ranks=[2, 0, 2] has a rank below 1");
  EXPECT_EQ(error(with({"model.tt.ffn.in=4,8", "model.tt.ffn.out=8,8", "model.tt.ffn.ranks=2,2"})),
            "config model.tt.ffn.ranks=[2, 2] has 2 ranks; its 4 cores need 3");
  EXPECT_EQ(error(with({"model.tt.ffn.in=4,8", "model.tt.ffn.ranks=2"})),
            "config model.tt.ffn: in and out factors must both be given (with ranks)");
  EXPECT_EQ(error(with({"model.tt.embedding.in=10,10", "model.tt.embedding.out=32",
                        "model.tt.embedding.ranks=4"})),
            "config model.tt.embedding.in=[10, 10] and .out=[32] need one factor per core each");
  EXPECT_EQ(error(with({"model.tt.attention.in=a,b"})),
            "--set model.tt.attention.in: expected integers separated by commas, got 'a,b'");
}

// The paper's ATIS shapes at the shipped example's scale: every TT layer holds its cores only.
TEST(TtModel, ParameterCountsAreTheTensorTrains) {
  RunConfig c = load_run_config("tt_tiny", {});
  c.model.vocab_size = 60;
  c.model.num_labels = 3;
  auto cpu = make_cpu_backend(1);
  Model tt(c.model, *cpu);
  ModelConfig dense_cfg = c.model;
  dense_cfg.tt = {};
  Model dense(dense_cfg, *cpu);
  const auto cores = [](const std::vector<int64_t>& f, const std::vector<int64_t>& r) {
    std::vector<int64_t> ranks{1};
    ranks.insert(ranks.end(), r.begin(), r.end());
    ranks.push_back(1);
    int64_t n = 0;
    for (size_t k = 0; k < f.size(); ++k) n += ranks[k] * f[k] * ranks[k + 1];
    return n;
  };
  const TtConfig& t = c.model.tt;
  const auto cat = [](std::vector<int64_t> a, const std::vector<int64_t>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  std::vector<int64_t> qkv_out = t.attention.out;
  qkv_out[0] *= 3;
  int64_t emb = 0;
  {
    std::vector<int64_t> r{1};
    r.insert(r.end(), t.embedding.ranks.begin(), t.embedding.ranks.end());
    r.push_back(1);
    for (size_t k = 0; k < t.embedding.in.size(); ++k)
      emb += r[k] * t.embedding.in[k] * t.embedding.out[k] * r[k + 1];
  }
  const int64_t h = c.model.hidden, f = c.model.ffn;
  // The shipped ranks are uniform, so the second feed-forward layer's swapped ranks are the same.
  const int64_t tt_block = cores(cat(qkv_out, t.attention.in), t.attention.ranks) +
                           cores(cat(t.attention.out, t.attention.in), t.attention.ranks) +
                           cores(cat(t.ffn.out, t.ffn.in), t.ffn.ranks) +
                           cores(cat(t.ffn.in, t.ffn.out), t.ffn.ranks);
  const int64_t dense_block = 3 * h * h + h * h + 2 * h * f;
  const int64_t vocab_rows = 60;
  EXPECT_EQ(dense.params().parameters() - tt.params().parameters(),
            c.model.layers * (dense_block - tt_block) + vocab_rows * h - emb);
}

TEST(TtModel, TinyTtModelLearnsOnTheCpu) {
  test::TempDir dir("tt_learns");
  dir.write("train.tsv", test::tiny_sentiment_tsv(400, 7));
  RunConfig c = test::tiny_tsv_classifier(dir);
  const RunConfig shipped = load_run_config("tt_tiny", {});
  c.model.tt = shipped.model.tt;
  c.train.epochs = 6;
  c.optim.warmup_steps = 5;
  c.optim.lr = 3e-3;
  const nlohmann::json run = train({c, dir / "out", "", false});
  std::istringstream lines(test::slurp(dir.path() / "out" / "metrics.jsonl"));
  std::vector<double> losses;
  for (std::string l; std::getline(lines, l);) {
    const auto j = nlohmann::json::parse(l);
    if (!j.contains("split")) losses.push_back(j["loss"].get<double>());
  }
  ASSERT_GT(losses.size(), 4u);
  EXPECT_LT(losses.back(), 0.7 * losses.front());
  EXPECT_GT(run["results"]["test"]["accuracy"].get<double>(), 0.7);
}

}  // namespace
}  // namespace hwt

namespace hwt {
namespace {

TEST(TtCompress, FullRankCapsReproduceTheDenseMatrices) {
  test::TempDir dir("tt_compress");
  dir.write("train.tsv", test::tiny_sentiment_tsv(100, 3));
  RunConfig c = test::tiny_tsv_classifier(dir);
  c.train.max_steps = 2;
  train({c, dir / "dense", "", false});
  // fc1's chain has modes 8·8·4·8 and fc2's 4·8·8·8: these caps hold every unfolding's rank.
  dir.write("full.toml", "[model.tt.ffn]\nin = [4, 8]\nout = [8, 8]\nranks = [8, 32, 8]\n");
  const auto full = compress_checkpoint(dir / "dense/checkpoint.safetensors", dir / "full.toml",
                                        dir / "tt.safetensors");
  ASSERT_EQ(full.size(), 4u);  // fc1 and fc2 of two blocks
  for (const CompressedLayer& l : full) {
    EXPECT_LT(l.relative_error, 1e-6) << l.name;
    EXPECT_EQ(l.dense_params, 32 * 64) << l.name;
  }
  const LoadedModel tt = load_model(Checkpoint(dir / "tt.safetensors"), DeviceChoice::Cpu, 1, 1);
  EXPECT_EQ(tt.config.model.tt.ffn.ranks, (std::vector<int64_t>{8, 32, 8}));
  dir.write("low.toml", "[model.tt.ffn]\nin = [4, 8]\nout = [8, 8]\nranks = [2, 2, 2]\n");
  for (const CompressedLayer& l : compress_checkpoint(dir / "dense/checkpoint.safetensors",
                                                      dir / "low.toml", dir / "low.safetensors"))
    EXPECT_GT(l.relative_error, 0.1) << l.name;
}

}  // namespace
}  // namespace hwt
