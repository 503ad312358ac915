// Locating files that ship with hwt (hardware catalogs, installed datasets) whether it runs
// from a build folder, an install, or elsewhere.
#pragma once

#include <optional>
#include <string>

namespace hwt {

// The first existing of: $HWT_HOME/<relative>, <executable dir>/../<relative>,
// <source tree>/<relative>. Empty when none exists.
std::optional<std::string> find_shipped_file(const std::string& relative);

// Like find_shipped_file, but raises InputError naming the file and the places searched.
std::string require_shipped_file(const std::string& relative);

}  // namespace hwt
