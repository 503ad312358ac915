// train.freeze at work: the parameters it names keep their values bit for bit. Before each
// optimizer step their gradients are set to zero (so gradient clipping and the optimizer's
// moments never see them); after it their values, and their compute-dtype copies, are put back
// from a copy taken at the first step (weight decay, and Adan's and AdamW's steps on zero
// gradients, would otherwise still move them). Their gradients are still computed.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "config/freeze_spec.h"
#include "model/param_store.h"

namespace hwt {

class Freezer {
 public:
  // The parameters of `params` that `spec` names: embed.* (embeddings, also the LM head when it
  // is tied to them), layers.<i>.*, final_ln.* and head.*.
  Freezer(const FreezeSpec& spec, ParamStore& params);
  bool empty() const { return runs_.empty(); }
  int64_t frozen_parameters() const { return frozen_; }  // without padding
  void before_step();
  void after_step();

 private:
  ParamStore& params_;
  std::vector<std::pair<int64_t, int64_t>> runs_;  // (offset, elements) in the flat buffers
  int64_t frozen_ = 0, elements_ = 0;
  DeviceBuffer saved_;  // the frozen runs' values, back to back; empty until the first step
};

}  // namespace hwt
