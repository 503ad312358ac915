#include "train/sparsity_log.h"

#include <string>

#include "core/files.h"

namespace hwt {
namespace {

PruneCount total(const std::vector<PruneCount>& counts) {
  PruneCount t{PrunePoint::ParamGrads};
  for (const PruneCount& c : counts) {
    t.zeros += c.zeros;
    t.elements += c.elements;
  }
  return t;
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

}  // namespace hwt
