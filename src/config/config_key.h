// A typed config key bound to a field of some root struct. Values arrive as JSON (from TOML
// files, --set strings or checkpoint metadata) and are checked against the key's type.
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"

namespace hwt {

template <class Root>
struct ConfigKey {
  std::string name;  // "model.hidden"
  std::string type;  // "int", "float", "bool", "string", "ints" (a list) or "choice"
  std::string doc;
  std::vector<std::string> choices;  // for "choice"
  std::function<void(Root&, const nlohmann::json&)> set;
  std::function<nlohmann::json(const Root&)> get;
};

// Builds the key list of a root struct with typed helpers; field(root) returns a reference.
template <class Root>
class ConfigKeys {
 public:
  template <class Field>
  void add(std::string name, std::string doc, Field field) {
    using T = std::remove_reference_t<decltype(field(std::declval<Root&>()))>;
    ConfigKey<Root> k;
    k.name = std::move(name);
    k.doc = std::move(doc);
    if constexpr (std::is_same_v<T, bool>) {
      k.type = "bool";
    } else if constexpr (std::is_integral_v<T>) {
      k.type = "int";
    } else if constexpr (std::is_floating_point_v<T>) {
      k.type = "float";
    } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
      k.type = "ints";
    } else {
      static_assert(std::is_same_v<T, std::string>);
      k.type = "string";
    }
    const std::string key = k.name, type = k.type;
    k.set = [field, key, type](Root& r, const nlohmann::json& v) {
      if constexpr (std::is_same_v<T, bool>) {
        if (!v.is_boolean()) bad(key, "true or false", v);
        field(r) = v.get<bool>();
      } else if constexpr (std::is_integral_v<T>) {
        if (!v.is_number_integer()) bad(key, "an integer", v);
        field(r) = v.get<T>();
      } else if constexpr (std::is_floating_point_v<T>) {
        if (!v.is_number()) bad(key, "a number", v);
        // NaN means nothing as a rate, a probability or a size (TOML and --set can spell it).
        // Infinity is checked by validation: it is meant only as a limit that never comes.
        if (std::isnan(v.get<double>()))
          fail_input("config {}: expected a finite number, got nan", key);
        field(r) = v.get<T>();
      } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
        if (!v.is_array()) bad(key, "a list of integers", v);
        for (const auto& e : v)
          if (!e.is_number_integer()) bad(key, "a list of integers", v);
        field(r) = v.get<T>();
      } else {
        if (!v.is_string()) bad(key, "a string", v);
        field(r) = v.get<std::string>();
      }
    };
    k.get = [field](const Root& r) { return nlohmann::json(field(const_cast<Root&>(r))); };
    keys_.push_back(std::move(k));
  }

  template <class Field, class E>
  void add_choice(std::string name, std::string doc, Field field,
                  std::vector<std::pair<std::string, E>> options) {
    ConfigKey<Root> k;
    k.name = std::move(name);
    k.doc = std::move(doc);
    k.type = "choice";
    for (const auto& o : options) k.choices.push_back(o.first);
    const std::string key = k.name;
    k.set = [field, key, options](Root& r, const nlohmann::json& v) {
      if (v.is_string())
        for (const auto& o : options)
          if (o.first == v.get<std::string>()) {
            field(r) = o.second;
            return;
          }
      std::string list;
      for (const auto& o : options) list += (list.empty() ? "" : ", ") + o.first;
      fail_input("config {}: expected one of {}, got {}", key, list, v.dump());
    };
    k.get = [field, options](const Root& r) {
      for (const auto& o : options)
        if (o.second == field(const_cast<Root&>(r))) return nlohmann::json(o.first);
      return nlohmann::json();
    };
    keys_.push_back(std::move(k));
  }

  // A choice among enum values, each spelled as name_of(value) says.
  template <class Field, class E, class NameOf>
  void add_choice(std::string name, std::string doc, Field field, std::initializer_list<E> values,
                  NameOf name_of) {
    std::vector<std::pair<std::string, E>> options;
    for (E v : values) options.emplace_back(std::string(name_of(v)), v);
    add_choice(std::move(name), std::move(doc), field, std::move(options));
  }

  const std::vector<ConfigKey<Root>>& keys() const { return keys_; }

 private:
  [[noreturn]] static void bad(const std::string& key, const char* want, const nlohmann::json& v) {
    fail_input("config {}: expected {}, got {}", key, want, v.dump());
  }
  std::vector<ConfigKey<Root>> keys_;
};

}  // namespace hwt
