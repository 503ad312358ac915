#include "analysis/data_parallel.h"

#include <algorithm>
#include <map>

#include "core/error.h"

namespace hwt {
namespace {

// "layers.3.ln1.weight" -> "layers.3"; "" outside the blocks.
std::string block_of(const std::string& param) {
  if (!param.starts_with("layers.")) return "";
  return param.substr(0, param.find('.', 7));
}

// When the backward ops that write a parameter's gradient end: those of the scope that prefixes
// its name ("layers.3.mlp" for "layers.3.mlp.fc1.weight"), else those of its block ("layers.3"
// for the block's layernorms, which the trace scopes with the sublayer that uses them). A tied
// weight takes the last scope's end. The end of the backward pass if no scope names it.
double ready_time(const std::string& param, const std::map<std::string, double>& scope_end,
                  double backward_end) {
  double own = -1, block = -1;
  const std::string b = block_of(param);
  for (const auto& [scope, end] : scope_end) {
    if (param.starts_with(scope + ".")) own = std::max(own, end);
    if (!b.empty() && scope.starts_with(b + ".")) block = std::max(block, end);
  }
  if (own >= 0) return own;
  return block >= 0 ? block : backward_end;
}

}  // namespace

double ring_all_reduce_seconds(double bytes, int64_t gpus, const LinkSpec& link) {
  const double steps = 2.0 * static_cast<double>(gpus - 1);
  return steps * link.latency_us * 1e-6 +
         steps / static_cast<double>(gpus) * bytes / (link.bus_gbs * 1e9);
}

double ring_reduce_scatter_seconds(double bytes, int64_t gpus, const LinkSpec& link) {
  const double steps = static_cast<double>(gpus - 1);
  return steps * link.latency_us * 1e-6 +
         steps / static_cast<double>(gpus) * bytes / (link.bus_gbs * 1e9);
}

std::vector<GradBucket> form_buckets(const std::vector<GradientReady>& grads,
                                     double bytes_per_element, double cap_bytes) {
  std::vector<GradBucket> out;
  GradBucket open;
  for (const GradientReady& g : grads) {
    const double bytes = static_cast<double>(g.elements) * bytes_per_element;
    if (!open.params.empty() && open.bytes + bytes > cap_bytes) {
      out.push_back(std::move(open));
      open = GradBucket{};
    }
    open.params.push_back(g.name);
    open.bytes += bytes;
    open.ready_s = std::max(open.ready_s, g.ready_s);
  }
  if (!open.params.empty()) out.push_back(std::move(open));
  return out;
}

StepTimeline step_timeline(const Workload& w, const StepEstimate& e) {
  HWT_CHECK(e.op_seconds.size() == w.ops.size(), "the estimate is of another workload");
  StepTimeline t;
  std::map<std::string, double> scope_end;  // backward ops only
  for (size_t i = 0; i < w.ops.size(); ++i) {
    const OpRecord& op = w.ops[i];
    if (op.phase == Phase::Optimizer) {
      t.optimizer_sharded_s += kSustainedRateFactor * e.op_seconds[i];
      t.optimizer_fixed_s += kOpGapSeconds;
      continue;
    }
    t.backward_end_s += with_overhead(e.op_seconds[i]);
    if (op.phase == Phase::Backward) scope_end[op.scope] = t.backward_end_s;
  }
  // DDP's order: by ready time, and within a scope the reverse of the parameters' order.
  for (auto p = w.params.rbegin(); p != w.params.rend(); ++p) {
    t.gradients.push_back({p->name, p->elements, ready_time(p->name, scope_end, t.backward_end_s)});
    t.parameters += static_cast<double>(p->elements);
  }
  std::stable_sort(
      t.gradients.begin(), t.gradients.end(),
      [](const GradientReady& a, const GradientReady& b) { return a.ready_s < b.ready_s; });
  return t;
}

DataParallelEstimate estimate_ddp(const StepTimeline& t, const DataParallelOptions& o) {
  DataParallelEstimate r;
  r.gpus = o.gpus;
  r.compute_s = t.backward_end_s;
  r.optimizer_s = t.optimizer_sharded_s + t.optimizer_fixed_s;
  // One link: a bucket's all-reduce starts when its last gradient is written and the previous
  // bucket's all-reduce has finished.
  double link_free = 0;
  if (o.gpus > 1) {
    const std::vector<GradBucket> buckets = form_buckets(t.gradients, o.grad_bytes, o.bucket_bytes);
    for (const GradBucket& b : buckets) {
      const double s = ring_all_reduce_seconds(b.bytes, o.gpus, o.link);
      link_free = std::max(link_free, b.ready_s) + s;
      r.comm_s += s;
    }
    r.buckets = buckets.size();
  }
  const double backward_done = std::max(t.backward_end_s, link_free);
  r.exposed_s = backward_done - t.backward_end_s;
  r.step_s = backward_done + r.optimizer_s;
  r.scaling = t.single_s() / r.step_s;
  return r;
}

DataParallelEstimate estimate_zero1(const StepTimeline& t, const DataParallelOptions& o) {
  DataParallelEstimate r;
  r.gpus = o.gpus;
  r.zero = true;
  r.compute_s = t.backward_end_s;
  const double n = static_cast<double>(o.gpus);
  r.optimizer_s = t.optimizer_sharded_s / n + t.optimizer_fixed_s;
  r.comm_s = ring_reduce_scatter_seconds(t.parameters * o.grad_bytes, o.gpus, o.link) +
             ring_all_gather_seconds(t.parameters * o.param_bytes, o.gpus, o.link);
  r.exposed_s = r.comm_s;
  r.step_s = r.compute_s + r.comm_s + r.optimizer_s;
  r.scaling = t.single_s() / r.step_s;
  r.optimizer_state_saved_bytes = o.optimizer_state_bytes * (n - 1) / n;
  return r;
}

}  // namespace hwt
