// `hwt memory`: the bytes one training step of a config holds, per layer and stage, dense
// against tensor-train, per precision, and whether it fits a memory budget.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli/commands.h"
#include "cli/config_options.h"
#include "core/text_number.h"
#include "report/si_prefix.h"
#include "workload/memory_plan.h"

namespace hwt {
namespace {

struct Opts {
  ConfigOptions config;
  std::string precision;
  std::string budget;
  bool json = false, has_budget = false;  // --budget '' is an error, not "no budget"
};

// "6MB" (one memory) or "6MB,22.5MB" (BRAM, URAM; memory_plan.h places the stages).
std::vector<double> parse_budget(const std::string& list) {
  std::vector<double> out;
  std::stringstream in(list);
  for (std::string part; std::getline(in, part, ',');) {
    const auto bytes = parse_byte_size(part);
    if (!bytes)
      fail_input(
          "--budget '{}': '{}' is not a positive size with a unit (B, KB, MB, GB, KiB, MiB, "
          "GiB)",
          list, part);
    out.push_back(*bytes);
  }
  if (out.empty() || out.size() > 2 || list.back() == ',')
    fail_input("--budget '{}': give one size, or two: BRAM,URAM", list);
  return out;
}

// The budget's verdict: one memory filled in stage order, or BRAM and URAM each with the stages
// placed in it (`all` then sums them and names the first stage that overflows its memory).
struct Budget {
  std::vector<double> caps;
  BudgetCheck all;
  std::optional<SplitBudgetCheck> split;
};

Budget check(const MemoryPlan& plan, const std::vector<double>& caps) {
  if (caps.size() == 1) return {caps, check_budget(plan, caps[0]), std::nullopt};
  const SplitBudgetCheck split = check_split_budget(plan, caps[0], caps[1]);
  const BudgetCheck all{caps[0] + caps[1], split.bram.needed + split.uram.needed, split.overflow()};
  return {caps, all, split};
}

std::string stage_key(MemoryStage s) {
  std::string k(memory_stage_name(s));
  std::replace(k.begin(), k.end(), ' ', '_');
  return k;
}

nlohmann::json row_json(const MemoryRow& r) {
  nlohmann::json j = {{"layer", r.layer}, {"total", r.total()}};
  for (MemoryStage s : kMemoryStages) j[stage_key(s)] = r[s];
  return j;
}

nlohmann::json plan_json(const MemoryPlan& p, bool with_layers) {
  nlohmann::json j = {{"precision", precision_name(p.precision)},
                      {"tensor_train", p.tensor_train},
                      {"parameter_count", p.parameters},
                      {"total", row_json(p.total)},
                      {"other", p.other},
                      {"allocated", p.allocated},
                      {"runtime",
                       {{"gemm_workspace", p.runtime.gemm_workspace},
                        {"allocation_rounding", p.runtime.allocation_rounding},
                        {"total", p.runtime.total()}}},
                      {"gpu_bytes", p.gpu_bytes()}};
  if (with_layers) {
    j["layers"] = nlohmann::json::array();
    for (const MemoryRow& r : p.layers) j["layers"].push_back(row_json(r));
  }
  return j;
}

void print_layers(const MemoryPlan& p) {
  fmt::print("{:<16}", "layer");
  for (MemoryStage s : kMemoryStages) fmt::print(" {:>15}", memory_stage_name(s));
  fmt::print(" {:>12}\n", "total");
  const auto print_row = [](const MemoryRow& r) {
    fmt::print("{:<16}", r.layer);
    for (MemoryStage s : kMemoryStages) fmt::print(" {:>15}", si_prefixed(r[s], 4, "B"));
    fmt::print(" {:>12}\n", si_prefixed(r.total(), 4, "B"));
  };
  for (const MemoryRow& r : p.layers) print_row(r);
  print_row(p.total);
  fmt::print("other (gradient norm, fp16 loss scale): {}; planned: {}\n",
             si_prefixed(p.other, 4, "B"), si_prefixed(p.allocated, 4, "B"));
  fmt::print("runtime on a GPU: cuBLASLt workspace {}, cudaMalloc's 2 MiB pages {}; GPU total {}\n",
             si_prefixed(p.runtime.gemm_workspace, 4, "B"),
             si_prefixed(p.runtime.allocation_rounding, 4, "B"),
             si_prefixed(p.gpu_bytes(), 4, "B"));
  fmt::print(
      "  (not counted: the CUDA context, kernel code, the CUDA backend's scratch for "
      "attention and norm backward)\n");
}

std::string verdict(const BudgetCheck& b) {
  if (!b.overflow) return fmt::format("fits ({} needed)", si_prefixed(b.needed, 4, "B"));
  return fmt::format("does not fit: {} overflow first ({} needed)", memory_stage_name(*b.overflow),
                     si_prefixed(b.needed, 4, "B"));
}

std::string stages_in(OnChipMemory m) {
  std::vector<std::string_view> names;
  for (MemoryStage s : kMemoryStages)
    if (placed_in(s) == m) names.push_back(memory_stage_name(s));
  return fmt::format("{}", fmt::join(names, ", "));
}

void print_budget(const Budget& b) {
  if (!b.split) {
    fmt::print("\nbudget {}: {}\n", si_prefixed(b.all.capacity, 4, "B"), verdict(b.all));
    return;
  }
  fmt::print("\nbudget BRAM {} + URAM {}:\n", si_prefixed(b.caps[0], 4, "B"),
             si_prefixed(b.caps[1], 4, "B"));
  for (OnChipMemory m : kOnChipMemories)
    fmt::print("  {} ({}): {}\n", on_chip_memory_name(m), stages_in(m), verdict(b.split->of(m)));
  if (b.all.overflow)
    fmt::print("does not fit: {} overflow first (in {})\n", memory_stage_name(*b.all.overflow),
               on_chip_memory_name(placed_in(*b.all.overflow)));
  else
    fmt::print("fits\n");
}

nlohmann::json check_json(const BudgetCheck& c) {
  nlohmann::json j = {{"capacity", c.capacity}, {"needed", c.needed}, {"fits", !c.overflow}};
  j["overflow"] = c.overflow ? nlohmann::json(stage_key(*c.overflow)) : nlohmann::json();
  return j;
}

nlohmann::json budget_json(const Budget& b) {
  nlohmann::json j = check_json(b.all);
  j["capacities"] = b.caps;
  if (b.split) {
    j["memories"] = nlohmann::json::array();
    for (OnChipMemory m : kOnChipMemories) {
      nlohmann::json mj = check_json(b.split->of(m));
      mj["memory"] = on_chip_memory_name(m);
      mj["stages"] = nlohmann::json::array();
      for (MemoryStage s : kMemoryStages)
        if (placed_in(s) == m) mj["stages"].push_back(stage_key(s));
      j["memories"].push_back(mj);
    }
  }
  return j;
}

// The totals at fp32, bf16 and the run's precision, for the model as configured and, when it
// has tensor-train layers, the same model dense.
struct Column {
  Precision precision;
  std::vector<MemoryPlan> models;  // as configured, then dense (tensor-train configs only)
};

std::vector<Column> precision_columns(const StepSpec& spec, const MemoryPlan& plan) {
  std::vector<Precision> precisions = {Precision::Fp32, Precision::Bf16};
  if (std::find(precisions.begin(), precisions.end(), plan.precision) == precisions.end())
    precisions.push_back(plan.precision);
  std::vector<Column> columns;
  for (Precision p : precisions) {
    StepSpec s = spec;
    s.config.train.precision = p;
    Column c{p, {p == plan.precision ? plan : plan_memory(s)}};
    if (plan.tensor_train) {
      s.config.model.tt = {};
      c.models.push_back(plan_memory(s));
    }
    columns.push_back(std::move(c));
  }
  return columns;
}

// A budget the plan overflows: the least recomputation past the configured one that fits it
// (each mode costs more time than the one before and saves more memory), or "full" where none
// does, checked against it (nullopt where there is no such budget).
struct RecomputeFit {
  Recompute mode;
  Budget budget;
};

std::optional<RecomputeFit> with_recompute(const StepSpec& spec, const Budget* budget,
                                           const std::vector<double>& caps) {
  if (!budget || !budget->all.overflow) return std::nullopt;
  std::optional<RecomputeFit> fit;
  for (Recompute mode : {Recompute::NormAct, Recompute::Attention, Recompute::Full}) {
    if (mode <= spec.config.train.recompute) continue;
    StepSpec s = spec;
    s.config.train.recompute = mode;
    fit = RecomputeFit{mode, check(plan_memory(s), caps)};
    if (!fit->budget.all.overflow) break;
  }
  return fit;
}

void print_json(const std::string& config, const StepSpec& spec, const MemoryPlan& plan,
                const std::vector<Column>& columns, const Budget* budget,  // null: no --budget
                const std::optional<RecomputeFit>& recompute) {
  nlohmann::json j = {{"config", config},
                      {"batch", spec.batch},
                      {"seq", spec.seq},
                      {"precision", precision_name(plan.precision)},
                      {"plan", plan_json(plan, true)},
                      {"precisions", nlohmann::json::array()}};
  for (const Column& c : columns) {
    nlohmann::json col = {{"precision", precision_name(c.precision)},
                          {"model", plan_json(c.models[0], false)}};
    if (c.models.size() > 1) col["dense"] = plan_json(c.models[1], false);
    j["precisions"].push_back(col);
  }
  if (budget) j["budget"] = budget_json(*budget);
  if (recompute) {
    j["budget"]["recompute"] = budget_json(recompute->budget);
    j["budget"]["recompute"]["mode"] = recompute_name(recompute->mode);
  }
  fmt::print("{}\n", j.dump(1));
}

void run(const Opts& o) {
  RunConfig rc = o.config.load();
  if (!o.precision.empty()) {
    const auto p = parse_precision(o.precision);
    if (!p) fail_input("--precision {}: use fp32, tf32, bf16, fp16 or fp8", o.precision);
    rc.train.precision = *p;
  }
  const std::vector<double> caps = o.has_budget ? parse_budget(o.budget) : std::vector<double>{};
  const StepSpec spec = o.config.step(rc);
  const MemoryPlan plan = plan_memory(spec);

  const std::vector<Column> columns = precision_columns(spec, plan);
  const std::optional<Budget> checked =
      caps.empty() ? std::nullopt : std::optional<Budget>(check(plan, caps));
  const Budget* budget = checked ? &*checked : nullptr;
  const std::optional<RecomputeFit> recompute = with_recompute(spec, budget, caps);

  if (o.json) return print_json(o.config.config, spec, plan, columns, budget, recompute);
  fmt::print("{} at {}, batch {} x seq {}: {} parameters{}\n\n", o.config.config,
             precision_name(plan.precision), spec.batch, spec.seq, plan.parameters,
             plan.tensor_train ? " (tensor train)" : "");
  print_layers(plan);
  fmt::print("\n{:<16}", "planned total");
  for (const Column& c : columns) fmt::print(" {:>12}", precision_name(c.precision));
  fmt::print("\n");
  for (size_t m = 0; m < columns.front().models.size(); ++m) {
    fmt::print("{:<16}", m == 0 ? (plan.tensor_train ? "tensor train" : "dense") : "dense");
    for (const Column& c : columns)
      fmt::print(" {:>12}", si_prefixed(c.models[m].allocated, 4, "B"));
    fmt::print("\n");
  }
  if (budget) print_budget(*budget);
  if (recompute)
    fmt::print("with train.recompute = \"{}\": {}\n", recompute_name(recompute->mode),
               verdict(recompute->budget.all));
}

}  // namespace

void add_memory_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "memory", "Bytes of one training step: parameters, gradients, optimizer state, activations");
  auto o = std::make_shared<Opts>();
  add_step_options(cmd, o->config);
  cmd->add_option("--precision", o->precision,
                  "fp32, tf32, bf16, fp16 or fp8 (default: train.precision)");
  CLI::Option* budget = cmd->add_option(
      "--budget", o->budget,
      "One memory (28.5MB), or BRAM,URAM (6MB,22.5MB: model state in BRAM, activations and "
      "intermediates in URAM): does the step fit, and which stage overflows first");
  cmd->add_flag("--json", o->json, "Print the plan as JSON");
  cmd->callback([o, budget] {
    o->has_budget = budget->count() > 0;
    run(*o);
  });
}

}  // namespace hwt
