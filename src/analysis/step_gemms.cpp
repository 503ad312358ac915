#include "analysis/step_gemms.h"

#include <cctype>

namespace hwt {
namespace {

std::string generic_scope(const std::string& scope) {
  if (scope.rfind("layers.", 0) != 0) return scope;
  size_t end = 7;
  while (end < scope.size() && std::isdigit(static_cast<unsigned char>(scope[end]))) ++end;
  return "layers.*" + scope.substr(end);
}

struct Layout {
  std::string role;
  bool trans_a, trans_b;
};

// The trace records A·B dims; the layouts follow how the operands are stored: activations and
// gradients as tokens×features, weights as out×in, q/k/v as seq×head_dim per (batch, head).
Layout layout_of(const OpRecord& op, size_t index, const GemmDims& g) {
  if (op.op == "linear_forward") return {"x.W^T", false, true};
  if (op.op == "linear_backward")
    return g.b == Operand::Weight ? Layout{"dy.W", false, false} : Layout{"dy^T.x", true, false};
  if (op.op == "attention_forward")
    return index == 0 ? Layout{"Q.K^T", false, true} : Layout{"P.V", false, false};
  if (op.op == "attention_backward") {
    static const Layout kBwd[] = {{"P^T.dO", true, false},
                                  {"dO.V^T", false, true},
                                  {"dS.K", false, false},
                                  {"dS^T.Q", true, false}};
    if (index < 4) return kBwd[index];
  }
  return {op.op, false, false};
}

}  // namespace

std::vector<StepGemm> step_gemms(const Workload& w) {
  std::vector<StepGemm> out;
  for (const OpRecord& op : w.ops) {
    for (size_t i = 0; i < op.gemms.size(); ++i) {
      const GemmDims& g = op.gemms[i];
      const Layout l = layout_of(op, i, g);
      StepGemm s;
      s.scope = generic_scope(op.scope);
      s.role = l.role;
      s.phase = op.phase;
      s.shape = {g.m, g.n, g.k, g.batch, l.trans_a, l.trans_b};
      s.count = 1;
      bool merged = false;
      for (StepGemm& o : out)
        if (o.scope == s.scope && o.role == s.role && o.phase == s.phase && o.shape == s.shape) {
          ++o.count;
          merged = true;
          break;
        }
      if (!merged) out.push_back(s);
    }
  }
  return out;
}

}  // namespace hwt
