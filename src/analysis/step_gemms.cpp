#include "analysis/step_gemms.h"

#include <cctype>

namespace hwt {

std::string generic_scope(const std::string& scope) {
  if (scope.rfind("layers.", 0) != 0) return scope;
  size_t end = 7;
  while (end < scope.size() && std::isdigit(static_cast<unsigned char>(scope[end]))) ++end;
  return "layers.*" + scope.substr(end);
}

std::vector<StepGemm> step_gemms(const Workload& w) {
  std::vector<StepGemm> out;
  for (const OpRecord& op : w.ops) {
    for (const GemmCall& g : op.gemms) {
      StepGemm s;
      static_cast<GemmCall&>(s) = g;
      s.scope = generic_scope(op.scope);
      s.phase = op.phase;
      s.count = 1;
      bool merged = false;
      for (StepGemm& o : out)
        if (o.scope == s.scope && o.phase == s.phase && static_cast<const GemmCall&>(o) == g) {
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
