// `hwt estimate --gpus N --link nvlink|pcie|ib`: the step of data-parallel training on N of each
// GPU (analysis/data_parallel.h), without and with ZeRO-1, as a table or JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/step_estimate.h"
#include "workload/trace_step.h"

namespace hwt {

struct GpuEstimate {
  const GpuSpec* gpu;
  Precision precision;       // the step's on this GPU (GpuSpec::precision_for)
  const Workload* workload;  // the step traced at `precision`
  StepEstimate step;
};

// The GPU counts the scaling table shows for `--gpus N`: 1, 2, 4, … below N, and N. The list and
// range forms of earlier releases ("1,2,4,8", "1-8", "1-4,8") still give exactly the counts
// named, with a deprecation warning. InputError naming --gpus otherwise.
std::vector<int64_t> parse_gpu_counts(const std::string& text);

struct DataParallelRequest {
  std::string gpus;  // as --gpus gives it
  std::string link;  // as --link gives it
  bool json = false;
};

// Checks the request against every GPU before printing anything.
void print_data_parallel(const DataParallelRequest& r, const std::string& config_name,
                         const StepSpec& spec, const std::vector<GpuEstimate>& gpus);

}  // namespace hwt
