// LabelSet: class names and their ids, for sequence labels (intents) or token labels (tags).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace hwt {

class LabelSet {
 public:
  // With data.unseen_labels="unk", validation/test labels that training never saw map to this
  // name, appended after the training labels. The model has a logit for it but no training
  // example targets it, so it is (practically) never predicted and such examples score as
  // wrong, as JointBERT scores them.
  static constexpr std::string_view kUnseen = "[UNK]";

  // The distinct names in byte order, so ids do not depend on the order of the data.
  static LabelSet sorted(std::vector<std::string> names);

  // Id of `name`, added at the end if new.
  int32_t add(const std::string& name);
  int32_t id(const std::string& name) const;  // -1 if absent
  const std::string& name(int32_t id) const;
  int64_t size() const { return std::ssize(names_); }
  const std::vector<std::string>& names() const { return names_; }

  nlohmann::json to_json() const;  // the names, in id order
  // InputError unless `j` is an array of distinct strings.
  static LabelSet from_json(const nlohmann::json& j);

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, int32_t> ids_;
};

}  // namespace hwt
