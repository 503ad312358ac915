#include "interop/hf_weights.h"

#include <nlohmann/json.hpp>

#include <filesystem>

#include "core/error.h"
#include "core/files.h"

namespace hwt {

HfWeights::HfWeights(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path single = fs::path(dir) / "model.safetensors",
                 index = fs::path(dir) / "model.safetensors.index.json";
  std::map<std::string, std::string> listed;  // tensor -> shard, from the index
  if (fs::exists(index)) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(read_file(index.string(), "index"));
      for (const auto& [name, file] : j.at("weight_map").items())
        listed[name] = file.get<std::string>();
    } catch (const nlohmann::json::exception& e) {
      fail_input("index {}: no weight_map of tensor names to shard files ({})", index.string(),
                 e.what());
    }
    std::map<std::string, size_t> opened;
    for (const auto& [name, file] : listed) {
      if (file.find('/') != std::string::npos)
        fail_input("index {}: shard '{}' is not a file in the model folder", index.string(), file);
      if (!opened.count(file)) {
        opened[file] = files_.size();
        files_.push_back(SafetensorsFile::open((fs::path(dir) / file).string()));
        file_names_.push_back(file);
      }
    }
  } else if (fs::exists(single)) {
    files_.push_back(SafetensorsFile::open(single.string()));
    file_names_.push_back("model.safetensors");
  } else {
    const bool torch_bin = fs::exists(fs::path(dir) / "pytorch_model.bin") ||
                           fs::exists(fs::path(dir) / "pytorch_model.bin.index.json");
    fail_input("model folder {}: no model.safetensors or model.safetensors.index.json{}", dir,
               torch_bin ? " (hwt reads safetensors, not pytorch_model.bin)" : "");
  }
  for (size_t f = 0; f < files_.size(); ++f)
    for (const std::string& name : files_[f].names()) {
      const auto it = listed.find(name);
      if (!listed.empty() && (it == listed.end() || it->second != file_names_[f]))
        fail_input("model folder {}: shard {} holds tensor '{}', which the index places {}", dir,
                   file_names_[f], name, it == listed.end() ? "nowhere" : "in " + it->second);
      where_[name] = f;
    }
  for (const auto& [name, file] : listed)
    if (!where_.count(name))
      fail_input("model folder {}: the index places tensor '{}' in {}, which lacks it", dir, name,
                 file);
}

SafetensorsFile::View HfWeights::get(const std::string& name) const {
  return files_.at(where_.at(name)).get(name);
}

std::vector<std::string> HfWeights::names() const {
  std::vector<std::string> out;
  for (const auto& [name, f] : where_) out.push_back(name);
  return out;
}

const std::string& HfWeights::file_of(const std::string& name) const {
  return file_names_.at(where_.at(name));
}

}  // namespace hwt
