#include "train/run_setup.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "backend/cpu/cpu_backend.h"
#include "core/error.h"
#include "dist/mpi_communicator.h"
#include "dist/world.h"
#ifdef HWT_WITH_CUDA
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/nccl_communicator.h"
#endif

namespace hwt {
namespace {

constexpr int kTrainingDevice = 0;  // the first visible CUDA device

// train.threads beyond this many per core only add scheduling overhead, and far beyond it the
// OpenMP runtime fails (100,000 threads crash libgomp): such a count is capped, with a warning.
constexpr int64_t kMaxThreadsPerCore = 4;

// train.threads = 0 takes the machine's cores, shared among the data-parallel ranks on it: a
// core running two ranks' threads would have one's idle OpenMP workers spin against the other.
int cpu_threads(int64_t requested) {
  const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  if (requested == 0)
    return static_cast<int>(std::max<int64_t>(1, cores / detect_world().local_size));
  const int64_t cap = kMaxThreadsPerCore * cores;
  if (requested <= cap) return static_cast<int>(requested);
  warn("train.threads={} is more than {} per core ({} cores here): using {}", requested,
       kMaxThreadsPerCore, cores, cap);
  return static_cast<int>(cap);
}

DType training_dtype(Precision p, Device device) {
  // The CPU computes in fp32; under fp8 its linear layers multiply fp8 operands all the same
  // (the reference a GPU's fp8 step is tested against).
  if (device == Device::Cpu && p == Precision::Fp8) return DType::F32;
  if (device == Device::Cpu && p != Precision::Fp32)
    fail_input(
        "train.precision other than \"fp32\" or \"fp8\" needs a GPU (the CPU backend computes "
        "in fp32)");
  return activation_dtype(p);
}

#ifdef HWT_WITH_CUDA
std::string to_hex(const NcclId& id) {
  std::string out;
  for (std::byte b : id) out += fmt::format("{:02x}", static_cast<unsigned>(b));
  return out;
}

NcclId from_hex(const std::string& hex) {
  NcclId id{};
  if (hex.size() != 2 * id.size()) fail_input("{} is not an NCCL id", kNcclIdVar);
  for (size_t i = 0; i < id.size(); ++i)
    id[i] = static_cast<std::byte>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  return id;
}

// Rank 0's id reaches the others from the parent (hwt train --gpus) or through MPI.
NcclId shared_nccl_id(const World& world) {
  if (world.launcher == Launcher::Hwt) {
    const char* hex = std::getenv(kNcclIdVar);
    if (!hex) fail_input("{} is set but {} is not", kWorldSizeVar, kNcclIdVar);
    return from_hex(hex);
  }
  NcclId id{};
  if (world.leader()) id = nccl_unique_id();
  mpi_broadcast(id);
  return id;
}
#endif

// One rank per GPU on a machine: rank i of the machine sees only its i-th visible GPU.
void pick_local_gpu(const World& w) {
  if (w.local_size < 2) return;
  const std::vector<std::string> devices = local_gpu_ids(w.local_size);
  // A rank without a GPU of its own sees none, and fails when it asks for one.
  const std::string mine =
      w.local_rank < std::ssize(devices) ? devices[static_cast<size_t>(w.local_rank)] : "-1";
  setenv("CUDA_VISIBLE_DEVICES", mine.c_str(), 1);
}

// Runs `build`, turning a failed allocation into InputError: `what` needs more memory than
// there is (beyond what the run holds already), lower one of `keys`. Nothing has been computed yet,
// so the run stops before it starts.
template <class Build>
void sized_by(const std::string& what, const char* keys, Build build) {
  try {
    build();
  } catch (const OutOfMemory& e) {
    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    const std::string have =
        e.available() > 0
            ? fmt::format("{:.1f} GiB are available", static_cast<double>(e.available()) / kGiB)
            : "the allocation failed";
    fail_input("not enough memory for {}: {:.1f} GiB more are needed, {}; lower {}", what,
               static_cast<double>(e.bytes()) / kGiB, have, keys);
  }
}

}  // namespace

World join_world() {
  World w = detect_world();
  if (w.launcher == Launcher::Mpi) {
    w = init_mpi();
    pick_local_gpu(w);
  }
  return w;
}

std::unique_ptr<Communicator> make_communicator(const World& world, const TrainConfig& train,
                                                Backend& backend) {
  if (!world.distributed()) return nullptr;
  if (backend.device() == Device::Cpu) {
    if (world.launcher != Launcher::Mpi)
      fail_input("data parallel on CPUs runs under mpirun or srun (hwt train --gpus is for GPUs)");
    if (train.grad_reduce == GradReduce::Bf16)
      fail_input("train.grad_reduce=bf16 needs GPUs (NCCL); MPI sums fp32");
    return std::make_unique<MpiCommunicator>(train.collective_timeout);
  }
#ifdef HWT_WITH_CUDA
  return std::make_unique<NcclCommunicator>(static_cast<CudaBackend&>(backend),
                                            shared_nccl_id(world), world.rank, world.size,
                                            train.collective_timeout);
#else
  fail("no communicator for backend {}", backend.name());
#endif
}

int visible_gpu_count() {
#ifdef HWT_WITH_CUDA
  return cuda_device_count();
#else
  return 0;
#endif
}

std::string new_nccl_id_hex() {
#ifdef HWT_WITH_CUDA
  return to_hex(nccl_unique_id());
#else
  fail_input("hwt train --gpus needs a build with CUDA");
#endif
}

bool cuda_available() {
#ifdef HWT_WITH_CUDA
  return cuda_device_count() > 0;
#else
  return false;
#endif
}

std::string training_gpu_pci_bus_id() {
#ifdef HWT_WITH_CUDA
  if (cuda_available()) return cuda_pci_bus_id(kTrainingDevice);
#endif
  return {};
}

std::unique_ptr<Backend> make_backend(const TrainConfig& train) {
  if (train.device == DeviceChoice::Cpu ||
      (train.device == DeviceChoice::Auto && !cuda_available()))
    return make_cpu_backend(cpu_threads(train.threads));
#ifdef HWT_WITH_CUDA
  if (cuda_available()) {
    CudaOptions options;
    options.tf32 = train.precision == Precision::Tf32;
    options.gemm_autotune = train.gemm_autotune;
    options.deterministic_attention = train.deterministic_attention;
    options.fp8 = train.precision == Precision::Fp8;
    return std::make_unique<CudaBackend>(kTrainingDevice, options);
  }
  fail_input("train.device=\"cuda\" but no CUDA GPU is visible");
#else
  fail_input(
      "train.device=\"cuda\" but this hwt was built without CUDA (nvcc not found at build time)");
#endif
}

TrainingModel::TrainingModel(const RunConfig& config, Backend& backend, int64_t max_batch,
                             int64_t max_seq, int64_t storage_multiple,
                             const Fp8Chooser& choose_fp8) {
  const Precision p = config.train.precision;
  const DType dtype = training_dtype(p, backend.device());
  sized_by(
      "the model's parameters", "model.hidden, model.layers, model.ffn or model.vocab_size",
      [&] { model_ = std::make_unique<Model>(config.model, backend, dtype, storage_multiple); });
  sized_by(fmt::format("the activations of batches of {} x {}", max_batch, max_seq).c_str(),
           "train.batch_size or data.max_len",
           [&] { model_->plan(max_batch, max_seq, 0, config.train.recompute); });
  sized_by("the optimizer state", "model.hidden, model.layers, model.ffn or model.vocab_size", [&] {
    optimizer_ =
        std::make_unique<Optimizer>(config.optim, model_->params(), config.train.max_grad_norm);
  });
  optimizer_->set_pruning(model_->pruning());
  freezer_ = std::make_unique<Freezer>(parse_freeze(config.train.freeze, config.model.layers),
                                       model_->params());
  if (p == Precision::Fp16) {
    scaler_ = std::make_unique<LossScaler>(backend);
    model_->set_loss_scale(scaler_->scale());
    optimizer_->set_loss_scale(scaler_->scale());
  }
  // A traced step keeps its GEMMs in bf16 for the analyses that price each at fp8 themselves
  // (hwt shape); one traced with a choice (hwt estimate) runs the chosen products as training does.
  const bool traced = backend.device() == Device::Trace;
  if (p == Precision::Fp8 && (!traced || choose_fp8)) {
    const TrainConfig& t = config.train;
    std::vector<Fp8Layer> layers = fp8_layers(*model_);
    if (choose_fp8 && backend.device() != Device::Cpu)
      fp8_notes_ = choose_fp8(config, backend.name(), max_batch, max_seq, layers);
    fp8_ = std::make_unique<Fp8Training>(
        *model_, Fp8ScalingOptions{t.fp8_history, t.fp8_amax, static_cast<int>(t.fp8_margin)},
        std::move(layers), max_batch * max_seq);
  }
}

void TrainingModel::update(int64_t step, double lr, Communicator* ranks) {
  freezer_->before_step();
  optimizer_->step(step, lr);
  if (scaler_) scaler_->update(optimizer_->grad_norm_sq());
  if (fp8_) fp8_->end_step(ranks);
  freezer_->after_step();
}

}  // namespace hwt
