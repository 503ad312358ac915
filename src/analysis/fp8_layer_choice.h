// The shape model's fp8 choice (fp8_choice.h) applied to a training run's fp8 layers
// (train/fp8_training.h): each product of a layer runs in fp8 where the GEMM group it belongs to
// in the traced step would, so a run trains what `hwt shape --precision fp8` lists.
#pragma once

#include <string>
#include <vector>

#include "analysis/gemm_model.h"
#include "analysis/step_gemms.h"
#include "hw/gpu_catalog.h"
#include "train/fp8_training.h"

namespace hwt {

// Sets each layer's product flags from the group of `gemms` (a step traced at `rows` rows of
// tokens) that holds the product; a product no group holds keeps its flag. Returns a line per
// group kept in bf16, with why.
std::vector<std::string> choose_fp8_products(const std::vector<StepGemm>& gemms,
                                             const GemmModel& fp8, const GemmModel& bf16,
                                             int64_t rows, std::vector<Fp8Layer>& layers);

// An Fp8Chooser for one GPU, whatever device the run names: choose_fp8_products on the run's
// step traced at fp8 (what `hwt estimate` prices a GPU that need not be at hand with). Both
// choosers leave every product in fp8, with a line saying so, where the run's
// train.fp8_products is "all".
Fp8Chooser fp8_chooser(const GpuSpec& gpu);

// An Fp8Chooser over the catalog's GPUs: traces the run's step and applies choose_fp8_products
// for the GPU the device name matches; on a GPU the catalog lacks, every product stays in fp8 and
// the one line returned says so.
Fp8Chooser fp8_chooser(GpuCatalog catalog);

}  // namespace hwt
