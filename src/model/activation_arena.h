// ActivationArena: one allocation for all activations of a (max batch, max seq) shape,
// planned before the first step, so training steps never allocate. Slots are reserved for
// the largest shape; each step takes views with its actual (smaller or equal) shape.
#pragma once

#include <string>
#include <vector>

#include "backend/backend.h"

namespace hwt {

// What a slot holds, for memory reports (`hwt memory`): an activation the backward reads (or a
// step's inputs and outputs), or an intermediate: activation gradients, scratch, the products of
// a tensor-train contraction.
enum class ArenaUse : uint8_t { Activation, Intermediate };

class ActivationArena {
 public:
  using Slot = size_t;

  // The layer the reservations that follow belong to ("layers.3.mlp"); labels only.
  void set_owner(std::string owner) { owner_ = std::move(owner); }
  Slot reserve(DType dtype, int64_t max_elements, ArenaUse use = ArenaUse::Activation);
  void allocate(Backend& backend);
  Tensor view(Slot slot, Shape shape) const;
  size_t bytes() const { return total_; }

  struct Reservation {
    std::string owner;
    ArenaUse use;
    size_t bytes;  // aligned, as laid out
  };
  std::vector<Reservation> reservations() const;

 private:
  struct Entry {
    DType dtype;
    int64_t max_elements;
    size_t offset;
    ArenaUse use;
    std::string owner;
  };
  std::vector<Entry> entries_;
  size_t total_ = 0;
  std::string owner_;
  DeviceBuffer buffer_;
};

}  // namespace hwt
