// `hwt flops`: trace one training step of a config and print its ops with FLOPs and bytes.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/config_options.h"
#include "report/si_prefix.h"

namespace hwt {
namespace {

void print_table(const Workload& w) {
  fmt::print("{:<28} {:<20} {:<10} {:>10} {:>10}  {}\n", "scope", "op", "phase", "FLOPs", "bytes",
             "shapes");
  for (const OpRecord& r : w.ops)
    fmt::print("{:<28} {:<20} {:<10} {:>10} {:>10}  {}\n", r.scope, op_name(r.op),
               phase_name(r.phase), si_prefixed(r.flops),
               si_prefixed(r.bytes_read + r.bytes_written), r.detail);
  fmt::print("\n{:<12} {:>12} {:>12} {:>12}\n", "phase", "FLOPs", "GEMM FLOPs", "bytes");
  for (Phase p : {Phase::Forward, Phase::Backward, Phase::Optimizer}) {
    double bytes = 0;
    for (const OpRecord& r : w.ops)
      if (r.phase == p) bytes += r.bytes_read + r.bytes_written;
    fmt::print("{:<12} {:>12} {:>12} {:>12}\n", phase_name(p), si_prefixed(w.flops(p)),
               si_prefixed(w.gemm_flops(p)), si_prefixed(bytes));
  }
  fmt::print("{:<12} {:>12} {:>12} {:>12}\n", "total", si_prefixed(w.total_flops()),
             si_prefixed(w.gemm_flops(Phase::Forward) + w.gemm_flops(Phase::Backward)),
             si_prefixed(w.total_bytes()));
  fmt::print("\nparameters {} ({}), batch {} x seq {}, memory planned {}B\n", w.parameters,
             si_prefixed(static_cast<double>(w.parameters)), w.batch, w.seq,
             si_prefixed(w.peak_bytes));
}

}  // namespace

void add_flops_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("flops", "Per-op FLOPs and bytes of one traced training step");
  struct Opts {
    ConfigOptions config;
    bool json = false, infer = false;
  };
  auto o = std::make_shared<Opts>();
  add_step_options(cmd, o->config);
  cmd->add_flag("--infer", o->infer, "Trace an inference forward instead of a training step");
  cmd->add_flag("--json", o->json, "Print the workload as JSON");
  cmd->callback([o] {
    const RunConfig c = o->config.load();
    const StepSpec s = o->config.step(c, o->infer ? TraceMode::Infer : TraceMode::Train);
    const Workload w = trace_step(s);
    if (o->json) {
      fmt::print("{}\n", nlohmann::json(w).dump(1));
      return;
    }
    if (c.model.vocab_size == 0)
      fmt::print("note: model.vocab_size is 0 (set by the tokenizer); using {} here\n",
                 s.config.model.vocab_size);
    print_table(w);
  });
}

}  // namespace hwt
