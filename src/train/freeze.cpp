#include "train/freeze.h"

#include <algorithm>
#include <string_view>

namespace hwt {
namespace {

bool named(const FreezeSpec& spec, std::string_view name) {
  if (name.starts_with("embed.")) return spec.embeddings;
  if (name.starts_with("final_ln.")) return spec.final_norm;
  if (name.starts_with("head.")) return spec.head;
  if (name.starts_with("layers.")) {
    name.remove_prefix(7);
    int64_t i = 0;
    for (; !name.empty() && name.front() >= '0' && name.front() <= '9'; name.remove_prefix(1))
      i = 10 * i + (name.front() - '0');
    return spec.freezes_layer(i);
  }
  return false;
}

}  // namespace

Freezer::Freezer(const FreezeSpec& spec, ParamStore& params) : params_(params) {
  std::vector<const ParamInfo*> frozen;
  for (const ParamInfo& p : params.infos())
    if (named(spec, p.name)) frozen.push_back(&p);
  std::sort(frozen.begin(), frozen.end(),
            [](const ParamInfo* a, const ParamInfo* b) { return a->offset < b->offset; });
  // Neighbours in the flat buffers become one run, so each step is a few copies, not one per
  // parameter.
  for (const ParamInfo* p : frozen) {
    const int64_t n = p->shape.numel();
    frozen_ += p->data_shape().numel();
    elements_ += n;
    if (!runs_.empty() && runs_.back().first + runs_.back().second == p->offset)
      runs_.back().second += n;
    else
      runs_.emplace_back(p->offset, n);
  }
}

void Freezer::before_step() {
  if (empty()) return;
  Backend& be = params_.backend();
  const bool first = saved_.bytes() == 0;
  if (first) saved_ = DeviceBuffer(be, static_cast<size_t>(elements_) * sizeof(float));
  const Tensor saved = saved_.tensor(DType::F32, Shape{elements_});
  int64_t at = 0;
  for (const auto& [offset, n] : runs_) {
    if (first) be.copy({saved.flat_slice(at, n), params_.params_flat().flat_slice(offset, n)});
    be.fill({params_.grads_flat().flat_slice(offset, n), 0.0f});
    at += n;
  }
}

void Freezer::after_step() {
  if (empty()) return;
  Backend& be = params_.backend();
  const Tensor saved = saved_.tensor(DType::F32, Shape{elements_});
  const Tensor compute = params_.compute_flat();
  int64_t at = 0;
  for (const auto& [offset, n] : runs_) {
    const Tensor master = params_.params_flat().flat_slice(offset, n);
    be.copy({master, saved.flat_slice(at, n)});
    if (compute.defined()) be.convert({compute.flat_slice(offset, n), master});
    at += n;
  }
}

}  // namespace hwt
