#include "analysis/compare_plan.h"

#include <cmath>
#include <set>

#include "core/toml_reader.h"

namespace hwt {
namespace {

bool valid_name(const std::string& s) {
  if (s.empty() || s == "." || s == "..") return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      return false;
  return true;
}

}  // namespace

ComparePlan load_compare_plan(const std::string& path) {
  const TomlReader t = TomlReader::from_file(path, "compare plan");
  const std::string base = t.string("base");
  const std::vector<std::string> shared =
      t.has("set") ? t.strings("set") : std::vector<std::string>{};
  if (t.has("steps") == t.has("tokens"))
    t.fail("steps", "give the budget as steps or as tokens (one of them)");
  const int64_t steps = t.has("steps") ? t.integer("steps") : 0;
  const double tokens = t.has("tokens") ? t.number("tokens") : 0;
  if (t.has("steps") && steps < 1) t.fail("steps", "must be at least 1");
  if (t.has("tokens") && !(tokens >= 1)) t.fail("tokens", "must be at least 1");
  const std::vector<TomlReader> entries = t.tables("run");
  if (entries.size() < 2) t.fail("run", "list at least two [[run]] tables to compare");
  ComparePlan plan;
  if (t.has("init")) plan.init = t.string("init");
  std::set<std::string> names;
  for (size_t i = 0; i < entries.size(); ++i) {
    const TomlReader e = entries[i].labelled("run " + std::to_string(i + 1));
    ComparePlan::Run r;
    r.name = e.string("name");
    if (!valid_name(r.name))
      e.fail("name", "use letters, digits, '-', '_' and '.' (it names a folder)");
    if (!names.insert(r.name).second) e.fail("name", "'" + r.name + "' is used twice");
    std::vector<std::string> sets = shared;
    if (e.has("set"))
      for (const std::string& s : e.strings("set")) sets.push_back(s);
    e.reject_unknown();
    r.config = load_run_config(base, sets);
    // A token budget becomes whole steps of batch_size x max_len tokens (padding counts).
    const double per_step =
        static_cast<double>(r.config.train.batch_size) * static_cast<double>(r.config.data.max_len);
    r.config.train.max_steps =
        steps > 0 ? steps : static_cast<int64_t>(std::ceil(tokens / std::max(1.0, per_step)));
    plan.runs.push_back(std::move(r));
  }
  t.reject_unknown();
  return plan;
}

}  // namespace hwt
