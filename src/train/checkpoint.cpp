#include "train/checkpoint.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace hwt {
namespace {

constexpr const char* kFormat = "hwt-checkpoint-1";
constexpr std::string_view kFp8State = "fp8.scaling";

// The model keys that change what the parameters mean (or how they are laid out) beyond what
// their names and shapes show: a checkpoint loads only into a model that agrees on each.
constexpr const char* kArchitectureKeys[] = {"model.heads",
                                             "model.kv_heads",
                                             "model.causal",
                                             "model.norm",
                                             "model.parallel_residual",
                                             "model.qk_norm",
                                             "model.norm_kind",
                                             "model.ln_eps",
                                             "model.position",
                                             "model.rope_theta",
                                             "model.rotary_fraction",
                                             "model.rope_scaling_factor",
                                             "model.rope_low_freq_factor",
                                             "model.rope_high_freq_factor",
                                             "model.rope_original_max_seq",
                                             "model.activation",
                                             "model.bias",
                                             "model.qkv_bias",
                                             "model.tie_embeddings"};

nlohmann::json model_keys(const ModelConfig& m) {
  RunConfig c;
  c.model = m;
  return to_json(c);
}

std::vector<int64_t> dims(const Shape& s) {
  return {s.dims.begin(), s.dims.begin() + s.rank};
}

std::string shape_str(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", d[i]);
  return s + "]";
}

nlohmann::json state_json(const TrainState& s) {
  return {{"step", s.step},
          {"epoch", s.epoch},
          {"position", s.position},
          {"best_score", std::isfinite(s.best_score) ? nlohmann::json(s.best_score) : nullptr},
          {"evals_since_best", s.evals_since_best}};
}

// InputError naming the tensor when `n` floats at `data` hold a NaN or an infinity: such a
// checkpoint was saved from a run that had diverged, and would train or evaluate on NaN.
void require_finite(const std::string& path, const std::string& name, const float* data, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(data[i]))
      fail_input("checkpoint {}: tensor '{}' holds a non-finite value ({} at element {})", path,
                 name, data[i], i);
}

TrainState state_from_json(const nlohmann::json& j) {
  // A float would be converted with undefined behaviour when it lies outside int64's range.
  const auto integer = [&](const char* key) {
    if (!j.at(key).is_number_integer())
      fail_input("training state '{}' is {}, not an integer", key, j.at(key).dump());
    return j.at(key).get<int64_t>();
  };
  TrainState s;
  s.step = integer("step");
  s.epoch = integer("epoch");
  s.position = integer("position");
  if (!j.at("best_score").is_null()) s.best_score = j.at("best_score").get<double>();
  s.evals_since_best = integer("evals_since_best");
  return s;
}

}  // namespace

std::map<std::string, std::string> checkpoint_metadata(const RunConfig& config,
                                                       const nlohmann::json& vocab,
                                                       const TrainState& state) {
  return {{"format", kFormat},
          {"hwt_version", HWT_VERSION},
          {"config", to_json(config).dump()},
          {"vocab", vocab.dump()},
          {"state", state_json(state).dump()},
          {"optimizer", ""}};
}

void save_checkpoint(const std::string& path, const RunConfig& config, const nlohmann::json& vocab,
                     const TrainState& state, const ParamStore& params,
                     const std::vector<std::pair<std::string, Tensor>>* optimizer_state,
                     const std::vector<float>* fp8_state) {
  Backend& be = params.backend();
  // Copies bytes [offset, offset + bytes) of data that lies in `t` as `runs` from element
  // `first` on (ParamInfo::data_runs) to the host.
  auto reader = [&be](Tensor t, int64_t first, ParamInfo::Runs runs) {
    return [&be, t, first, runs](size_t offset, size_t bytes, void* dst) {
      auto e = static_cast<int64_t>(offset / sizeof(float));
      auto n = static_cast<int64_t>(bytes / sizeof(float));
      for (auto* out = static_cast<float*>(dst); n > 0;) {
        const int64_t at = e % runs.length, len = std::min(n, runs.length - at);
        be.download(out, t.flat_slice(first + runs.start(e / runs.length) + at, len));
        out += len;
        e += len;
        n -= len;
      }
    };
  };
  std::vector<SafetensorsEntry> entries;
  // Names in flat-buffer order, so the data section is the parameter buffer as it lies.
  std::vector<const ParamInfo*> order;
  for (const ParamInfo& p : params.infos()) order.push_back(&p);
  std::sort(order.begin(), order.end(),
            [](const ParamInfo* a, const ParamInfo* b) { return a->offset < b->offset; });
  // Each parameter without its padding (a padded vocabulary, hidden or FFN width is saved as the
  // true one); the optimizer states as they lie.
  for (const ParamInfo* p : order)
    entries.push_back({p->name, DType::F32, dims(p->data_shape()), nullptr,
                       reader(params.params_flat(), p->offset, p->data_runs())});
  const ParamInfo::Runs whole{1, params.count()};
  if (optimizer_state)
    for (const auto& [name, t] : *optimizer_state)
      entries.push_back(
          {"optim." + name, DType::F32, {params.count()}, nullptr, reader(t, 0, whole)});
  if (fp8_state)
    entries.push_back(
        {std::string(kFp8State), DType::F32, {std::ssize(*fp8_state)}, fp8_state->data()});
  std::map<std::string, std::string> meta = checkpoint_metadata(config, vocab, state);
  if (optimizer_state) meta["optimizer"] = to_json(config)["optim.name"].get<std::string>();
  write_safetensors(path, entries, meta);
}

Checkpoint::Checkpoint(const std::string& path) : file_(SafetensorsFile::open(path)) {
  const auto& meta = file_.metadata();
  auto get = [&](const char* key) -> const std::string& {
    const auto it = meta.find(key);
    if (it == meta.end())
      fail_input("checkpoint {}: not an hwt checkpoint (metadata '{}' missing)", path, key);
    return it->second;
  };
  if (get("format") != kFormat)
    fail_input("checkpoint {}: unsupported format '{}' (expected {})", path, get("format"),
               kFormat);
  try {
    info_.config = run_config_from_json(nlohmann::json::parse(get("config")));
    info_.vocab = nlohmann::json::parse(get("vocab"));
    info_.state = state_from_json(nlohmann::json::parse(get("state")));
  } catch (const nlohmann::json::exception& e) {
    fail_input("checkpoint {}: corrupted metadata ({})", path, e.what());
  } catch (const InputError& e) {
    fail_input("checkpoint {}: {}", path, e.what());
  }
  info_.has_optimizer = !get("optimizer").empty();
  if (!file_.checksummed())
    warn("checkpoint {} has no checksums (saved by an older hwt): its data cannot be verified",
         path);
}

void Checkpoint::load_parameters(ParamStore& params, const ModelConfig& model) const {
  load(params, model, nullptr);
}

std::vector<std::string> Checkpoint::load_initial_parameters(ParamStore& params,
                                                             const ModelConfig& model,
                                                             bool keep_heads) const {
  std::vector<std::string> fresh;
  load(params, model, &fresh, keep_heads);
  return fresh;
}

void Checkpoint::load(ParamStore& params, const ModelConfig& model, std::vector<std::string>* fresh,
                      bool keep_heads) const {
  const nlohmann::json saved = model_keys(info_.config.model), here = model_keys(model);
  for (const char* key : kArchitectureKeys)
    if (saved.at(key) != here.at(key))
      fail_input("checkpoint {} was saved for {}={}; this model has {}", file_.path(), key,
                 saved.at(key).dump(), here.at(key).dump());
  std::vector<float> host(static_cast<size_t>(params.count()));  // the padding stays zero
  // A head left as initialised keeps the values params holds now.
  if (fresh) params.backend().download(host.data(), params.params_flat());
  for (const ParamInfo& p : params.infos()) {
    const bool head = p.name.starts_with("head.");
    const bool there = file_.contains(p.name);
    const bool same_shape = there && file_.get(p.name).shape == dims(p.data_shape()) &&
                            file_.get(p.name).dtype == DType::F32;
    if (fresh && head && (!keep_heads || !same_shape)) {
      fresh->push_back(p.name);
      continue;
    }
    if (!there)
      fail_input("checkpoint {} was saved for another model: it has no parameter '{}'",
                 file_.path(), p.name);
    const SafetensorsFile::View v = file_.get(p.name);
    if (!same_shape)
      fail_input("checkpoint {} was saved for another model shape: '{}' is {} there, {} here",
                 file_.path(), p.name, shape_str(v.shape), p.data_shape().str());
    require_finite(file_.path(), p.name, static_cast<const float*>(v.data), v.bytes / 4);
    scatter_data(p, static_cast<const float*>(v.data), host.data());
  }
  params.backend().upload(params.params_flat(), host.data());
  params.sync_compute();
}

std::optional<std::vector<float>> Checkpoint::fp8_state() const {
  if (!file_.contains(std::string(kFp8State))) return std::nullopt;
  const SafetensorsFile::View v = file_.get(std::string(kFp8State));
  if (v.dtype != DType::F32 || v.shape.size() != 1)
    fail_input("checkpoint {}: '{}' is not an f32 vector", file_.path(), kFp8State);
  const auto* data = static_cast<const float*>(v.data);
  return std::vector<float>(data, data + v.bytes / sizeof(float));
}

void Checkpoint::load_optimizer(Optimizer& optimizer, const ModelConfig& model) const {
  const ModelConfig& saved = info_.config.model;
  auto same_padding = [&](const char* what, int64_t stored, int64_t here, const char* key,
                          int64_t multiple) {
    if (stored != here)
      fail_input(
          "checkpoint {}: its optimizer state holds the {} padded to {}, this run pads it to {}; "
          "resume with {}={}",
          file_.path(), what, stored, here, key, multiple);
  };
  same_padding("vocabulary", saved.padded_vocab(), model.padded_vocab(), "model.vocab_multiple",
               saved.vocab_multiple);
  same_padding("FFN width", saved.padded_ffn(), model.padded_ffn(), "model.ffn_multiple",
               saved.ffn_multiple);
  same_padding("hidden width", saved.padded_hidden(), model.padded_hidden(),
               "model.hidden_multiple", saved.hidden_multiple);
  same_padding("head width", saved.padded_head_dim(), model.padded_head_dim(),
               "model.hidden_multiple", saved.hidden_multiple);
  for (const auto& [name, t] : optimizer.state()) {
    const std::string key = "optim." + name;
    if (!file_.contains(key))
      fail_input("checkpoint {} has no optimizer state '{}' (saved with another optimizer?)",
                 file_.path(), key);
    const SafetensorsFile::View v = file_.get(key);
    if (v.dtype != DType::F32 || v.shape != std::vector<int64_t>{optimizer.params().count()})
      fail_input("checkpoint {}: optimizer state '{}' does not match this model", file_.path(),
                 key);
    require_finite(file_.path(), key, static_cast<const float*>(v.data), v.bytes / 4);
    const int64_t n = optimizer.shard_count();
    if (n > 0)
      optimizer.params().backend().upload(
          t.flat_slice(0, n), static_cast<const float*>(v.data) + optimizer.shard_offset());
  }
}

}  // namespace hwt
