#include "backend/attention_paths.h"

#include "core/integer_math.h"

namespace hwt {

std::string_view attention_slow_path(DType dt, bool tf32, int64_t head_dim) {
  if (dt == DType::F32) {
    if (!tf32) return "fp32 attention stays exact IEEE fp32 (train.precision tf32 allows TF32)";
    if (head_dim > 128) return "TF32 attention kernels take head sizes up to 128";
    return {};
  }
  if (dt != DType::BF16 && dt != DType::F16) return "the activations are not a float type";
  if (head_dim > 256) return "the head size is above 256";
  return {};
}

int64_t attention_kernel_head_dim(DType dt, int64_t head_dim) {
  return round_up(head_dim, 16 / static_cast<int64_t>(dtype_size(dt)));
}

}  // namespace hwt
