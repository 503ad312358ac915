#include "train/fp8_training.h"

#include <algorithm>
#include <cmath>

#include "backend/fp8_linear.h"
#include "core/error.h"

namespace hwt {
namespace {

std::vector<std::string> tensor_names(const std::vector<Fp8Layer>& layers,
                                      std::initializer_list<const char*> suffixes) {
  std::vector<std::string> names;
  for (const Fp8Layer& l : layers)
    for (const char* s : suffixes) names.push_back(l.name + s);
  return names;
}

std::vector<Fp8Layer> without_bf16(std::vector<Fp8Layer> layers) {
  std::erase_if(layers, [](const Fp8Layer& l) { return !l.any(); });
  return layers;
}

Fp8Scaled scaled(const Fp8DelayedScaling& s, int64_t t) {
  return {s.scale(t), s.scale_inv(t), s.amax(t), s.counts(t)};
}

}  // namespace

std::vector<Fp8Layer> fp8_layers(const Model& model) {
  const ParamStore& ps = model.params();
  std::vector<Fp8Layer> layers;
  for (const ParamStore::Handle w : model.linear_weights()) {
    const ParamInfo& info = ps.infos()[w];
    if (info.shape[0] % 16 != 0 || info.shape[1] % 16 != 0) continue;
    std::string name = info.linear_weight ? info.name : "head.lm";
    if (name.ends_with(".weight")) name.resize(name.size() - 7);
    layers.push_back({w, std::move(name), info.shape[0], info.shape[1]});
  }
  return layers;
}

Fp8Training::Fp8Training(Model& model, const Fp8ScalingOptions& o, std::vector<Fp8Layer> layers,
                         int64_t max_rows)
    : model_(model),
      layers_(without_bf16(std::move(layers))),
      operands_(model.backend(), o, Fp8Format::E4M3, tensor_names(layers_, {".x", ".w"})),
      gradients_(model.backend(), o, Fp8Format::E5M2, tensor_names(layers_, {".dy"})) {
  size_t bytes = 0;
  for (const Fp8Layer& l : layers_)
    bytes = std::max(bytes, fp8_linear_workspace_bytes(max_rows, l.out, l.in));
  workspace_ = DeviceBuffer(model.backend(), bytes);
  const Tensor workspace = workspace_.tensor(DType::F8E4M3, Shape{static_cast<int64_t>(bytes)});
  int64_t kept = 0;  // the wᵀ copies kept from forward to backward, one after another
  for (const Fp8Layer& l : layers_) kept += l.keeps_w_t() ? l.out * l.in : 0;
  weights_t_ = DeviceBuffer(model.backend(), static_cast<size_t>(kept));
  const Tensor weights_t = weights_t_.tensor(DType::F8E4M3, Shape{kept});
  int64_t at = 0;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const Fp8Layer& l = layers_[i];
    const auto t = static_cast<int64_t>(i);
    Fp8Linear f;
    f.x = scaled(operands_, 2 * t);
    f.w = scaled(operands_, 2 * t + 1);
    f.dy = scaled(gradients_, t);
    f.forward = l.forward;
    f.input_grad = l.input_grad;
    f.weight_grad = l.weight_grad;
    f.workspace = workspace;
    if (l.keeps_w_t()) {
      f.w_t = fp8_copy_in(weights_t, at, DType::F8E4M3, l.in, l.out);
      at += l.out * l.in;
    }
    table_.set(l.weight, f);
  }
  model_.set_fp8(&table_);
}

Fp8Training::~Fp8Training() {
  model_.set_fp8(nullptr);
}

void Fp8Training::end_step(Communicator* ranks) {
  operands_.update(ranks);
  gradients_.update(ranks);
}

std::vector<Fp8TensorFigures> Fp8Training::take_figures() {
  std::vector<Fp8TensorFigures> figures;
  for (Fp8DelayedScaling* s : {&operands_, &gradients_}) {
    const std::vector<float> scales = s->read_scales();
    const std::vector<Fp8Counts> counts = s->take_counts();
    for (size_t t = 0; t < scales.size(); ++t)
      figures.push_back({s->names()[t], scales[t], counts[t]});
  }
  return figures;
}

std::optional<std::string> Fp8Training::collapsed() const {
  if (auto why = operands_.collapsed()) return why;
  return gradients_.collapsed();
}

std::vector<float> Fp8Training::state() const {
  std::vector<float> s = operands_.state();
  const std::vector<float> g = gradients_.state();
  s.insert(s.end(), g.begin(), g.end());
  return s;
}

void Fp8Training::restore(const std::vector<float>& state) {
  const int64_t split = operands_.state_size();
  if (std::ssize(state) < split)
    fail_input("fp8 scaling state of {} values: the layers in fp8 need more", state.size());
  operands_.restore(std::vector<float>(state.begin(), state.begin() + split));
  gradients_.restore(std::vector<float>(state.begin() + split, state.end()));
}

nlohmann::json fp8_metrics(const std::vector<Fp8TensorFigures>& figures) {
  nlohmann::json tensors = nlohmann::json::object();
  int64_t overflow = 0, underflow = 0, non_finite = 0;
  float lo = INFINITY, hi = 0.0f;
  for (const Fp8TensorFigures& f : figures) {
    lo = std::min(lo, f.scale);
    hi = std::max(hi, f.scale);
    const Fp8Counts& c = f.counts;
    overflow += c.overflow;
    underflow += c.underflow;
    non_finite += c.non_finite;
    if (c.overflow + c.underflow + c.non_finite > 0)
      tensors[f.name] = {{"scale", f.scale},
                         {"overflow", c.overflow},
                         {"underflow", c.underflow},
                         {"non_finite", c.non_finite}};
  }
  nlohmann::json j = {{"overflow", overflow}, {"underflow", underflow}, {"non_finite", non_finite}};
  if (!figures.empty()) {
    j["scale_min"] = lo;
    j["scale_max"] = hi;
  }
  j["tensors"] = std::move(tensors);
  return j;
}

}  // namespace hwt
