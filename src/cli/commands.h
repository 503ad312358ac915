// Each subcommand lives in its own cmd_*.cpp and registers itself on the top-level app.
// Callbacks throw InputError for bad input; main() turns that into one line and exit code 2.
#pragma once

#include <CLI/CLI.hpp>

namespace hwt {

void add_train_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_predict_command(CLI::App& app);
void add_generate_command(CLI::App& app);
void add_flops_command(CLI::App& app);
void add_memory_command(CLI::App& app);
void add_config_command(CLI::App& app);
void add_sim_command(CLI::App& app);
void add_shape_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_estimate_command(CLI::App& app);
void add_compress_command(CLI::App& app);
void add_codesign_command(CLI::App& app);
void add_tokenizer_command(CLI::App& app);
void add_import_command(CLI::App& app);
void add_export_command(CLI::App& app);

}  // namespace hwt
