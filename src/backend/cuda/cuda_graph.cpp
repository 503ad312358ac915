// CudaBackend: stream capture into a CUDA graph. Each capture is a fresh cudaGraph_t; the
// executable graph of the previous one is updated with it (same topology, new kernel
// parameters such as seeds and scalars), or instantiated afresh when the update is refused.
#include <memory>

#include "backend/cuda/cuda_backend_impl.h"
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

void CudaBackend::end_capture() {
  HWT_CHECK(capturing_, "cuda backend: end_capture without begin_capture");
  capturing_ = false;
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(launch_.stream, &graph);
  if (ended != cudaSuccess) {
    cudaGetLastError();  // the stream has left capture mode and stays usable
    check(ended, "cudaStreamEndCapture");
  }
  const std::unique_ptr<CUgraph_st, decltype(&cudaGraphDestroy)> owned(graph, cudaGraphDestroy);
  if (graph_exec_) {
    cudaGraphExecUpdateResultInfo info{};
    const cudaError_t e = cudaGraphExecUpdate(graph_exec_, graph, &info);
    if (e == cudaErrorGraphExecUpdateFailure) {
      cudaGetLastError();  // a refused update (another topology) only means instantiating afresh
      cudaGraphExecDestroy(graph_exec_);
      graph_exec_ = nullptr;
    } else {
      check(e, "cudaGraphExecUpdate");
    }
  }
  if (!graph_exec_) {
    cudaGraphExec_t exec = nullptr;
    check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    graph_exec_ = exec;
  }
  check(cudaGraphLaunch(graph_exec_, launch_.stream), "cudaGraphLaunch");
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
