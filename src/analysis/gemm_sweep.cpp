#include "analysis/gemm_sweep.h"

#include <map>

namespace hwt {
namespace {

class Grid {
 public:
  void add(const std::string& family, int64_t m, int64_t n, int64_t k, int64_t batch = 1,
           bool ta = false, bool tb = true) {
    size_t& i = per_family_[family];
    out_.push_back({family, {m, n, k, batch, ta, tb}, i % 2 == 1});
    ++i;
  }
  // The three GEMMs of a linear layer y = x.W^T with W out×in, over t tokens.
  void linear(const std::string& family, int64_t t, int64_t out, int64_t in) {
    add(family, t, out, in, 1, false, true);   // forward
    add(family, t, in, out, 1, false, false);  // input gradient dy.W
    add(family, out, in, t, 1, true, false);   // weight gradient dy^T.x
  }
  std::vector<SweepShape> take() { return std::move(out_); }

 private:
  std::vector<SweepShape> out_;
  std::map<std::string, size_t> per_family_;
};

}  // namespace

std::vector<SweepShape> sweep_grid() {
  Grid g;
  for (int64_t s : {256, 512, 1024, 2048, 3072, 4096, 6144, 8192}) g.add("square", s, s, s);
  // Transformer widths: QKV and FFN-up forward, FFN-down's three GEMMs.
  for (int64_t t : {2048, 8192, 16384})
    for (int64_t h : {512, 768, 1024, 1536, 2048, 2560, 3072, 4096, 5120}) {
      g.add("layer", t, 3 * h, h);
      g.add("layer", t, 4 * h, h);
      g.linear("layer", t, h, 4 * h);
    }
  // Widths off 128-byte and 16-byte multiples (Anthony et al.; K = 4090 in the H200 baseline).
  for (int64_t h : {768, 1024, 2048, 2560, 4096})
    for (int64_t d : {-6, 1, 2, 4, 8, 16, 24, 32, 40, 64})
      g.add("misaligned", 8192, 4 * (h + d), h + d);
  for (int64_t d : {1, 2, 3, 4, 8, 16, 32, 48}) g.linear("misaligned", 8192, 2048 + d, 2048);
  for (int64_t d : {1, 7, 63, 100}) g.add("rows", 8192 + d, 8192, 2048);
  // Vocabularies of real tokenizers: GPT-2's 50257 and its padding, LLaMA's 32000, BERT's 30522.
  for (int64_t h : {768, 2048})
    for (int64_t v : {50257, 50304, 32000, 32001, 30522, 51200}) g.linear("vocab", 8192, v, h);
  // Batched attention: scores Q.K^T and context P.V over batch × heads.
  for (int64_t bh : {64, 256})
    for (int64_t s : {512, 1024, 2048})
      for (int64_t d : {64, 80, 96, 128}) {
        g.add("attention", s, s, d, bh, false, true);
        g.add("attention", s, d, s, bh, false, false);
      }
  // SwiGLU-style widths near 8h/3 (Anthony et al.: 10922 vs 10944 at h = 4096).
  for (int64_t f : {10880, 10922, 10944, 11008, 11264}) {
    g.add("ffn", 8192, f, 4096);
    g.add("ffn", 8192, 4096, f, 1, false, false);
  }
  // Output tile counts around one and two waves of 132 SMs (128x256 tiles).
  for (int64_t m : {1536, 3072})
    for (int64_t n : {2560, 2816, 3072}) g.add("waves", m, n * m / 1536, 4096);
  // Small, skinny and long-K shapes: launch-, memory- and split-K-bound.
  const int64_t small[][3] = {{128, 128, 128},     {256, 1024, 256},  {1024, 64, 1024},
                              {64, 4096, 4096},    {16384, 2, 768},   {8, 768, 768},
                              {4096, 128, 4096},   {512, 512, 16384}, {768, 768, 16384},
                              {1024, 1024, 65536}, {2048, 2048, 256}, {32, 50304, 768}};
  for (const auto& s : small) g.add("small", s[0], s[1], s[2]);
  return g.take();
}

}  // namespace hwt
