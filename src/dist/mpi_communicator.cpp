#include "dist/mpi_communicator.h"

#include <mpi.h>

#include <cstdlib>
#include <vector>

#include "core/error.h"

namespace hwt {
namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int n = 0;
  MPI_Error_string(rc, text, &n);
  throw Error(fmt::format("MPI {} failed: {}", what, std::string(text, static_cast<size_t>(n))));
}

MPI_Datatype mpi_type(const Tensor& t) {
  if (t.dtype == DType::F32) return MPI_FLOAT;
  throw InputError(
      fmt::format("data parallel over MPI sums f32 tensors only, not {}", dtype_name(t.dtype)));
}

int count_of(const Tensor& t) {
  HWT_CHECK(t.numel() <= (int64_t{1} << 31) - 1, "{} elements are too many for one MPI call",
            t.numel());
  return static_cast<int>(t.numel());
}

}  // namespace

World init_mpi() {
  int ready = 0;
  MPI_Initialized(&ready);
  if (!ready) {
    int provided = 0;
    // Only the training thread calls MPI (the watchdog never does).
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "init");
    std::atexit([] {
      int done = 0;
      MPI_Finalized(&done);
      if (!done) MPI_Finalize();
    });
  }
  World w;
  w.launcher = Launcher::Mpi;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  MPI_Comm local;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local),
        "split by machine");
  MPI_Comm_rank(local, &w.local_rank);
  MPI_Comm_size(local, &w.local_size);
  MPI_Comm_free(&local);
  return w;
}

void mpi_broadcast(std::span<std::byte> bytes) {
  check(MPI_Bcast(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0, MPI_COMM_WORLD),
        "broadcast");
}

struct MpiCommunicator::Pending {
  std::vector<MPI_Request> requests;
};

MpiCommunicator::MpiCommunicator(double timeout_s)
    : pending_(std::make_unique<Pending>()), watchdog_(timeout_s, [] {
        int r = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        return r;
      }()) {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiCommunicator::~MpiCommunicator() = default;

void MpiCommunicator::all_reduce_sum(Tensor data) {
  HWT_CHECK(data.device == Device::Cpu, "the MPI communicator works on host memory");
  MPI_Request r;
  check(MPI_Iallreduce(MPI_IN_PLACE, data.data, count_of(data), mpi_type(data), MPI_SUM,
                       MPI_COMM_WORLD, &r),
        "all-reduce");
  pending_->requests.push_back(r);
}

void MpiCommunicator::all_reduce_max(Tensor data) {
  HWT_CHECK(data.device == Device::Cpu && data.dtype == DType::F32,
            "the MPI communicator's max takes f32 in host memory");
  MPI_Request r;
  check(MPI_Iallreduce(MPI_IN_PLACE, data.data, count_of(data), MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD,
                       &r),
        "all-reduce");
  pending_->requests.push_back(r);
}

void MpiCommunicator::reduce_scatter_sum(Tensor in, Tensor out) {
  HWT_CHECK(in.numel() == out.numel() * size_, "reduce-scatter of {} into parts of {}", in.numel(),
            out.numel());
  WatchScope watch(watchdog_, "a gradient reduce-scatter");
  check(MPI_Reduce_scatter_block(in.data, out.data, count_of(out), mpi_type(in), MPI_SUM,
                                 MPI_COMM_WORLD),
        "reduce-scatter");
}

void MpiCommunicator::all_gather(Tensor in, Tensor out) {
  HWT_CHECK(out.numel() == in.numel() * size_, "all-gather of {} into {}", in.numel(), out.numel());
  WatchScope watch(watchdog_, "a parameter all-gather");
  // In place when `in` is this rank's own part of `out` (MPI then reads it from there).
  const bool in_place = in.data == static_cast<std::byte*>(out.data) + rank_ * in.bytes();
  check(MPI_Allgather(in_place ? MPI_IN_PLACE : in.data, count_of(in), mpi_type(in), out.data,
                      count_of(in), mpi_type(out), MPI_COMM_WORLD),
        "all-gather");
}

void MpiCommunicator::wait() {
  if (pending_->requests.empty()) return;
  WatchScope watch(watchdog_, "a gradient all-reduce");
  check(MPI_Waitall(static_cast<int>(pending_->requests.size()), pending_->requests.data(),
                    MPI_STATUSES_IGNORE),
        "wait");
  pending_->requests.clear();
}

void MpiCommunicator::sum_host(std::span<double> values) {
  WatchScope watch(watchdog_, "a sum of host values");
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE,
                      MPI_SUM, MPI_COMM_WORLD),
        "sum");
}

}  // namespace hwt
