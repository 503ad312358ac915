// `hwt export --format hf`: an hwt checkpoint into a Hugging Face model folder (docs/interop.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "interop/hf_export.h"
#include "report/progress_meter.h"

namespace hwt {

void add_export_command(CLI::App& app) {
  CLI::App* cmd =
      app.add_subcommand("export",
                         "Write an hwt checkpoint as a Hugging Face model folder (config.json, "
                         "model.safetensors) that transformers' from_pretrained loads");
  struct Opts {
    std::string checkpoint, format, out, precision = "fp32";
    int64_t shard_bytes = kDefaultShardBytes;
    bool quiet = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("CHECKPOINT", o->checkpoint, "An hwt checkpoint (.safetensors)")->required();
  cmd->add_option("--format", o->format, "The format to write: hf (Hugging Face transformers)")
      ->required()
      ->check(CLI::IsMember({"hf"}));
  cmd->add_option("--out", o->out, "The model folder to create (absent or empty)")->required();
  cmd->add_option("--shard-bytes", o->shard_bytes,
                  "Largest shard of model.safetensors before it is split (default 5 GiB)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--precision", o->precision,
                  "The weights' dtype in the files: fp32, or bf16 or fp16 (half the size, each "
                  "weight rounded to nearest even; fp16 refuses weights past 65504)")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}))
      ->capture_default_str();
  cmd->add_flag("--quiet", o->quiet, "No progress output");
  cmd->callback([o] {
    ProgressMeter meter("export", "MB", !o->quiet);
    const ExportReport r = export_hf_model(
        o->checkpoint, o->out, o->shard_bytes,
        [&](int64_t bytes, int64_t total) { meter.update(bytes >> 20, total >> 20); },
        o->precision == "bf16"   ? DType::BF16
        : o->precision == "fp16" ? DType::F16
                                 : DType::F32);
    meter.finish();
    if (!r.note.empty()) fmt::print("note: {}\n", r.note);
    if (!r.tokenizer_files.empty())
      fmt::print("tokenizer: {}\n", fmt::join(r.tokenizer_files, ", "));
    fmt::print("exported {} ({} tensors, {} bytes in {} file{}); wrote {}\n", r.architecture,
               r.tensors, r.bytes, r.shards, r.shards == 1 ? "" : "s", o->out);
  });
}

}  // namespace hwt
