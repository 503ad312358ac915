// ActivationArena: one allocation for all activations of a (max batch, max seq) shape,
// planned before the first step, so training steps never allocate. Slots are reserved for
// the largest shape; each step takes views with its actual (smaller or equal) shape.
#pragma once

#include <vector>

#include "backend/backend.h"

namespace hwt {

class ActivationArena {
 public:
  using Slot = size_t;

  Slot reserve(DType dtype, int64_t max_elements);
  void allocate(Backend& backend);
  Tensor view(Slot slot, Shape shape) const;
  size_t bytes() const { return total_; }

 private:
  struct Entry {
    DType dtype;
    int64_t max_elements;
    size_t offset;
  };
  std::vector<Entry> entries_;
  size_t total_ = 0;
  DeviceBuffer buffer_;
};

}  // namespace hwt
