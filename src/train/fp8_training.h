// fp8 training (train.precision = "fp8"): for each linear layer that runs in fp8, the delayed
// scaling of its input and weight (E4M3) and of its output gradient (E5M2), one workspace that
// every layer's casts use in turn, each layer's transposed weight copy kept from its forward to
// its backward, and the model's Fp8Linears table pointing the layers at them.
// Activations stay in the model's dtype (bf16 on the GPU), master weights and optimizer state in
// fp32; only the GEMMs' operands are fp8.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/run_config.h"
#include "model/fp8_linears.h"
#include "model/model.h"
#include "train/fp8_scaling.h"

namespace hwt {

// One linear layer in fp8, named as its messages and metrics name it, its weight's stored size
// ([out, in]), and which of its products run in fp8.
struct Fp8Layer {
  ParamStore::Handle weight = 0;
  std::string name;
  int64_t out = 0, in = 0;
  bool forward = true, input_grad = true, weight_grad = true;
  bool any() const { return forward || input_grad || weight_grad; }
  // Whether the forward's cast keeps wᵀ for the input-grad product (Fp8Linear::w_t).
  bool keeps_w_t() const { return forward && input_grad; }
};

// Decides which products of `layers` run in fp8 in steps of batch × seq of a run of `config` on
// the GPU named `device`, setting their flags; returns lines saying what stays in bf16 and why.
// The shape model decides (analysis/fp8_layer_choice.h, above train/, hands one in).
using Fp8Chooser = std::function<std::vector<std::string>(
    const RunConfig& config, const std::string& device, int64_t batch, int64_t seq,
    std::vector<Fp8Layer>& layers)>;

// Every linear layer of `model` whose stored dimensions are multiples of 16 (what fp8 GEMMs
// take), all three products in fp8; named by the weight without ".weight" ("head.lm" for an LM
// head tied to the token embedding).
std::vector<Fp8Layer> fp8_layers(const Model& model);

// What one fp8 tensor's casts met: its scale, the amax of the step in progress, and the values
// saturated, flushed to zero and not finite since the figures were last taken.
struct Fp8TensorFigures {
  std::string name;  // "<layer>.x", "<layer>.w" or "<layer>.dy"
  float scale = 1.0f;
  Fp8Counts counts;
};

class Fp8Training {
 public:
  // Sets the model's table for the layers with a product in fp8; steps of up to max_rows rows
  // (batch × sequence).
  Fp8Training(Model& model, const Fp8ScalingOptions& o, std::vector<Fp8Layer> layers,
              int64_t max_rows);
  ~Fp8Training();
  Fp8Training(const Fp8Training&) = delete;
  Fp8Training& operator=(const Fp8Training&) = delete;

  const std::vector<Fp8Layer>& layers() const { return layers_; }
  // After each optimizer step: every tensor's scale from its history, on the device; with
  // `ranks` (data parallel) from the largest amax any rank saw, so the ranks' scales stay equal.
  void end_step(Communicator* ranks = nullptr);

  // Host reads (they synchronise). take_figures() starts the counts again from zero.
  std::vector<Fp8TensorFigures> take_figures();
  // A scale that collapsed, with the tensor and why (Fp8DelayedScaling::collapsed).
  std::optional<std::string> collapsed() const;

  // The scaling state a checkpoint keeps (the operands' then the gradients'); restore()
  // continues bit for bit where the saved run was.
  std::vector<float> state() const;
  void restore(const std::vector<float>& state);

 private:
  Model& model_;
  std::vector<Fp8Layer> layers_;
  Fp8DelayedScaling operands_;   // E4M3: per layer its x, then its w
  Fp8DelayedScaling gradients_;  // E5M2: per layer its dy
  DeviceBuffer workspace_;
  DeviceBuffer weights_t_;  // each layer's kept wᵀ (E4M3)
  Fp8Linears table_;
};

// A metrics.jsonl entry of taken figures: the smallest and largest scale, the counts summed over
// the tensors, and each tensor whose casts saturated, flushed or met non-finite values, with
// those counts and its scale.
nlohmann::json fp8_metrics(const std::vector<Fp8TensorFigures>& figures);

}  // namespace hwt
