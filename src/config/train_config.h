// How to train: the config keys under [train] and [optim].
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/fp8_scale_rule.h"
#include "core/precision.h"

namespace hwt {

enum class DeviceChoice : uint8_t { Auto, Cpu, Cuda };
enum class OptimizerKind : uint8_t { AdamW, Adan, Sgd };
enum class Schedule : uint8_t { Constant, Linear, Cosine };
enum class GradReduce : uint8_t { Fp32, Bf16 };
// Activation recomputation, a ladder: each mode recomputes in the backward, just before a block's
// gradients, what the one before it does and more. NormAct: the norms' outputs and the MLP's
// activation; Attention: also the attention sublayer (q, k, v and its output); Full: the whole
// block, keeping only its output (docs/training.md).
enum class Recompute : uint8_t { None, NormAct, Attention, Full };

constexpr std::string_view recompute_name(Recompute r) {
  switch (r) {
    case Recompute::None:
      return "none";
    case Recompute::NormAct:
      return "norm_act";
    case Recompute::Attention:
      return "attention";
    case Recompute::Full:
      return "full";
  }
  return "?";
}

// Which linear products train.precision = "fp8" runs in fp8: those the GPU's shape model expects
// to gain (analysis/fp8_layer_choice.h), or every one whose dimensions allow it.
enum class Fp8Products : uint8_t { Chosen, All };

struct TrainConfig {
  DeviceChoice device = DeviceChoice::Auto;
  int64_t threads = 0;                    // CPU threads; 0: all cores
  Precision precision = Precision::Fp32;  // fp32, tf32, bf16, fp16 or fp8
  // fp8's delayed scaling (train/fp8_scaling.h): steps of amax history per tensor, which amax of
  // it sets the scale, and the headroom 2^margin left below the format's largest value.
  int64_t fp8_history = 1024;
  AmaxAlgorithm fp8_amax = AmaxAlgorithm::Max;
  int64_t fp8_margin = 0;
  Fp8Products fp8_products = Fp8Products::Chosen;
  bool gemm_autotune = false;  // GPU: time cuBLASLt's candidates per GEMM shape, keep the fastest
  bool deterministic_attention = true;  // GPU: false sums dQ with atomics (faster, not bitwise)
  bool cuda_graph = false;  // GPU: each micro-batch's forward + backward as one CUDA graph launch
  Recompute recompute = Recompute::None;
  int64_t batch_size = 32;
  int64_t grad_accum = 1;
  int64_t epochs = 3;
  int64_t max_steps = 0;  // 0: epochs decide
  double time_limit = 0;  // seconds of training; 0: none
  int64_t log_every = 10;
  int64_t eval_every = 0;           // steps; 0: once per epoch
  int64_t eval_batches = 0;         // 0: the whole validation set
  int64_t checkpoint_every = 0;     // steps; 0: only at the end
  int64_t early_stop_patience = 0;  // evaluations without improvement; 0: off
  double max_grad_norm = 1.0;       // 0: no clipping
  int64_t seed = 42;
  std::string freeze;        // parts not trained (train/freeze.h); empty: none
  bool telemetry = true;     // sample GPU/CPU power, energy and utilisation during the run
  bool tensorboard = false;  // also write the metrics as a TensorBoard event file
  // Data parallel (several processes, docs/data_parallel.md); batch_size is per rank.
  int64_t zero = 0;       // 1: optimizer state sharded across ranks (ZeRO stage 1)
  double bucket_mb = 25;  // gradients are all-reduced in buckets of about this size
  GradReduce grad_reduce = GradReduce::Fp32;  // dtype gradients are summed in across ranks
  double collective_timeout = 300;            // seconds before a stuck collective stops every rank
};

struct OptimConfig {
  OptimizerKind name = OptimizerKind::AdamW;
  double lr = 1e-3;
  double weight_decay = 0.01;
  double eps = 1e-8;
  double adamw_beta1 = 0.9, adamw_beta2 = 0.999;
  double adan_beta1 = 0.98, adan_beta2 = 0.92, adan_beta3 = 0.99;
  bool adan_no_prox = false;
  double sgd_momentum = 0.9;
  bool sgd_nesterov = false;
  Schedule schedule = Schedule::Linear;
  int64_t warmup_steps = 30;
  double min_lr_ratio = 0.0;  // final learning rate as a fraction of lr
};

}  // namespace hwt
