// Tensor: a non-owning, contiguous, row-major view (pointer, dtype, device, shape).
// Memory belongs to flat buffers and arenas; tensors are cheap to copy and pass by value.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "core/dtype.h"
#include "core/error.h"

namespace hwt {

enum class Device : uint8_t { Cpu, Cuda, Trace };

std::string_view device_name(Device d);

struct Shape {
  static constexpr int kMaxRank = 4;
  std::array<int64_t, kMaxRank> dims{};
  int rank = 0;

  Shape() = default;
  Shape(std::initializer_list<int64_t> d);

  int64_t operator[](int i) const { return dims[static_cast<size_t>(i)]; }
  int64_t numel() const;
  bool operator==(const Shape& o) const;
  std::string str() const;  // "[2, 3, 4]"
};

struct Tensor {
  void* data = nullptr;
  Shape shape;
  DType dtype = DType::F32;
  Device device = Device::Cpu;

  // A tensor is defined when it has a shape; on the trace backend data stays null.
  bool defined() const { return shape.rank > 0; }
  int64_t numel() const { return shape.numel(); }
  size_t bytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  int64_t dim(int i) const { return shape[i < 0 ? shape.rank + i : i]; }
  int64_t cols() const { return shape[shape.rank - 1]; }
  int64_t rows() const { return numel() / cols(); }

  template <class T>
  T* as() const {
    return static_cast<T*>(data);
  }
  // The same memory seen with another shape of equal element count.
  Tensor view(Shape s) const;
  // Rows [begin, begin + count) of the tensor seen as a [rows, cols] matrix.
  Tensor row_slice(int64_t begin, int64_t count) const;
  // Elements [offset, offset + n) of the flattened tensor, as a rank-1 view.
  Tensor flat_slice(int64_t offset, int64_t n) const;
  std::string str() const;  // "f32[2, 3]"
};

}  // namespace hwt
