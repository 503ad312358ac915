// `hwt compress`: a dense checkpoint into the tensor-train layers of a TT config (TT-SVD).
#include <fmt/format.h>

#include "cli/commands.h"
#include "report/progress_meter.h"
#include "train/compress.h"

namespace hwt {

void add_compress_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "compress",
      "Turn a dense checkpoint's matrices into the tensor trains of a TT config (TT-SVD with its "
      "ranks as caps) and write the TT model's checkpoint");
  struct Opts {
    std::string checkpoint, config, out;
    bool quiet = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--checkpoint", o->checkpoint, "A dense model's checkpoint.safetensors")
      ->required();
  cmd->add_option("--config", o->config,
                  "A config whose model.tt sections give the factors and rank caps")
      ->required();
  cmd->add_option("--out", o->out, "The TT checkpoint to write")->required();
  cmd->add_flag("--quiet", o->quiet, "No progress output");
  cmd->callback([o] {
    int64_t dense = 0, tt = 0;
    ProgressMeter meter("compress (TT-SVD)", "layers", !o->quiet);
    const std::vector<CompressedLayer> layers =
        compress_checkpoint(o->checkpoint, o->config, o->out,
                            [&](int64_t done, int64_t total) { meter.update(done, total); });
    meter.finish();
    for (const CompressedLayer& l : layers) {
      fmt::print("{}: {} -> {} parameters ({:.1f}x), relative error {:.4g}\n", l.name,
                 l.dense_params, l.tt_params,
                 static_cast<double>(l.dense_params) / static_cast<double>(l.tt_params),
                 l.relative_error);
      dense += l.dense_params;
      tt += l.tt_params;
    }
    fmt::print("compressed {} -> {} parameters; wrote {}\n", dense, tt, o->out);
  });
}

}  // namespace hwt
