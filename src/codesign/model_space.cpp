#include "codesign/model_space.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "core/error.h"
#include "core/toml_reader.h"

namespace hwt::codesign {
namespace {

constexpr const char* kWhat = "codesign space";

std::vector<int64_t> choices(const TomlReader& t, const std::string& key) {
  if (!t.has(key)) t.fail(key, "is missing (a list of positive integers)");
  const std::vector<int64_t> out = t.positive_integers(key);
  if (std::set<int64_t>(out.begin(), out.end()).size() != out.size())
    t.fail(key, "lists a value twice");
  return out;
}

}  // namespace

std::string ModelShape::key() const {
  return fmt::format("L{}-H{}-A{}-F{}", layers, hidden, heads, ffn);
}

RunConfig ModelShape::apply(RunConfig base) const {
  base.model.layers = layers;
  base.model.hidden = hidden;
  base.model.heads = heads;
  base.model.ffn = ffn;
  return base;
}

RunConfig ModelSpace::pruned(RunConfig base) const {
  PruneConfig& p = base.model.prune;
  p.tau_infer = tau_infer.value_or(p.tau_infer);
  p.tau_train = tau_train.value_or(p.tau_train);
  p.tau_act_grad = tau_act_grad.value_or(p.tau_act_grad);
  return base;
}

ModelShape shape_of(const ModelConfig& m) {
  return {m.layers, m.hidden, m.heads, m.ffn};
}

ModelShape ModelSpace::shape(size_t index) const {
  ModelShape s;
  s.layers = layers[index % layers.size()];
  index /= layers.size();
  s.hidden = hidden[index % hidden.size()];
  index /= hidden.size();
  s.heads = heads[index % heads.size()];
  index /= heads.size();
  s.ffn = ffn[index % ffn.size()];
  return s;
}

std::vector<ModelShape> ModelSpace::all() const {
  std::vector<ModelShape> out;
  out.reserve(size());
  for (size_t i = 0; i < size(); ++i) out.push_back(shape(i));
  return out;
}

ModelSpace load_model_space(const std::string& path, const RunConfig& base) {
  const TomlReader r = TomlReader::from_file(path, kWhat);
  ModelSpace s;
  s.name = r.string("name", "codesign");
  if (!r.is_table("model")) r.fail("model", "table is missing ([model] with the shape choices)");
  const TomlReader m = r.table("model");
  s.layers = choices(m, "layers");
  s.hidden = choices(m, "hidden");
  s.heads = choices(m, "heads");
  s.ffn = choices(m, "ffn");
  m.reject_unknown();
  if (r.is_table("prune")) {
    const TomlReader p = r.table("prune");
    for (auto [key, tau] :
         {std::pair{"tau_infer", &s.tau_infer}, std::pair{"tau_train", &s.tau_train},
          std::pair{"tau_act_grad", &s.tau_act_grad}}) {
      if (!p.has(key)) continue;
      const double v = p.number(key);
      if (!(v >= 0)) p.fail(key, fmt::format("must be at least 0, got {}", v));
      *tau = v;
    }
    p.reject_unknown();
  }
  r.reject_unknown();
  for (const ModelShape& shape : s.all()) {
    try {
      validate(shape.apply(s.pruned(base)));
    } catch (const InputError& e) {
      fail_input("{} {}: shape {} cannot be built: {}", kWhat, path, shape.key(), e.what());
    }
  }
  return s;
}

}  // namespace hwt::codesign
