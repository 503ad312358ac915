#include "accel/operand_points.h"

#include <map>
#include <string>
#include <utility>

#include "core/error.h"

namespace hwt::accel {
namespace {

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A dense layer's tensors: its input and output (forward), the gradient of its output it reads
// (dy) and the input gradient it writes (dx) in the backward pass.
struct LayerPoints {
  std::optional<PrunePoint> in, out, dy, dx;
};

// The `index`-th dense layer (0 or 1) of a block sublayer in the given scope and phase.
LayerPoints layer_points(bool attn, Phase phase, int index) {
  const bool first = (index == 0) == (phase == Phase::Forward);
  if (attn)
    return first ? LayerPoints{std::nullopt, PrunePoint::Qkv, std::nullopt, PrunePoint::QkvGrad}
                 : LayerPoints{PrunePoint::AttnContext, PrunePoint::AttnOut, std::nullopt,
                               PrunePoint::AttnOutGrad};
  // fc1's dy is the input gradient fc2 writes; fc2's dy comes from the residual (not pruned).
  return first
             ? LayerPoints{std::nullopt, PrunePoint::Fc1, PrunePoint::Fc2Grad, PrunePoint::Fc1Grad}
             : LayerPoints{PrunePoint::Fc1, PrunePoint::Fc2, std::nullopt, PrunePoint::Fc2Grad};
}

GemmPoints linear_points(GemmRole role, const LayerPoints& l) {
  switch (role) {
    case GemmRole::LinearForward:
      return {l.in, std::nullopt, l.out};
    case GemmRole::LinearInputGrad:
      return {l.dy, std::nullopt, l.dx};
    case GemmRole::LinearWeightGrad:
      return {l.dy, std::nullopt, PrunePoint::LinearWeightGrads};
    default:
      return {};
  }
}

// Q, K and V are slices of the q|k|v output; the attention's output gradient dO is the input
// gradient attn.out writes. dQ|dK|dV are not pruned.
GemmPoints attention_points(GemmRole role) {
  switch (role) {
    case GemmRole::AttentionScores:
      return {PrunePoint::Qkv, PrunePoint::Qkv, PrunePoint::AttnScores};
    case GemmRole::AttentionContext:
      return {PrunePoint::AttnProbs, PrunePoint::Qkv, PrunePoint::AttnContext};
    case GemmRole::AttentionValueGrad:
      return {std::nullopt, PrunePoint::AttnOutGrad, std::nullopt};
    case GemmRole::AttentionProbGrad:
      return {PrunePoint::AttnOutGrad, std::nullopt, std::nullopt};
    default:
      return {};
  }
}

void keep_applicable(std::optional<PrunePoint>& p, TraceMode mode) {
  if (p && !point_applies(*p, mode)) p.reset();
}

}  // namespace

bool point_applies(PrunePoint p, TraceMode mode) {
  switch (p) {
    case PrunePoint::Qkv:
    case PrunePoint::AttnScores:
    case PrunePoint::AttnProbs:
    case PrunePoint::AttnContext:
    case PrunePoint::AttnOut:
    case PrunePoint::Fc1:
    case PrunePoint::Fc2:
      return mode == TraceMode::Infer;
    case PrunePoint::QkvGrad:
    case PrunePoint::AttnOutGrad:
    case PrunePoint::Fc1Grad:
    case PrunePoint::Fc2Grad:
    case PrunePoint::ParamGrads:
    case PrunePoint::LinearWeightGrads:
      return mode == TraceMode::Train;
  }
  return false;
}

std::vector<std::vector<GemmPoints>> gemm_points(const Workload& w, TraceMode mode) {
  std::map<std::pair<std::string, Phase>, int> layers_seen;  // per block sublayer and phase
  std::vector<std::vector<GemmPoints>> out;
  for (const OpRecord& r : w.ops) {
    const bool block = r.scope.rfind("layers.", 0) == 0;
    const bool attn = block && ends_with(r.scope, ".attn"),
               mlp = block && ends_with(r.scope, ".mlp");
    const bool linear = r.op == Op::linear_forward || r.op == Op::linear_backward;
    LayerPoints layer;
    if (linear && (attn || mlp)) {
      const int index = layers_seen[{r.scope, r.phase}]++;
      if (index > 1)
        fail_input(
            "--sparsity: {} has more than two dense layers in its {} pass; measured sparsity "
            "maps onto dense blocks only (not tensor-train layers, model.tt.*)",
            r.scope, phase_name(r.phase));
      layer = layer_points(attn, r.phase, index);
    }
    std::vector<GemmPoints>& ops = out.emplace_back();
    for (const GemmCall& g : r.gemms) {
      GemmPoints p = r.kind == OpKind::Attention && attn ? attention_points(g.role)
                     : linear                            ? linear_points(g.role, layer)
                                                         : GemmPoints{};
      keep_applicable(p.a, mode);
      keep_applicable(p.b, mode);
      keep_applicable(p.c, mode);
      ops.push_back(p);
    }
  }
  return out;
}

}  // namespace hwt::accel
