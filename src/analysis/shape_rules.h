// Anthony et al.'s sizing rules checked against a model config: the dimensions that reach a
// GEMM should be multiples of 128 bytes (64 fp16/bf16 elements), never less than 16 bytes, and
// under tensor parallelism divide evenly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/model_config.h"
#include "core/precision.h"

namespace hwt {

enum class RuleSeverity : uint8_t {
  Invalid,  // does not divide: the config cannot be sharded this way
  Slow,     // under 16-byte alignment: cuBLAS falls back to much slower kernels
  Warn,     // aligned but not to 128 bytes or a tile: partial tiles or slower loads
};

std::string_view severity_name(RuleSeverity s);

struct RuleViolation {
  // "vocab", "hidden", "head_dim", "kv", "ffn", "tokens", "seq", "tensor_parallel"
  std::string rule;
  RuleSeverity severity = RuleSeverity::Warn;
  std::string message;
};

// tp: tensor-parallel degree the rules are checked for (1: none).
std::vector<RuleViolation> check_shape_rules(const ModelConfig& m, int64_t batch, int64_t seq,
                                             Precision p, int tp = 1);

}  // namespace hwt
