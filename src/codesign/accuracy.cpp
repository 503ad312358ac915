#include "codesign/accuracy.h"

#include <fmt/format.h>

#include <filesystem>
#include <sstream>

#include "core/error.h"
#include "core/files.h"
#include "core/fingerprint.h"
#include "train/trainer.h"

namespace hwt::codesign {
nlohmann::json to_json(const TrainedRun& r) {
  nlohmann::json j = {{"shape",
                       {{"layers", r.shape.layers},
                        {"hidden", r.shape.hidden},
                        {"heads", r.shape.heads},
                        {"ffn", r.shape.ffn}}},
                      {"accuracy", r.accuracy},
                      {"test_accuracy", r.test_accuracy},
                      {"seconds", r.seconds},
                      {"steps", r.steps},
                      {"vocab_size", r.vocab_size},
                      {"backend", r.backend}};
  if (r.sparsity) j["sparsity"] = to_json(*r.sparsity);
  return j;
}

TrainedRun trained_run_from_json(const nlohmann::json& j, const std::string& where) {
  TrainedRun r;
  const nlohmann::json& s = j.at("shape");
  r.shape = {s.at("layers").get<int64_t>(), s.at("hidden").get<int64_t>(),
             s.at("heads").get<int64_t>(), s.at("ffn").get<int64_t>()};
  r.accuracy = j.at("accuracy").get<double>();
  r.test_accuracy = j.at("test_accuracy").get<double>();
  r.seconds = j.at("seconds").get<double>();
  r.steps = j.at("steps").get<int64_t>();
  r.vocab_size = j.at("vocab_size").get<int64_t>();
  r.backend = j.at("backend").get<std::string>();
  if (j.contains("sparsity")) r.sparsity = run_sparsity_from_json(j["sparsity"], where);
  return r;
}

TrainingSource::TrainingSource(RunConfig base, int64_t steps, std::string runs_dir,
                               bool keep_checkpoints)
    : base_(std::move(base)), runs_dir_(std::move(runs_dir)), keep_checkpoints_(keep_checkpoints) {
  if (steps < 1) fail_input("--steps {} must be at least 1", steps);
  if (base_.model.head == Task::Lm)
    fail_input("codesign needs a task with an accuracy; model.head = lm has none");
  // Checked before anything trains: the hardware side could not use the runs' measurements.
  if (base_.model.prune.any() &&
      (base_.model.tt.attention.enabled() || base_.model.tt.ffn.enabled()))
    fail_input(
        "codesign with model.prune.* simulates each run's measured sparsity, which maps onto "
        "dense blocks only: leave model.tt.attention and model.tt.ffn empty");
  base_.train.max_steps = steps;
}

std::string TrainingSource::settings() const {
  // The shape keys are the search's to change; everything else decides the accuracy.
  const RunConfig unshaped = ModelShape{}.apply(base_);
  return fmt::format("{} steps, config {:016x}", base_.train.max_steps,
                     fingerprint(hwt::to_json(unshaped).dump()));
}

TrainedRun TrainingSource::run(const ModelShape& shape) {
  TrainRequest req;
  req.config = shape.apply(base_);
  req.out_dir = (std::filesystem::path(runs_dir_) / shape.key()).string();
  req.progress = false;
  make_output_folder(req.out_dir);
  const nlohmann::json run = train(req);
  if (!keep_checkpoints_)
    for (const auto& e : std::filesystem::directory_iterator(req.out_dir))
      if (e.path().extension() == ".safetensors") std::filesystem::remove(e.path());
  const nlohmann::json& results = run.at("results");
  if (!results.at("valid").contains("accuracy"))
    fail_input("codesign needs a validation split with an accuracy; run {} has none", req.out_dir);
  TrainedRun r;
  r.shape = shape;
  r.accuracy = results["valid"]["accuracy"].get<double>();
  if (results.contains("test") && results["test"].contains("accuracy"))
    r.test_accuracy = results["test"]["accuracy"].get<double>();
  r.seconds = run.at("timing").at("total_s").get<double>();
  r.steps = results.at("steps").get<int64_t>();
  r.vocab_size = run.at("data").at("vocab_size").get<int64_t>();
  r.backend = run.at("hardware").at("backend").get<std::string>();
  if (req.config.model.prune.any()) r.sparsity = read_run_sparsity(req.out_dir);
  return r;
}

RunCache::RunCache(std::string path, std::string settings)
    : path_(std::move(path)), settings_(std::move(settings)) {
  if (!std::filesystem::exists(path_)) return;
  text_ = read_file(path_, "codesign cache");
  std::istringstream in(text_);
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    if (line.empty()) continue;
    try {
      const nlohmann::json j = nlohmann::json::parse(line);
      const auto s = j.at("settings").get<std::string>();
      if (s != settings_)
        fail_input(
            "codesign cache {}:{}: run trained with other settings ({}; now {}): resume with "
            "the same config and --steps, or use another --out",
            path_, line_no, s, settings_);
      runs_.push_back(
          trained_run_from_json(j, fmt::format("codesign cache {}:{}", path_, line_no)));
    } catch (const nlohmann::json::exception& e) {
      fail_input("codesign cache {}:{}: malformed run: {}", path_, line_no, e.what());
    }
  }
}

const TrainedRun* RunCache::find(const ModelShape& s) const {
  for (const TrainedRun& r : runs_)
    if (r.shape == s) return &r;
  return nullptr;
}

void RunCache::add(const TrainedRun& r) {
  nlohmann::json j = to_json(r);
  j["settings"] = settings_;
  std::string text = text_ + j.dump() + "\n";
  write_file_atomic(path_, text);
  text_ = std::move(text);
  runs_.push_back(r);
}

}  // namespace hwt::codesign
