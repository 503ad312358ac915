// The `hwt` command: subcommands for training, analysis and simulation.
#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "core/error.h"

int main(int argc, char** argv) {
  CLI::App app{"hwt: hardware-aware transformer training and co-design", "hwt"};
  app.set_version_flag("--version", HWT_VERSION);
  app.require_subcommand(1);
  hwt::add_train_command(app);
  hwt::add_eval_command(app);
  hwt::add_predict_command(app);
  hwt::add_generate_command(app);
  hwt::add_flops_command(app);
  hwt::add_memory_command(app);
  hwt::add_config_command(app);
  hwt::add_sim_command(app);
  hwt::add_shape_command(app);
  hwt::add_compare_command(app);
  hwt::add_report_command(app);
  hwt::add_estimate_command(app);
  hwt::add_compress_command(app);
  hwt::add_codesign_command(app);
  hwt::add_tokenizer_command(app);
  hwt::add_import_command(app);
  hwt::add_export_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "hwt: error: {}\n", e.what());
    return 2;
  } catch (const hwt::InputError& e) {
    fmt::print(stderr, "hwt: error: {}\n", e.what());
    return 2;
  } catch (const hwt::NumericFault& e) {
    fmt::print(stderr, "hwt: error: {}\n", e.what());
    return hwt::kNumericFaultExit;
  } catch (const std::exception& e) {
    fmt::print(stderr, "hwt: internal error: {}\n", e.what());
    return 1;
  }
  return 0;
}
