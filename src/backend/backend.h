// Backend: memory plus the op set. Layers call these and never branch on the device.
// CpuBackend is the fp32 reference, CudaBackend the fast path, TraceBackend computes nothing
// and records each op (shapes, dtype, FLOPs, bytes) into a Workload.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backend/ops.h"
#include "core/tensor.h"

namespace hwt {

// Which part of a training step an op belongs to (recorded by the trace, used by analyses).
enum class Phase : uint8_t { Forward, Backward, Optimizer, Other };

std::string_view phase_name(Phase p);

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;
  virtual std::string name() const = 0;

  // ---- memory (bytes; contents undefined after allocate)
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* p) = 0;
  virtual void upload(Tensor dst, const void* host) = 0;
  virtual void download(void* host, Tensor src) = 0;
  virtual void synchronize() {}

  // ---- labels for traces and profilers: which layer and phase the next ops belong to
  virtual void set_scope(std::string_view /*label*/, Phase /*phase*/) {}

  // ---- graph capture (CUDA graphs; other backends run ops at once and ignore these).
  // Ops between begin_capture() and end_capture() are recorded, with their host scalars
  // (seeds, scales) as they are when recorded; end_capture() runs them as one launch, in order
  // with the ops before and after. Inside a capture, calls that would synchronise, allocate,
  // copy host memory, grow scratch or autotune a GEMM throw hwt::Error and abort the capture.
  // abort_capture() drops a capture (nothing recorded runs); a no-op outside one.
  virtual void begin_capture() {}
  virtual void end_capture() {}
  virtual void abort_capture() {}
  // Kept graphs, for work repeated with the same kernels and arguments (what changes between
  // runs lives in device memory: generation's decode step). end_capture_kept(key) ends a
  // capture as end_capture() does and keeps what it recorded under `key`; replay_kept(key)
  // launches that again and returns true, or returns false when nothing is kept under `key`
  // (always on backends without graphs; the CUDA backend forgets every kept graph when it
  // frees memory one may use, such as grown scratch). drop_kept(key) forgets one.
  virtual void end_capture_kept(uint64_t /*key*/) { end_capture(); }
  virtual bool replay_kept(uint64_t /*key*/) { return false; }
  virtual void drop_kept(uint64_t /*key*/) {}

  // ---- notices: slow paths the ops took (a kernel that is not the fast one, and why), each
  // returned once, by the first call after it was first taken.
  virtual std::vector<std::string> take_notices() { return {}; }

  // ---- the ops (ops.h: their arguments and the list)
#define HWT_BACKEND_OP_PURE(name, Args) virtual void name(const Args& a) = 0;
  HWT_BACKEND_OPS(HWT_BACKEND_OP_PURE)
#undef HWT_BACKEND_OP_PURE
};

// Owns `bytes` of backend memory for its lifetime.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Backend& backend, size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  // A view of the first numel elements, or from a byte offset.
  Tensor tensor(DType dtype, Shape shape, size_t byte_offset = 0) const;

 private:
  void release();
  Backend* backend_ = nullptr;
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// Captures the ops enqueued during its lifetime when `on` (else they run at once); launch()
// runs them. Leaving the scope without launch() (an exception) aborts the capture.
class CaptureScope {
 public:
  CaptureScope(Backend& backend, bool on);
  ~CaptureScope();
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;
  void launch();

 private:
  Backend& backend_;
  bool open_;
};

}  // namespace hwt
