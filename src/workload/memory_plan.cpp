#include "workload/memory_plan.h"

#include <cmath>
#include <map>

#include "backend/gemm.h"
#include "backend/trace/trace_backend.h"
#include "backend/ttm_table.h"
#include "train/run_setup.h"

namespace hwt {

std::string_view memory_stage_name(MemoryStage s) {
  switch (s) {
    case MemoryStage::Parameters:
      return "parameters";
    case MemoryStage::Gradients:
      return "gradients";
    case MemoryStage::OptimizerState:
      return "optimizer state";
    case MemoryStage::Activations:
      return "activations";
    case MemoryStage::Intermediates:
      return "intermediates";
  }
  return "?";
}

double MemoryRow::total() const {
  double t = 0;
  for (double b : bytes) t += b;
  return t;
}

namespace {

// The layer a parameter belongs to, named as the arena's owners: "layers.3.ln1" and
// "layers.3.attn.qkv.core1" are layers.3.attn, the rest of a block its mlp.
std::string layer_of(const std::string& param) {
  if (param.rfind("embed.", 0) == 0) return "embedding";
  if (param.rfind("layers.", 0) != 0) return "head";  // final_ln, head.*
  const size_t dot = param.find('.', 7);
  const std::string part = param.substr(dot + 1);
  const bool attn = part.rfind("ln1", 0) == 0 || part.rfind("attn", 0) == 0;
  return param.substr(0, dot + 1) + (attn ? "attn" : "mlp");
}

constexpr double kCudaMallocPage = 2u << 20;

// The backend scratch of the TT token table's backward: every row's slice gradients, f32
// (cuda_tt_embedding.cu on the GPU, a host vector on the CPU); 0 for a dense table.
size_t tt_embedding_scratch(const ParamStore& ps, int64_t rows) {
  std::vector<Tensor> cores;
  for (ParamStore::Handle h = 0; h < ps.infos().size(); ++h)
    if (ps.infos()[h].name.rfind("embed.tokens.core", 0) == 0) cores.push_back(ps.param(h));
  if (cores.empty()) return 0;
  const TtmTable t = ttm_table(cores);
  int64_t per_row = 0;
  for (size_t k = 0; k < t.cores(); ++k) per_row += t.slice(k);
  return static_cast<size_t>(rows * per_row) * 4;
}

}  // namespace

MemoryPlan plan_memory(const StepSpec& s) {
  check_step_shape(s);
  TraceBackend be;
  TrainingModel training(s.config, be, s.batch, s.seq);
  const Model& model = training.model();
  const ParamStore& ps = model.params();

  MemoryPlan plan;
  plan.precision = s.config.train.precision;
  const TtConfig& tt = s.config.model.tt;
  plan.tensor_train = tt.embedding.enabled() || tt.attention.enabled() || tt.ffn.enabled();
  plan.batch = s.batch;
  plan.seq = s.seq;
  plan.parameters = ps.parameters();

  std::vector<std::string> order;  // layers as the model builds them
  std::map<std::string, MemoryRow> rows;
  const auto row = [&](const std::string& layer) -> MemoryRow& {
    auto [it, added] = rows.try_emplace(layer, MemoryRow{layer, {}});
    if (added) order.push_back(layer);
    return it->second;
  };
  // Per stored element: the fp32 master plus the compute copy (when not fp32), its fp32
  // gradient and the optimizer's fp32 state buffers.
  const DType compute = activation_dtype(plan.precision);
  const double param_width = 4.0 + (compute == DType::F32 ? 0 : dtype_size(compute));
  const double state_width = 4.0 * static_cast<double>(training.optimizer().state().size());
  for (const ParamInfo& p : ps.infos()) {
    MemoryRow& r = row(layer_of(p.name));
    const double n = static_cast<double>(p.shape.numel());
    r[MemoryStage::Parameters] += n * param_width;
    r[MemoryStage::Gradients] += n * 4.0;
    r[MemoryStage::OptimizerState] += n * state_width;
  }
  for (const ActivationArena::Reservation& a : model.arena().reservations())
    row(a.owner)[a.use == ArenaUse::Activation ? MemoryStage::Activations
                                               : MemoryStage::Intermediates] +=
        static_cast<double>(a.bytes);

  std::vector<size_t> allocations = be.allocations();
  if (const size_t scratch = tt_embedding_scratch(ps, s.batch * s.seq)) {
    row("embedding")[MemoryStage::Intermediates] += static_cast<double>(scratch);
    allocations.push_back(scratch);
  }

  plan.total.layer = "total";
  for (const std::string& layer : order) {
    plan.layers.push_back(rows.at(layer));
    for (MemoryStage st : kMemoryStages) plan.total[st] += rows.at(layer)[st];
  }
  for (size_t b : allocations) {
    plan.allocated += static_cast<double>(b);
    const double pages = std::ceil(static_cast<double>(b) / kCudaMallocPage);
    plan.runtime.allocation_rounding += pages * kCudaMallocPage - static_cast<double>(b);
  }
  plan.other = plan.allocated - plan.total.total();
  plan.runtime.gemm_workspace = kGemmWorkspaceBytes;
  return plan;
}

namespace {

// Fills a capacity with the plan's stages that `keep` selects, in stage order.
template <class Keep>
BudgetCheck fill(const MemoryPlan& plan, double capacity, Keep keep) {
  BudgetCheck c;
  c.capacity = capacity;
  for (MemoryStage st : kMemoryStages) {
    if (!keep(st)) continue;
    c.needed += plan.total[st];
    if (!c.overflow && c.needed > capacity) c.overflow = st;
  }
  return c;
}

}  // namespace

BudgetCheck check_budget(const MemoryPlan& plan, double capacity) {
  return fill(plan, capacity, [](MemoryStage) { return true; });
}

std::string_view on_chip_memory_name(OnChipMemory m) {
  return m == OnChipMemory::Bram ? "BRAM" : "URAM";
}

OnChipMemory placed_in(MemoryStage s) {
  const bool step = s == MemoryStage::Activations || s == MemoryStage::Intermediates;
  return step ? OnChipMemory::Uram : OnChipMemory::Bram;
}

SplitBudgetCheck check_split_budget(const MemoryPlan& plan, double bram, double uram) {
  const auto in = [](OnChipMemory m) { return [m](MemoryStage s) { return placed_in(s) == m; }; };
  return {fill(plan, bram, in(OnChipMemory::Bram)), fill(plan, uram, in(OnChipMemory::Uram))};
}

}  // namespace hwt
