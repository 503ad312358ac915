// `hwt report`: one HTML page about finished runs (analysis/run_report.h).
#include <fmt/format.h>

#include <filesystem>

#include "analysis/run_report.h"
#include "cli/commands.h"
#include "core/files.h"

namespace hwt {

void add_report_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "report", "One self-contained HTML page about finished runs: curves, figures, comparison");
  struct Opts {
    std::vector<std::string> runs;
    std::string out;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("runs", o->runs, "Run folders written by hwt train")->required();
  cmd->add_option("--out", o->out, "The HTML file (default: report.html in the first run folder)");
  cmd->callback([o] {
    const std::string out =
        o->out.empty() ? (std::filesystem::path(o->runs[0]) / "report.html").string() : o->out;
    write_file_atomic(out, run_report_html(o->runs));
    fmt::print("wrote {}\n", out);
  });
}

}  // namespace hwt
