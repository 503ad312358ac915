#include "cli/commands.h"
#include "core/error.h"

namespace hwt {

void add_train_command(CLI::App& app) {
  app.add_subcommand("train", "Train a model")->callback([] { fail("not implemented yet"); });
}
void add_eval_command(CLI::App& app) {
  app.add_subcommand("eval", "Evaluate a checkpoint")->callback([] { fail("not implemented yet"); });
}
void add_predict_command(CLI::App& app) {
  app.add_subcommand("predict", "Predict with a checkpoint")->callback([] { fail("not implemented yet"); });
}

}  // namespace hwt
