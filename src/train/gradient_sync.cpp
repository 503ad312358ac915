#include "train/gradient_sync.h"

#include <algorithm>

#include "core/error.h"

namespace hwt {

std::vector<GradientBucket> gradient_buckets(const Model& model, int64_t bucket_elements) {
  HWT_CHECK(bucket_elements > 0, "bucket of {} elements", bucket_elements);
  const ParamStore& ps = model.params();
  // The latest stage that writes each element range: a parameter's gradient is final after
  // its stage; padding elements are never written and wait for nothing.
  auto ready_stage = [&](int64_t lo, int64_t hi) {
    int64_t stage = 0;
    for (size_t i = 0; i < ps.infos().size(); ++i) {
      const ParamInfo& p = ps.infos()[i];
      if (p.offset < hi && p.offset + p.shape.numel() > lo)
        stage = std::max(stage, model.grad_stage(i));
    }
    return stage;
  };
  std::vector<GradientBucket> out;
  for (auto [begin, end] : {std::pair{int64_t{0}, ps.n_decay()}, {ps.n_decay(), ps.count()}})
    for (int64_t hi = end; hi > begin; hi -= bucket_elements) {
      const int64_t lo = std::max(begin, hi - bucket_elements);
      out.push_back({lo, hi - lo, ready_stage(lo, hi)});
    }
  // Ready first goes first; among equals the later part of the buffer (the later layers).
  std::stable_sort(out.begin(), out.end(), [](const GradientBucket& a, const GradientBucket& b) {
    return a.ready_stage != b.ready_stage ? a.ready_stage < b.ready_stage : a.offset > b.offset;
  });
  return out;
}

GradientSync::GradientSync(Communicator& comm, Model& model, const TrainConfig& train)
    : comm_(comm), model_(model) {
  const int64_t bytes_per = train.grad_reduce == GradReduce::Bf16 ? 2 : 4;
  const auto elements = static_cast<int64_t>(train.bucket_mb * 1024 * 1024) / bytes_per;
  buckets_ = gradient_buckets(model, std::max<int64_t>(1, elements));
  if (train.grad_reduce == GradReduce::Bf16)
    bf16_ = DeviceBuffer(model.backend(), static_cast<size_t>(model.params().count()) * 2);
}

GradientSync::~GradientSync() {
  model_.set_backward_hook({});
}

void GradientSync::start() {
  launched_ = 0;
  model_.set_backward_hook([this](int64_t stage) { launch_ready(stage); });
}

void GradientSync::launch_ready(int64_t stage) {
  const Tensor grads = model_.params().grads_flat();
  Backend& be = model_.backend();
  for (; launched_ < buckets_.size() && buckets_[launched_].ready_stage <= stage; ++launched_) {
    const GradientBucket& b = buckets_[launched_];
    const Tensor g = grads.flat_slice(b.offset, b.count);
    if (!bf16_.data()) {
      comm_.all_reduce_sum(g);
      continue;
    }
    const Tensor h = bf16_.tensor(DType::BF16, Shape{b.count}, static_cast<size_t>(b.offset) * 2);
    be.convert({h, g});
    comm_.all_reduce_sum(h);
  }
}

void GradientSync::finish() {
  launch_ready(model_.backward_stages());
  model_.set_backward_hook({});
  comm_.wait();
  if (!bf16_.data()) return;
  const Tensor grads = model_.params().grads_flat();
  for (const GradientBucket& b : buckets_)
    model_.backend().convert(
        {grads.flat_slice(b.offset, b.count),
         bf16_.tensor(DType::BF16, Shape{b.count}, static_cast<size_t>(b.offset) * 2)});
}

}  // namespace hwt
