#include "train/sparsity_log.h"

#include <filesystem>
#include <string>

#include "core/error.h"
#include "core/files.h"

namespace hwt {
namespace {

PruneCount total(const std::vector<PruneCount>& counts) {
  PruneCount t{PrunePoint::ParamGrads};
  for (const PruneCount& c : counts) {
    if (c.point == PrunePoint::LinearWeightGrads) continue;  // counted in param_grads already
    t.zeros += c.zeros;
    t.elements += c.elements;
  }
  return t;
}

std::optional<PrunePoint> point_named(std::string_view name) {
  for (size_t i = 0; i < kPrunePoints; ++i)
    if (prune_point_name(static_cast<PrunePoint>(i)) == name) return static_cast<PrunePoint>(i);
  return std::nullopt;
}

std::string point_names() {
  std::string s;
  for (size_t i = 0; i < kPrunePoints; ++i)
    s += (i ? ", " : "") + std::string(prune_point_name(static_cast<PrunePoint>(i)));
  return s;
}

}  // namespace

nlohmann::json sparsity_fractions(const std::vector<PruneCount>& counts) {
  nlohmann::json j = nlohmann::json::object();
  for (const PruneCount& c : counts) j[std::string(prune_point_name(c.point))] = c.sparsity();
  j["overall"] = total(counts).sparsity();
  return j;
}

nlohmann::json SparsityLog::window() {
  const std::vector<PruneCount> now = pruning_.counts();
  std::vector<PruneCount> since;
  for (const PruneCount& c : now) {
    PruneCount d = c;
    for (const PruneCount& e : last_)
      if (e.point == c.point) d.zeros -= e.zeros, d.elements -= e.elements;
    if (d.elements > 0) since.push_back(d);
  }
  last_ = now;
  return sparsity_fractions(since);
}

void SparsityLog::write_run_file(const std::string& path, const PruneConfig& cfg) const {
  const std::vector<PruneCount> counts = pruning_.counts();
  nlohmann::json points = nlohmann::json::object();
  for (const PruneCount& c : counts)
    points[std::string(prune_point_name(c.point))] = {
        {"zeros", c.zeros}, {"elements", c.elements}, {"sparsity", c.sparsity()}};
  const PruneCount all = total(counts);
  const nlohmann::json j = {
      {"tau_infer", cfg.tau_infer},
      {"tau_train", cfg.tau_train},
      {"tau_act_grad", cfg.tau_act_grad},
      {"points", points},
      {"overall",
       {{"zeros", all.zeros}, {"elements", all.elements}, {"sparsity", all.sparsity()}}}};
  write_file_atomic(path, j.dump(2) + "\n");
}

RunSparsity read_run_sparsity(const std::string& path) {
  std::string file = path;
  if (std::filesystem::is_directory(path)) {
    file = (std::filesystem::path(path) / "sparsity.json").string();
    if (!std::filesystem::exists(file))
      fail_input("{}: no sparsity.json (a run writes it only when model.prune.* is on)", path);
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(file, "sparsity file"));
  } catch (const nlohmann::json::exception& e) {
    fail_input("{}: not valid JSON ({})", file, e.what());
  }
  return run_sparsity_from_json(j, file);
}

RunSparsity run_sparsity_from_json(const nlohmann::json& j, const std::string& where) {
  RunSparsity r;
  r.path = where;
  if (!j.is_object() || !j.contains("points") || !j["points"].is_object())
    fail_input("{}: not a sparsity.json of hwt train (no \"points\" object)", where);
  if (j.contains("file")) {
    if (!j["file"].is_string()) fail_input("{}: file must be a string", where);
    r.path = j["file"].get<std::string>();
  }
  auto threshold = [&](const char* key) {
    if (!j.contains(key) || !j[key].is_number() || j[key].get<double>() < 0)
      fail_input("{}: {} must be a number at least 0", where, key);
    return j[key].get<double>();
  };
  r.thresholds = {threshold("tau_infer"), threshold("tau_train"), threshold("tau_act_grad")};
  for (const auto& [name, e] : j["points"].items()) {
    const std::optional<PrunePoint> p = point_named(name);
    if (!p) fail_input("{}: unknown pruning point '{}' (known: {})", where, name, point_names());
    if (!e.is_object() || !e.contains("sparsity") || !e["sparsity"].is_number())
      fail_input("{}: points.{}.sparsity must be a number", where, name);
    const double v = e["sparsity"].get<double>();
    if (!(v >= 0 && v <= 1))
      fail_input("{}: points.{}.sparsity {} is outside [0, 1]", where, name, v);
    r.fraction[static_cast<size_t>(*p)] = v;
  }
  return r;
}

nlohmann::json to_json(const RunSparsity& r) {
  nlohmann::json points = nlohmann::json::object();
  for (size_t i = 0; i < kPrunePoints; ++i)
    if (r.fraction[i])
      points[std::string(prune_point_name(static_cast<PrunePoint>(i)))] = {
          {"sparsity", *r.fraction[i]}};
  return {{"file", r.path},
          {"tau_infer", r.thresholds.tau_infer},
          {"tau_train", r.thresholds.tau_train},
          {"tau_act_grad", r.thresholds.tau_act_grad},
          {"points", points}};
}

}  // namespace hwt
