#include "accel/sparsity_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "accel/operand_points.h"

namespace hwt::accel {
namespace {

// "param_grads 0.412, grad.mlp.fc1 0.2" over the measured points that do (or do not) apply.
std::string measured_list(const Sparsity& s, TraceMode mode, bool applying) {
  std::string out;
  for (size_t i = 0; i < kPrunePoints; ++i) {
    const auto p = static_cast<PrunePoint>(i);
    if (!s.measured[i] || point_applies(p, mode) != applying) continue;
    out += fmt::format("{}{} {:.4g}", out.empty() ? "" : ", ", prune_point_name(p), *s.measured[i]);
  }
  return out;
}

}  // namespace

nlohmann::json sparsity_json(const Sparsity& s, TraceMode mode) {
  nlohmann::json j = {{"activation", {{"value", s.activation}, {"source", s.activation_source}}},
                      {"weight", {{"value", s.weight}, {"source", s.weight_source}}},
                      {"gradient", {{"value", s.gradient}, {"source", s.gradient_source}}}};
  if (!s.any_measured()) return j;
  nlohmann::json points = nlohmann::json::object();
  for (size_t i = 0; i < kPrunePoints; ++i)
    if (s.measured[i]) {
      const auto p = static_cast<PrunePoint>(i);
      points[std::string(prune_point_name(p))] = {{"value", *s.measured[i]},
                                                  {"used", point_applies(p, mode)}};
    }
  j["measured"] = {{"file", s.measured_file},
                   {"tau_infer", s.measured_thresholds.tau_infer},
                   {"tau_train", s.measured_thresholds.tau_train},
                   {"tau_act_grad", s.measured_thresholds.tau_act_grad},
                   {"points", points}};
  return j;
}

std::string format_sparsity(const Sparsity& s, TraceMode mode) {
  std::string out;
  if (s.any_measured()) {
    const PruneConfig& t = s.measured_thresholds;
    const std::string used = measured_list(s, mode, true), unused = measured_list(s, mode, false);
    out +=
        fmt::format("sparsity  measured in {} (tau_infer {}, tau_train {}, tau_act_grad {}): {}\n",
                    s.measured_file, t.tau_infer, t.tau_train, t.tau_act_grad,
                    used.empty() ? "none applies" : used);
    if (!unused.empty())
      out += fmt::format("          not for {}: {}\n",
                         mode == TraceMode::Train ? "a training step (DynaTran prunes inference)"
                                                  : "inference (gradients)",
                         unused);
  }
  out +=
      fmt::format("{}activations {} ({}), weights {} ({}), gradients {} ({})\n",
                  s.any_measured() ? "          every other tensor: " : "sparsity  ", s.activation,
                  s.activation_source, s.weight, s.weight_source, s.gradient, s.gradient_source);
  return out;
}

}  // namespace hwt::accel
