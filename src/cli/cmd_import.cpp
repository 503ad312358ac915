// `hwt import`: a Hugging Face model folder into an hwt checkpoint (docs/interop.md).
#include <fmt/format.h>

#include "cli/commands.h"
#include "interop/hf_import.h"
#include "report/progress_meter.h"

namespace hwt {

void add_import_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "import",
      "Read a Hugging Face model folder (config.json and model.safetensors or its shards) into an "
      "hwt checkpoint");
  struct Opts {
    std::string dir, out;
    bool quiet = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("MODEL_DIR", o->dir, "The Hugging Face model folder")->required();
  cmd->add_option("--out", o->out, "The checkpoint to write (.safetensors)")->required();
  cmd->add_flag("--quiet", o->quiet, "No progress output");
  cmd->callback([o] {
    ProgressMeter meter("import", "MB", !o->quiet);
    const ImportReport r = import_hf_model(o->dir, o->out, [&](int64_t bytes, int64_t total) {
      meter.update(bytes >> 20, total >> 20);
    });
    meter.finish();
    for (const std::string& note : r.notes) fmt::print("note: {}\n", note);
    fmt::print("imported {} ({} parameters); wrote {}\n", r.architecture, r.parameters, o->out);
  });
}

}  // namespace hwt
