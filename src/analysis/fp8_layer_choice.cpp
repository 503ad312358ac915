#include "analysis/fp8_layer_choice.h"

#include <fmt/format.h>

#include "analysis/fp8_choice.h"
#include "analysis/shape_advisor.h"
#include "workload/trace_step.h"

namespace hwt {
namespace {

// Whether the group holds a product of `layer`: its scope is the layer's or one around it
// ("layers.*.mlp" holds "layers.3.mlp.fc1"), and the product's role and size are the group's.
bool holds(const StepGemm& g, const std::string& layer_scope, GemmRole role, int64_t m, int64_t n,
           int64_t k) {
  const bool scoped = layer_scope == g.scope || layer_scope.starts_with(g.scope + ".");
  return scoped && g.role == role && g.shape.m == m && g.shape.n == n && g.shape.k == k;
}

// What a run with train.fp8_products = "all" is told in place of the choice.
std::vector<std::string> every_product_note() {
  return {
      "fp8: train.fp8_products = \"all\": every linear product whose dimensions allow it "
      "runs in fp8, gaining or not"};
}

}  // namespace

std::vector<std::string> choose_fp8_products(const std::vector<StepGemm>& gemms,
                                             const GemmModel& fp8, const GemmModel& bf16,
                                             int64_t rows, std::vector<Fp8Layer>& layers) {
  std::vector<std::string> notes;
  std::vector<bool> noted(gemms.size(), false);
  for (Fp8Layer& l : layers) {
    const std::string scope = generic_scope(l.name);
    // Each product, as the linear ops run it (backend/gemm.h): forward x·wᵀ, input grad dy·w,
    // weight grad dyᵀ·x.
    const struct {
      bool* flag;
      GemmRole role;
      int64_t m, n, k;
    } products[] = {{&l.forward, GemmRole::LinearForward, rows, l.out, l.in},
                    {&l.input_grad, GemmRole::LinearInputGrad, rows, l.in, l.out},
                    {&l.weight_grad, GemmRole::LinearWeightGrad, l.out, l.in, rows}};
    for (const auto& p : products)
      for (size_t i = 0; i < gemms.size(); ++i) {
        if (!holds(gemms[i], scope, p.role, p.m, p.n, p.k)) continue;
        const Fp8Choice c = choose_fp8(gemms[i], fp8, bf16);
        *p.flag = c.fp8;
        if (!c.fp8 && !noted[i]) {
          noted[i] = true;
          notes.push_back(fmt::format("fp8: {} {} ({} x {} x {}) stays in bf16: {}", gemms[i].scope,
                                      role_label(p.role), p.m, p.n, p.k, c.reason));
        }
        break;
      }
  }
  return notes;
}

Fp8Chooser fp8_chooser(const GpuSpec& gpu) {
  return [gpu](const RunConfig& config, const std::string&, int64_t batch, int64_t seq,
               std::vector<Fp8Layer>& layers) {
    if (config.train.fp8_products == Fp8Products::All) return every_product_note();
    return choose_fp8_products(step_gemms(trace_at(step_spec(config, batch, seq), Precision::Fp8)),
                               GemmModel(gpu, Precision::Fp8), GemmModel(gpu, Precision::Bf16),
                               batch * seq, layers);
  };
}

Fp8Chooser fp8_chooser(GpuCatalog catalog) {
  return [catalog = std::move(catalog)](const RunConfig& config, const std::string& device,
                                        int64_t batch, int64_t seq, std::vector<Fp8Layer>& layers) {
    if (config.train.fp8_products == Fp8Products::All) return every_product_note();
    const GpuSpec* gpu = catalog.match_device(device);
    if (!gpu)
      return std::vector<std::string>{fmt::format(
          "fp8: the GPU {} is not in the catalog, so every linear layer whose sizes allow it "
          "runs in fp8 (no shape model to keep small GEMMs in bf16)",
          device)};
    return fp8_chooser(*gpu)(config, device, batch, seq, layers);
  };
}

}  // namespace hwt
