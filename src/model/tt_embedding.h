// The token table as a tensor-train matrix (model.tt.embedding): only its cores are stored and
// trained; the backend looks rows up through them (TtEmbeddingFwd).
#pragma once

#include <string>
#include <vector>

#include "config/model_config.h"
#include "model/step_context.h"

namespace hwt {

class TtEmbedding {
 public:
  // f: the vocabulary (in) and hidden (out) factors and the ranks; the cores start normal with
  // the std that gives the table's entries variance std² (tt_core_std).
  TtEmbedding(ParamStore& ps, const std::string& name, const TtFactors& f, float std);
  // out = rows of ids, plus pos[r % seq] (pos optional).
  void forward(const StepContext& c, Tensor ids, Tensor pos, Tensor out) const;
  // Accumulates the core gradients of d_out's rows, and d_pos.
  void backward(const StepContext& c, Tensor ids, Tensor d_out, Tensor d_pos) const;

 private:
  std::vector<ParamStore::Handle> cores_;
};

}  // namespace hwt
