#include "model/activation_arena.h"

#include "core/integer_math.h"

namespace hwt {

ActivationArena::Slot ActivationArena::reserve(DType dtype, int64_t max_elements, ArenaUse use) {
  HWT_CHECK(!buffer_.data() && max_elements >= 0, "reserve after allocation");
  entries_.push_back({dtype, max_elements, total_, use, owner_});
  // 256-byte alignment keeps every slot aligned for vector loads and GEMM libraries.
  total_ += round_up(static_cast<size_t>(max_elements) * dtype_size(dtype), 256);
  return entries_.size() - 1;
}

void ActivationArena::allocate(Backend& backend) {
  buffer_ = DeviceBuffer(backend, total_);
}

std::vector<ActivationArena::Reservation> ActivationArena::reservations() const {
  std::vector<Reservation> out;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const size_t end = i + 1 < entries_.size() ? entries_[i + 1].offset : total_;
    out.push_back({entries_[i].owner, entries_[i].use, end - entries_[i].offset});
  }
  return out;
}

Tensor ActivationArena::view(Slot slot, Shape shape) const {
  const Entry& e = entries_.at(slot);
  HWT_CHECK(shape.numel() <= e.max_elements, "activation view {} exceeds planned {} elements",
            shape.str(), e.max_elements);
  return buffer_.tensor(e.dtype, shape, e.offset);
}

}  // namespace hwt
