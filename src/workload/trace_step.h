// The one way from a run config to a workload. trace_step builds the model, optimizer and loss
// scaler as `hwt train` does (train/run_setup.h), on the TraceBackend, and records one
// training step (forward, backward, optimizer) or one inference forward. `hwt flops`,
// `hwt shape`, `hwt sim` and every later analysis get their op list from here.
#pragma once

#include <cstdint>

#include "backend/trace/workload.h"
#include "config/run_config.h"
#include "train/fp8_training.h"

namespace hwt {

enum class TraceMode : uint8_t { Train, Infer };

// A run config at one micro-batch shape. The config decides the model, the precision
// (activation dtype, fp16 loss scaling), the optimizer and gradient clipping.
struct StepSpec {
  RunConfig config;
  int64_t batch = 1, seq = 1;
  TraceMode mode = TraceMode::Train;
  // train.precision = "fp8": which linear products run in fp8 on the GPU the step is priced on.
  // Without one the step's GEMMs stay in bf16 and the analyses price them at fp8 themselves.
  Fp8Chooser choose_fp8;
};

// The step a run config describes: batch = train.batch_size and seq = data.max_len unless given
// (> 0). Vocabulary and label counts left to the data (0) get stated stand-ins, so analyses run
// without a dataset: data.max_vocab tokens for a word tokenizer (the most it keeps), 50257 for
// GPT-2's, 30522 (BERT's vocabulary) for a character one, 2 sequence and 8 token classes.
StepSpec step_spec(RunConfig config, int64_t batch = 0, int64_t seq = 0,
                   TraceMode mode = TraceMode::Train);

// Raises InputError for a step shape the model cannot plan (longer than model.max_seq, empty).
void check_step_shape(const StepSpec& s);

Workload trace_step(const StepSpec& s);

}  // namespace hwt
