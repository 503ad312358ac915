// What a run config builds before it trains: the backend it asks for (train.device and the GPU
// options), and the model, optimizer and (fp16) dynamic loss scaler it trains, built the same way
// for every run: `hwt train` trains them, and the trace every analysis reads records one of their
// steps (workload/trace_step.h), so both see the same ops.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "backend/backend.h"
#include "config/run_config.h"
#include "dist/communicator.h"
#include "dist/world.h"
#include "model/model.h"
#include "train/fp8_training.h"
#include "train/freeze.h"
#include "train/loss_scaler.h"
#include "train/optimizer.h"

namespace hwt {

// True when hwt was built with CUDA and a GPU is visible.
bool cuda_available();
// The PCI bus id of the GPU make_backend trains on; empty without one.
std::string training_gpu_pci_bus_id();

// auto: CUDA when available, else CPU. cuda without a GPU raises InputError. On the GPU,
// train.precision tf32 runs fp32 GEMMs on TF32 tensor cores; train.gemm_autotune and
// train.deterministic_attention choose the GEMM algorithms and the attention backward.
std::unique_ptr<Backend> make_backend(const TrainConfig& train);

// Data parallel (docs/data_parallel.md). Joins the job this process was started in: under MPI
// it initialises MPI; with several ranks on one machine it points this rank at its own GPU
// (CUDA_VISIBLE_DEVICES) before anything touches CUDA. A single process gets World{}.
World join_world();
// The communicator between the ranks of `world` on `backend`: NCCL between GPUs, MPI between
// CPU processes; null for a single process. Raises InputError for a combination that cannot
// work (CPU ranks without MPI, bf16 reduction over MPI).
std::unique_ptr<Communicator> make_communicator(const World& world, const TrainConfig& train,
                                                Backend& backend);
// For `hwt train --gpus N`: the GPUs visible here, and a new NCCL unique id as hex.
int visible_gpu_count();
std::string new_nccl_id_hex();

class TrainingModel {
 public:
  // Activations in train.precision's dtype, planned for (max_batch, max_seq); config.model's
  // vocabulary and label counts must be known. Raises InputError for a precision the backend
  // cannot train in.
  // fp8 on a GPU: choose_fp8 picks which products of the eligible layers run in fp8 (unset:
  // all of them). A traced fp8 step runs its products in fp8 only with a choice handed in.
  TrainingModel(const RunConfig& config, Backend& backend, int64_t max_batch, int64_t max_seq,
                int64_t storage_multiple = 1,  // ParamStore::allocate
                const Fp8Chooser& choose_fp8 = {});

  Model& model() { return *model_; }
  Optimizer& optimizer() { return *optimizer_; }
  LossScaler* loss_scaler() { return scaler_.get(); }  // fp16 only
  Fp8Training* fp8() { return fp8_.get(); }            // fp8 only
  // What the fp8 choice kept in bf16, and why: lines for the run's start.
  const std::vector<std::string>& fp8_notes() const { return fp8_notes_; }
  const Freezer& freezer() const { return *freezer_; }  // train.freeze

  // The optimizer step after a step's backward passes, then the loss-scale update (fp16) or the
  // fp8 scales' (fp8, from every rank's amaxes with `ranks`); the parameters train.freeze names
  // stay as they were.
  void update(int64_t step, double lr, Communicator* ranks = nullptr);

 private:
  std::unique_ptr<Model> model_;
  std::unique_ptr<Freezer> freezer_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<LossScaler> scaler_;
  std::unique_ptr<Fp8Training> fp8_;
  std::vector<std::string> fp8_notes_;
};

}  // namespace hwt
