#include "backend/backend.h"

#include <utility>

#include "core/error.h"

namespace hwt {

std::string_view op_name(Op op) {
  switch (op) {
#define HWT_OP_NAME(name, Args) \
  case Op::name:                \
    return #name;
    HWT_BACKEND_OPS(HWT_OP_NAME)
#undef HWT_OP_NAME
  }
  return "?";
}

int64_t HeadNormShape::checked_width(const Tensor& qkv, const Tensor& saved, const Tensor& rstd,
                                     const Tensor& q_gamma, const Tensor& k_gamma) const {
  const int64_t D = head_dim, rows = qkv.rows(), w = norm_width(width, D);
  HWT_CHECK(qkv.cols() == (heads + 2 * kv()) * D,
            "head norm qkv {} for heads={} kv_heads={} head_dim={}", qkv.str(), heads, kv(), D);
  HWT_CHECK(saved.numel() == rows * normed() * D && rstd.numel() == rows * normed(),
            "head norm saved {} and rstd {} for qkv {}", saved.str(), rstd.str(), qkv.str());
  HWT_CHECK(q_gamma.numel() == D && k_gamma.numel() == D,
            "head norm gammas {} and {} for head_dim {}", q_gamma.str(), k_gamma.str(), D);
  HWT_CHECK(w >= 1 && w <= D, "head norm width {} for head_dim {}", width, D);
  return w;
}

int64_t DecodeAdvance::checked_batch() const {
  const int64_t batch = picks.numel();
  for (const Tensor* t : {&picks, &ids, &positions, &lengths, &tokens})
    HWT_CHECK(t->dtype == DType::I32, "decode_advance: {} is not i32", t->str());
  HWT_CHECK(ids.numel() == batch && positions.numel() == batch && lengths.numel() == batch &&
                tokens.shape.rank == 2 && tokens.dim(0) == batch && tokens.dim(1) >= 1,
            "decode_advance: picks {} ids {} positions {} lengths {} tokens {}", picks.str(),
            ids.str(), positions.str(), lengths.str(), tokens.str());
  return batch;
}

std::string_view phase_name(Phase p) {
  switch (p) {
    case Phase::Forward:
      return "forward";
    case Phase::Backward:
      return "backward";
    case Phase::Optimizer:
      return "optimizer";
    case Phase::Other:
      return "other";
  }
  return "?";
}

DeviceBuffer::DeviceBuffer(Backend& backend, size_t bytes)
    : backend_(&backend), data_(bytes ? backend.allocate(bytes) : nullptr), bytes_(bytes) {}

DeviceBuffer::~DeviceBuffer() {
  release();
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : backend_(std::exchange(o.backend_, nullptr)),
      data_(std::exchange(o.data_, nullptr)),
      bytes_(std::exchange(o.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    release();
    backend_ = std::exchange(o.backend_, nullptr);
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::release() {
  if (backend_ && data_) backend_->deallocate(data_);
  data_ = nullptr;
  bytes_ = 0;
}

Tensor DeviceBuffer::tensor(DType dtype, Shape shape, size_t byte_offset) const {
  HWT_CHECK(byte_offset + static_cast<size_t>(shape.numel()) * dtype_size(dtype) <= bytes_,
            "view {} at {} exceeds buffer of {} bytes", shape.str(), byte_offset, bytes_);
  Tensor t;
  t.data = data_ ? static_cast<char*>(data_) + byte_offset : nullptr;
  t.shape = shape;
  t.dtype = dtype;
  t.device = backend_ ? backend_->device() : Device::Cpu;
  return t;
}

CaptureScope::CaptureScope(Backend& backend, bool on) : backend_(backend), open_(on) {
  if (open_) backend_.begin_capture();
}

CaptureScope::~CaptureScope() {
  if (open_) backend_.abort_capture();
}

void CaptureScope::launch() {
  if (!open_) return;
  open_ = false;  // end_capture() closes the capture even when it throws
  backend_.end_capture();
}

}  // namespace hwt
