#include "backend/cuda/nccl_communicator.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>

#include <glob.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "backend/cuda/cuda_check.h"
#include "core/error.h"

namespace hwt {
namespace {

// The NCCL functions hwt calls, resolved from the loaded library.
struct NcclApi {
  decltype(&ncclGetUniqueId) get_unique_id;
  decltype(&ncclCommInitRank) init_rank;
  decltype(&ncclCommDestroy) destroy;
  decltype(&ncclCommAbort) abort;
  decltype(&ncclCommGetAsyncError) async_error;
  decltype(&ncclAllReduce) all_reduce;
  decltype(&ncclReduceScatter) reduce_scatter;
  decltype(&ncclAllGather) all_gather;
  decltype(&ncclGetErrorString) error_string;
  decltype(&ncclGetVersion) version;
};

std::vector<std::string> library_candidates() {
  std::vector<std::string> out;
  if (const char* p = std::getenv("HWT_NCCL_LIBRARY")) out.emplace_back(p);
  out.emplace_back("libnccl.so.2");
  // PyTorch's wheels bring NCCL as the nvidia-nccl package.
  for (const char* pattern : {"/usr/local/lib/python3*/dist-packages/nvidia/nccl/lib/libnccl.so.2",
                              "/usr/local/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2",
                              "/usr/lib/python3/dist-packages/nvidia/nccl/lib/libnccl.so.2"}) {
    glob_t g{};
    if (glob(pattern, 0, nullptr, &g) == 0)
      for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
    globfree(&g);
  }
  return out;
}

const NcclApi& nccl() {
  static const NcclApi api = [] {
    void* lib = nullptr;
    std::string tried;
    for (const std::string& path : library_candidates()) {
      lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (lib) break;
      tried += (tried.empty() ? "" : ", ") + path;
    }
    if (!lib)
      fail_input(
          "data parallel on GPUs needs NCCL, which was not found (tried {}); set "
          "HWT_NCCL_LIBRARY to libnccl.so.2",
          tried);
    auto get = [&](const char* name) {
      void* f = dlsym(lib, name);
      if (!f) fail_input("the NCCL library found has no {}", name);
      return f;
    };
    NcclApi a{};
    a.get_unique_id = reinterpret_cast<decltype(a.get_unique_id)>(get("ncclGetUniqueId"));
    a.init_rank = reinterpret_cast<decltype(a.init_rank)>(get("ncclCommInitRank"));
    a.destroy = reinterpret_cast<decltype(a.destroy)>(get("ncclCommDestroy"));
    a.abort = reinterpret_cast<decltype(a.abort)>(get("ncclCommAbort"));
    a.async_error = reinterpret_cast<decltype(a.async_error)>(get("ncclCommGetAsyncError"));
    a.all_reduce = reinterpret_cast<decltype(a.all_reduce)>(get("ncclAllReduce"));
    a.reduce_scatter = reinterpret_cast<decltype(a.reduce_scatter)>(get("ncclReduceScatter"));
    a.all_gather = reinterpret_cast<decltype(a.all_gather)>(get("ncclAllGather"));
    a.error_string = reinterpret_cast<decltype(a.error_string)>(get("ncclGetErrorString"));
    a.version = reinterpret_cast<decltype(a.version)>(get("ncclGetVersion"));
    return a;
  }();
  return api;
}

void check(ncclResult_t rc, const char* what) {
  if (rc != ncclSuccess && rc != ncclInProgress)
    throw Error(fmt::format("NCCL {} failed: {}", what, nccl().error_string(rc)));
}

ncclDataType_t nccl_type(const Tensor& t) {
  switch (t.dtype) {
    case DType::F32:
      return ncclFloat32;
    case DType::BF16:
      return ncclBfloat16;
    default:
      throw InputError(
          fmt::format("NCCL collectives here take f32 or bf16, not {}", dtype_name(t.dtype)));
  }
}

}  // namespace

NcclId nccl_unique_id() {
  ncclUniqueId id;
  check(nccl().get_unique_id(&id), "unique id");
  NcclId out;
  std::memcpy(out.data(), &id, kNcclIdBytes);
  return out;
}

struct NcclCommunicator::State {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;  // communication
  cudaEvent_t compute_done = nullptr, comm_done = nullptr;
  double* host_sums = nullptr;  // device buffer for sum_host
  size_t host_sums_count = 0;
};

NcclCommunicator::NcclCommunicator(CudaBackend& backend, const NcclId& id, int rank, int size,
                                   double timeout_s)
    : backend_(backend), rank_(rank), size_(size), s_(std::make_unique<State>()) {
  static_assert(sizeof(ncclUniqueId) == kNcclIdBytes);
  ncclUniqueId nid;
  std::memcpy(&nid, id.data(), kNcclIdBytes);
  cuda::check(cudaStreamCreateWithFlags(&s_->stream, cudaStreamNonBlocking), "nccl communicator");
  cuda::check(cudaEventCreateWithFlags(&s_->compute_done, cudaEventDisableTiming),
              "nccl communicator");
  cuda::check(cudaEventCreateWithFlags(&s_->comm_done, cudaEventDisableTiming),
              "nccl communicator");
  ncclComm_t comm = nullptr;
  // Joining waits for every rank: a rank that never arrives is caught by the watchdog.
  watchdog_ = std::make_unique<CollectiveWatchdog>(timeout_s, rank, [this] {
    if (s_->comm) nccl().abort(s_->comm);
  });
  {
    WatchScope watch(*watchdog_, "joining the NCCL communicator");
    check(nccl().init_rank(&comm, size, nid, rank), "communicator init");
  }
  s_->comm = comm;
}

NcclCommunicator::~NcclCommunicator() {
  watchdog_.reset();
  if (s_->comm) nccl().destroy(s_->comm);
  if (s_->host_sums) cudaFree(s_->host_sums);
  cudaEventDestroy(s_->compute_done);
  cudaEventDestroy(s_->comm_done);
  cudaStreamDestroy(s_->stream);
}

std::string NcclCommunicator::name() const {
  int v = 0;
  nccl().version(&v);
  return fmt::format("nccl {}.{}.{}", v / 10000, v / 100 % 100, v % 100);
}

void NcclCommunicator::begin() {
  cuda::check(cudaEventRecord(s_->compute_done, backend_.stream()), "nccl communicator");
  cuda::check(cudaStreamWaitEvent(s_->stream, s_->compute_done), "nccl communicator");
  started_ = true;
}

void NcclCommunicator::all_reduce_sum(Tensor data) {
  begin();
  check(nccl().all_reduce(data.data, data.data, static_cast<size_t>(data.numel()), nccl_type(data),
                          ncclSum, s_->comm, s_->stream),
        "all-reduce");
}

void NcclCommunicator::all_reduce_max(Tensor data) {
  HWT_CHECK(data.dtype == DType::F32, "the NCCL communicator's max takes f32");
  begin();
  check(nccl().all_reduce(data.data, data.data, static_cast<size_t>(data.numel()), ncclFloat32,
                          ncclMax, s_->comm, s_->stream),
        "all-reduce");
}

void NcclCommunicator::reduce_scatter_sum(Tensor in, Tensor out) {
  HWT_CHECK(in.numel() == out.numel() * size_, "reduce-scatter of {} into parts of {}", in.numel(),
            out.numel());
  begin();
  check(nccl().reduce_scatter(in.data, out.data, static_cast<size_t>(out.numel()), nccl_type(in),
                              ncclSum, s_->comm, s_->stream),
        "reduce-scatter");
}

void NcclCommunicator::all_gather(Tensor in, Tensor out) {
  HWT_CHECK(out.numel() == in.numel() * size_, "all-gather of {} into {}", in.numel(), out.numel());
  begin();
  check(nccl().all_gather(in.data, out.data, static_cast<size_t>(in.numel()), nccl_type(in),
                          s_->comm, s_->stream),
        "all-gather");
}

void NcclCommunicator::wait() {
  if (!started_) return;
  started_ = false;
  cuda::check(cudaEventRecord(s_->comm_done, s_->stream), "nccl communicator");
  cuda::check(cudaStreamWaitEvent(backend_.stream(), s_->comm_done), "nccl communicator");
  // The host does not block; the watchdog polls the event and NCCL's asynchronous errors.
  cudaEvent_t done = s_->comm_done;
  ncclComm_t comm = s_->comm;
  watchdog_->arm("a gradient collective", [done, comm] {
    ncclResult_t async = ncclSuccess;
    nccl().async_error(comm, &async);
    if (async != ncclSuccess && async != ncclInProgress) return false;  // times out, aborts
    return cudaEventQuery(done) == cudaSuccess;
  });
}

void NcclCommunicator::sum_host(std::span<double> values) {
  if (values.size() > s_->host_sums_count) {
    if (s_->host_sums) cuda::check(cudaFree(s_->host_sums), "nccl communicator");
    cuda::check(cudaMalloc(&s_->host_sums, values.size() * sizeof(double)), "nccl communicator");
    s_->host_sums_count = values.size();
  }
  WatchScope watch(*watchdog_, "a sum of host values");
  cuda::check(cudaMemcpyAsync(s_->host_sums, values.data(), values.size_bytes(),
                              cudaMemcpyHostToDevice, s_->stream),
              "nccl communicator");
  check(nccl().all_reduce(s_->host_sums, s_->host_sums, values.size(), ncclFloat64, ncclSum,
                          s_->comm, s_->stream),
        "sum");
  cuda::check(cudaMemcpyAsync(values.data(), s_->host_sums, values.size_bytes(),
                              cudaMemcpyDeviceToHost, s_->stream),
              "nccl communicator");
  cuda::check(cudaStreamSynchronize(s_->stream), "nccl communicator");
}

}  // namespace hwt
