#include "core/tensor.h"

#include <fmt/format.h>

namespace hwt {

std::string_view device_name(Device d) {
  switch (d) {
    case Device::Cpu:
      return "cpu";
    case Device::Cuda:
      return "cuda";
    case Device::Trace:
      return "trace";
  }
  return "?";
}

Shape::Shape(std::initializer_list<int64_t> d) {
  HWT_CHECK(d.size() <= kMaxRank, "rank {} exceeds {}", d.size(), kMaxRank);
  for (int64_t v : d) dims[static_cast<size_t>(rank++)] = v;
}

int64_t Shape::numel() const {
  if (rank == 0) return 0;
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= dims[static_cast<size_t>(i)];
  return n;
}

bool Shape::operator==(const Shape& o) const {
  if (rank != o.rank) return false;
  for (int i = 0; i < rank; ++i)
    if (dims[static_cast<size_t>(i)] != o.dims[static_cast<size_t>(i)]) return false;
  return true;
}

std::string Shape::str() const {
  std::string s = "[";
  for (int i = 0; i < rank; ++i) s += fmt::format("{}{}", i ? ", " : "", (*this)[i]);
  return s + "]";
}

Tensor Tensor::view(Shape s) const {
  HWT_CHECK(s.numel() == numel(), "view {} of {}", s.str(), shape.str());
  Tensor t = *this;
  t.shape = s;
  return t;
}

Tensor Tensor::row_slice(int64_t begin, int64_t count) const {
  HWT_CHECK(begin >= 0 && begin + count <= rows(), "rows {}+{} of {}", begin, count, str());
  Tensor t = *this;
  t.shape = Shape{count, cols()};
  if (data)
    t.data = static_cast<char*>(data) + static_cast<size_t>(begin * cols()) * dtype_size(dtype);
  return t;
}

Tensor Tensor::flat_slice(int64_t offset, int64_t n) const {
  HWT_CHECK(offset >= 0 && offset + n <= numel(), "slice {}+{} of {}", offset, n, str());
  Tensor t = *this;
  t.shape = Shape{n};
  if (data) t.data = static_cast<char*>(data) + static_cast<size_t>(offset) * dtype_size(dtype);
  return t;
}

std::string Tensor::str() const {
  return fmt::format("{}{}", dtype_name(dtype), shape.str());
}

}  // namespace hwt
