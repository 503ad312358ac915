#include "model/tt_embedding.h"

#include <fmt/format.h>

#include "model/tt_linear.h"

namespace hwt {

TtEmbedding::TtEmbedding(ParamStore& ps, const std::string& name, const TtFactors& f, float std) {
  std::vector<int64_t> ranks{1};
  ranks.insert(ranks.end(), f.ranks.begin(), f.ranks.end());
  ranks.push_back(1);
  const float core_std = static_cast<float>(tt_core_std(ranks, std));
  for (size_t k = 0; k < f.in.size(); ++k)
    cores_.push_back(ps.add(fmt::format("{}.core{}", name, k + 1),
                            Shape{ranks[k], f.in[k], f.out[k], ranks[k + 1]}, true, Init::Normal,
                            core_std));
}

void TtEmbedding::forward(const StepContext& c, Tensor ids, Tensor pos, Tensor out) const {
  TtEmbeddingFwd a{ids, {}, pos, out, c.seq};
  for (ParamStore::Handle h : cores_) a.cores.push_back(c.params.compute(h));
  c.backend.tt_embedding_forward(a);
}

void TtEmbedding::backward(const StepContext& c, Tensor ids, Tensor d_out, Tensor d_pos) const {
  TtEmbeddingBwd a{ids, d_out, {}, {}, d_pos, c.seq};
  for (ParamStore::Handle h : cores_) {
    a.cores.push_back(c.params.compute(h));
    a.d_cores.push_back(c.params.grad(h));
  }
  c.backend.tt_embedding_backward(a);
}

}  // namespace hwt
