#include "train/run_setup.h"

#include "backend/cpu/cpu_backend.h"
#include "core/error.h"
#ifdef HWT_WITH_CUDA
#include "backend/cuda/cuda_backend.h"
#endif

namespace hwt {
namespace {

constexpr int kTrainingDevice = 0;  // the first visible CUDA device

DType training_dtype(Precision p, Device device) {
  if (p == Precision::Fp8 && device != Device::Trace)
    fail_input(
        "train.precision fp8 is analysed by hwt shape only; training runs fp32, tf32, "
        "bf16 or fp16");
  if (device == Device::Cpu && p != Precision::Fp32)
    fail_input(
        "train.precision other than \"fp32\" needs a GPU (the CPU backend computes in fp32)");
  return activation_dtype(p);
}

}  // namespace

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
    return make_cpu_backend(static_cast<int>(train.threads));
#ifdef HWT_WITH_CUDA
  if (cuda_available()) {
    CudaOptions options;
    options.tf32 = train.precision == Precision::Tf32;
    options.gemm_autotune = train.gemm_autotune;
    options.deterministic_attention = train.deterministic_attention;
    return std::make_unique<CudaBackend>(kTrainingDevice, options);
  }
  fail_input("train.device=\"cuda\" but no CUDA GPU is visible");
#else
  fail_input(
      "train.device=\"cuda\" but this hwt was built without CUDA (nvcc not found at build time)");
#endif
}

TrainingModel::TrainingModel(const RunConfig& config, Backend& backend, int64_t max_batch,
                             int64_t max_seq) {
  const Precision p = config.train.precision;
  model_ = std::make_unique<Model>(config.model, backend, training_dtype(p, backend.device()));
  model_->plan(max_batch, max_seq);
  optimizer_ =
      std::make_unique<Optimizer>(config.optim, model_->params(), config.train.max_grad_norm);
  optimizer_->set_pruning(model_->pruning());
  if (p == Precision::Fp16) {
    scaler_ = std::make_unique<LossScaler>(backend);
    model_->set_loss_scale(scaler_->scale());
    optimizer_->set_loss_scale(scaler_->scale());
  }
}

void TrainingModel::update(int64_t step, double lr) {
  optimizer_->step(step, lr);
  if (scaler_) scaler_->update(optimizer_->grad_norm_sq());
}

}  // namespace hwt
