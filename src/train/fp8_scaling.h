// Delayed scaling for fp8 training, the rule of NVIDIA Transformer Engine's DelayedScaling
// recipe, kept in the backend's memory for a group of fp8 tensors of one format (a GEMM operand or
// gradient each).
//
// Each tensor is cast with a scale chosen from the amaxes of earlier steps, since its own amax is
// known only once the cast has run: the casts (Fp8Cast) read scale(t) and raise amax(t), and
// after every step update() runs the backend's fp8_scale_update, which per tensor does
//   amax  = the largest amax in the last `history` steps ("max") or the latest ("most_recent")
//   scale = fp8_max(format) / amax / 2^margin, kept as it was where amax is 0 or not finite
// (core/fp8_scale_rule.h) without a host read, so a captured step can hold it.
// Transformer Engine's defaults (transformer_engine.common.recipe.DelayedScaling, releases 1.x
// to 2.x): history 1024, "max", margin 0, E4M3 in the forward and E5M2 for gradients ("HYBRID").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "core/fp8.h"
#include "core/fp8_scale_rule.h"
#include "dist/communicator.h"

namespace hwt {

// Floats from one scale inverse to the next: 16 bytes.
inline constexpr int64_t kScaleInvStride = 4;

struct Fp8ScalingOptions {
  int64_t history = 1024;  // steps of amax kept per tensor
  AmaxAlgorithm algorithm = AmaxAlgorithm::Max;
  int margin = 0;  // the scale leaves a headroom of 2^margin
};

class Fp8DelayedScaling {
 public:
  // A tensor of `format` per name (the names its messages use), each starting at scale 1 with
  // an empty history.
  Fp8DelayedScaling(Backend& backend, const Fp8ScalingOptions& o, Fp8Format format,
                    std::vector<std::string> names);

  int64_t tensors() const { return tensors_; }
  const std::vector<std::string>& names() const { return names_; }
  Fp8Format format() const { return format_; }
  const Fp8ScalingOptions& options() const { return o_; }

  // Tensor t's state in the backend's memory: the scale its casts multiply by, its inverse for
  // the GEMMs that read the cast (f32 [1] each), the amax this step's casts raised (f32 [1]), and
  // the saturated, flushed-to-zero and non-finite values its casts met so far (i32 [3]).
  Tensor scale(int64_t t) const;
  Tensor scale_inv(int64_t t) const;
  Tensor amax(int64_t t) const;
  Tensor counts(int64_t t) const;

  // Ends the step: every tensor's history moves on by this step's amax and its scale follows.
  // With `ranks` (data parallel) the amax is first the largest any rank's casts saw, so every
  // rank keeps the same scales.
  void update(Communicator* ranks = nullptr);

  // Host reads (they synchronise). Per tensor: its scale; what its casts met (amax: this step's;
  // the counts since the last take_counts, which zeroes them: int32 on the device, so taken
  // often enough they stay exact).
  std::vector<float> read_scales() const;
  std::vector<Fp8Counts> read_counts() const;
  std::vector<Fp8Counts> take_counts();

  // A scale that can no longer serve, with the tensor and the reason; nullopt while all can. The
  // run stops on it: an infinite scale means the tensor's values fell to (near) zero for the
  // whole history, a zero scale that they grew past float's range. A host read.
  std::optional<std::string> collapsed() const;

  // What a checkpoint keeps: per tensor its scale, then its history from oldest to newest, then
  // this step's amaxes. Restoring it continues exactly where the saved run was.
  std::vector<float> state() const;
  void restore(const std::vector<float>& state);
  int64_t state_size() const { return tensors_ * (2 + o_.history); }  // state()'s length

 private:
  Backend& backend_;
  Fp8ScalingOptions o_;
  Fp8Format format_;
  std::vector<std::string> names_;
  int64_t tensors_;
  // f32 scale [T], amax [T], history [T, H], i32 counts [T, 3], then on a 16-byte boundary f32
  // scale_inv [T, kScaleInvStride] (column 0), each inverse on a boundary of its own: Hopper's
  // fp8 GEMMs read their scales there (cuBLASLt refuses others; see cuda_gemm.h).
  DeviceBuffer buf_;

  int64_t checked(int64_t t) const;  // t, after checking that it names a tensor
  Tensor floats(int64_t offset, Shape shape) const;
  Tensor scales() const { return floats(0, Shape{tensors_}); }
  Tensor amaxes() const { return floats(tensors_, Shape{tensors_}); }
  Tensor histories() const { return floats(2 * tensors_, Shape{tensors_, o_.history}); }
  Tensor all_counts() const;
  Tensor scale_invs() const;
};

}  // namespace hwt
