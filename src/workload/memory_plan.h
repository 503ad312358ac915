// The memory one training step of a run config needs, read from what hwt allocates: the
// ParamStore's flat buffers, the optimizer's state buffers and the ActivationArena's labelled
// reservations of a TrainingModel built on the trace backend (nothing is allocated), and the
// backend scratch of a TT token table's backward, per layer and per stage. `hwt memory` prints it;
// docs/tensor_train.md explains the stages.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workload/trace_step.h"

namespace hwt {

// In the order a budget fills: the model first, then what a step adds.
enum class MemoryStage : uint8_t {
  Parameters,
  Gradients,
  OptimizerState,
  Activations,
  Intermediates
};
inline constexpr std::array<MemoryStage, 5> kMemoryStages = {
    MemoryStage::Parameters, MemoryStage::Gradients, MemoryStage::OptimizerState,
    MemoryStage::Activations, MemoryStage::Intermediates};
std::string_view memory_stage_name(MemoryStage s);

struct MemoryRow {
  std::string layer;  // "embedding", "layers.3.attn", "layers.3.mlp", "head", "step"
  std::array<double, kMemoryStages.size()> bytes{};
  double& operator[](MemoryStage s) { return bytes[static_cast<size_t>(s)]; }
  double operator[](MemoryStage s) const { return bytes[static_cast<size_t>(s)]; }
  double total() const;
};

// What a GPU run holds beyond the plan: fixed amounts hwt knows of.
struct RuntimeMemory {
  double gemm_workspace = 0;       // the cuBLASLt workspace the CUDA backend allocates
  double allocation_rounding = 0;  // every planned buffer rounded up to the 2 MiB cudaMalloc page
  double total() const { return gemm_workspace + allocation_rounding; }
};

struct MemoryPlan {
  Precision precision = Precision::Fp32;
  bool tensor_train = false;  // any model.tt layer kind
  int64_t batch = 0, seq = 0, parameters = 0;
  std::vector<MemoryRow> layers;
  MemoryRow total;        // the layers summed
  double other = 0;       // allocated outside the table: gradient norm, fp16 loss scale
  double allocated = 0;   // all the plan allocates, backend scratch included: total + other
  RuntimeMemory runtime;  // added on a GPU
  double gpu_bytes() const { return allocated + runtime.total(); }
};

MemoryPlan plan_memory(const StepSpec& s);

// Whether the stages, accumulated in order, fit a capacity, and the first that does not.
struct BudgetCheck {
  double capacity = 0, needed = 0;
  std::optional<MemoryStage> overflow;  // none: it fits
};
BudgetCheck check_budget(const MemoryPlan& plan, double capacity);

// The two on-chip memories of Tian et al.'s FPGA (an Alveo U50: < 6 MB BRAM, 22.5 MB URAM).
// Placement rule: the model's state, which lives from step to step (parameters, gradients,
// optimizer state), in BRAM; what one step makes and drops (activations, intermediates) in the
// larger URAM. The paper trains one sequence per step with all of it on chip; its TT model
// state is small and its activations are not, so this is the split under which that fits.
enum class OnChipMemory : uint8_t { Bram, Uram };
inline constexpr std::array<OnChipMemory, 2> kOnChipMemories = {OnChipMemory::Bram,
                                                                OnChipMemory::Uram};
std::string_view on_chip_memory_name(OnChipMemory m);
OnChipMemory placed_in(MemoryStage s);

// check_budget per memory, each filled with the stages placed in it, in stage order.
struct SplitBudgetCheck {
  BudgetCheck bram, uram;
  const BudgetCheck& of(OnChipMemory m) const { return m == OnChipMemory::Bram ? bram : uram; }
  // The first stage, in stage order, that overflows its memory; none: both fit.
  std::optional<MemoryStage> overflow() const {
    return bram.overflow ? bram.overflow : uram.overflow;
  }
};
SplitBudgetCheck check_split_budget(const MemoryPlan& plan, double bram, double uram);

}  // namespace hwt
