#include "interop/hf_model_config.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"

namespace hwt {

bool is_hf_config_path(const std::string& path) {
  namespace fs = std::filesystem;
  if (fs::is_directory(path)) return fs::exists(fs::path(path) / "config.json");
  return fs::path(path).extension() == ".json";
}

HfModelConfig read_hf_config(const std::string& path) {
  namespace fs = std::filesystem;
  const std::string file =
      fs::is_directory(path) ? (fs::path(path) / "config.json").string() : path;
  const HfConfig c = HfConfig::load(file);
  const nlohmann::json& names =
      c.json().contains("architectures") ? c.json()["architectures"] : nlohmann::json();
  if (!names.is_array() || names.size() != 1 || !names[0].is_string())
    c.unsupported("architectures",
                  "hwt needs the one model class it was saved as, e.g. "
                  "[\"LlamaForCausalLM\"]");
  HfModelConfig r;
  r.architecture = &hf_architecture(names[0].get<std::string>(), file);
  const std::string model_type = c.string("model_type", std::string(r.architecture->model_type));
  if (model_type != r.architecture->model_type)
    c.unsupported("model_type", fmt::format("{} is model_type \"{}\"", r.architecture->name,
                                            r.architecture->model_type));
  r.model = r.architecture->read_config(c);
  r.run.model = r.model.model;
  r.run.data.max_len = std::min(r.run.data.max_len, r.run.model.max_seq);
  // The precision the weights were published in is the one to train and analyse them in
  // (transformers 5 names the field dtype).
  const std::string dtype = c.string("torch_dtype", c.string("dtype", "float32"));
  if (dtype == "bfloat16") apply_override(r.run, "train.precision=bf16");
  if (dtype == "float16") apply_override(r.run, "train.precision=fp16");
  try {
    validate(r.run);
  } catch (const InputError& e) {
    fail_input("config.json {}: {}", file, e.what());
  }
  return r;
}

}  // namespace hwt
