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

// `arg` itself when it names a file (it exists, holds a '/' or ends in ".toml"); otherwise the
// shipped <folder>/<arg>.toml, dashes read as underscores ("bert-base" is bert_base.toml).
// InputError "<flag> '<arg>' is neither a file nor a shipped name (<the names in folder>)".
std::string resolve_named_file(const std::string& arg, const std::string& folder,
                               const std::string& flag);

// The folder for caches hwt can rebuild (GEMM calibrations, token shards): $HWT_CACHE_DIR, else
// $XDG_CACHE_HOME/hwt, else ~/.cache/hwt, else .hwt-cache in the working directory.
std::string user_cache_dir();

}  // namespace hwt
