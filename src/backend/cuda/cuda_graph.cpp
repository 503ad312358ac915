// CudaBackend: stream capture into a CUDA graph. Each capture is a fresh cudaGraph_t; the
// executable graph of the capture before the previous one is updated with it (same topology,
// new kernel parameters such as seeds and scalars), or instantiated afresh when the update is
// refused. Kept graphs (end_capture_kept) are instantiated once and launched again as they are.
#include <memory>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"

namespace hwt {

using cuda::check;

void CudaBackend::begin_capture() {
  HWT_CHECK(!capturing_, "cuda backend: begin_capture inside a capture");
  // Thread-local: calls from this thread that are unsafe during a capture fail instead of
  // being recorded, while other threads' CUDA use is not affected.
  check(cudaStreamBeginCapture(launch_.stream, cudaStreamCaptureModeThreadLocal),
        "cudaStreamBeginCapture");
  capturing_ = true;
}

// Ends the capture and returns what it recorded (owned by the caller).
cudaGraph_t CudaBackend::finish_capture(std::string_view call) {
  HWT_CHECK(capturing_, "cuda backend: {} without begin_capture", call);
  capturing_ = false;
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(launch_.stream, &graph);
  if (ended != cudaSuccess) {
    cudaGetLastError();  // the stream has left capture mode and stays usable
    check(ended, "cudaStreamEndCapture");
  }
  return graph;
}

void CudaBackend::end_capture() {
  const std::unique_ptr<CUgraph_st, decltype(&cudaGraphDestroy)> owned(
      finish_capture("end_capture"), cudaGraphDestroy);
  // Alternate between two executable graphs: the one launched last may still be running while
  // the host records the next capture.
  cudaGraphExec_t& exec = graph_execs_[next_exec_];
  next_exec_ ^= 1;
  if (exec) {
    cudaGraphExecUpdateResultInfo info{};
    const cudaError_t e = cudaGraphExecUpdate(exec, owned.get(), &info);
    if (e == cudaErrorGraphExecUpdateFailure) {
      cudaGetLastError();  // a refused update (another topology) only means instantiating afresh
      cudaGraphExecDestroy(exec);
      exec = nullptr;
    } else {
      check(e, "cudaGraphExecUpdate");
    }
  }
  if (!exec) check(cudaGraphInstantiate(&exec, owned.get(), 0), "cudaGraphInstantiate");
  check(cudaGraphLaunch(exec, launch_.stream), "cudaGraphLaunch");
}

void CudaBackend::end_capture_kept(uint64_t key) {
  const std::unique_ptr<CUgraph_st, decltype(&cudaGraphDestroy)> owned(
      finish_capture("end_capture_kept"), cudaGraphDestroy);
  drop_kept(key);
  cudaGraphExec_t exec = nullptr;
  check(cudaGraphInstantiate(&exec, owned.get(), 0), "cudaGraphInstantiate");
  kept_[key] = exec;
  check(cudaGraphLaunch(exec, launch_.stream), "cudaGraphLaunch");
}

bool CudaBackend::replay_kept(uint64_t key) {
  const auto it = kept_.find(key);
  if (it == kept_.end()) return false;
  check(cudaGraphLaunch(it->second, launch_.stream), "cudaGraphLaunch");
  return true;
}

void CudaBackend::drop_kept(uint64_t key) {
  const auto it = kept_.find(key);
  if (it == kept_.end()) return;
  // A launch of it may still be running.
  check(cudaStreamSynchronize(launch_.stream), "dropping a kept graph");
  cudaGraphExecDestroy(it->second);
  kept_.erase(it);
}

void CudaBackend::drop_all_kept() {
  if (kept_.empty()) return;
  cudaStreamSynchronize(launch_.stream);
  for (const auto& [key, exec] : kept_) cudaGraphExecDestroy(exec);
  kept_.clear();
}

void CudaBackend::abort_capture() {
  if (!capturing_) return;
  capturing_ = false;
  cudaGraph_t graph = nullptr;
  // Fails when the capture was invalidated; either way the stream leaves capture mode.
  cudaStreamEndCapture(launch_.stream, &graph);
  if (graph) cudaGraphDestroy(graph);
  cudaGetLastError();
}

void CudaBackend::outside_capture(std::string_view call) {
  if (!capturing_) return;
  abort_capture();
  fail(
      "cuda backend: {} is not allowed inside a CUDA graph capture (the capture was aborted; "
      "such calls, and the first step of each batch shape, must run outside captures)",
      call);
}

}  // namespace hwt
