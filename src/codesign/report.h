// What `hwt codesign` writes into its output folder: front.csv, codesign.json and two SVG
// scatter plots (accuracy against latency and against energy), plus the summary it prints.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "codesign/search.h"

namespace hwt::codesign {

std::string front_csv(const SearchResult& r);
// `meta` (space, options) is stored as given under "search".
nlohmann::json result_json(const SearchResult& r, const nlohmann::json& meta);

enum class Axis : uint8_t { Latency, Energy };
std::string accuracy_svg(const SearchResult& r, Axis x);

// The files above, written atomically into `dir`.
void write_report(const std::string& dir, const SearchResult& r, const nlohmann::json& meta);

// The chosen pair against the baseline, a few lines.
std::string summary_text(const SearchResult& r);

}  // namespace hwt::codesign
