#include "data/labels.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "core/error.h"

namespace hwt {

LabelSet LabelSet::sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  LabelSet set;
  for (const std::string& n : names) set.add(n);
  return set;
}

int32_t LabelSet::add(const std::string& name) {
  const auto [it, inserted] = ids_.emplace(name, static_cast<int32_t>(names_.size()));
  if (inserted) names_.push_back(name);
  return it->second;
}

int32_t LabelSet::id(const std::string& name) const {
  const auto it = ids_.find(name);
  return it == ids_.end() ? -1 : it->second;
}

const std::string& LabelSet::name(int32_t id) const {
  HWT_CHECK(id >= 0 && id < size(), "label id {} outside {} labels", id, size());
  return names_[static_cast<size_t>(id)];
}

nlohmann::json LabelSet::to_json() const {
  return names_;
}

LabelSet LabelSet::from_json(const nlohmann::json& j) {
  if (!j.is_array()) fail_input("label JSON: expected an array of names");
  LabelSet set;
  for (const nlohmann::json& n : j) {
    if (!n.is_string()) fail_input("label JSON: expected a string, got {}", n.dump());
    const std::string name = n.get<std::string>();
    if (set.id(name) >= 0) fail_input("label JSON: '{}' appears twice", name);
    set.add(name);
  }
  return set;
}

}  // namespace hwt
