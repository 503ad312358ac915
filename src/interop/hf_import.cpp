#include "interop/hf_import.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "backend/trace/trace_backend.h"
#include "core/error.h"
#include "interop/hf_model_config.h"
#include "interop/hf_tokenizer_files.h"
#include "interop/hf_weights.h"
#include "interop/tensor_layout.h"
#include "model/model.h"
#include "train/checkpoint.h"

namespace hwt {
namespace {

// The name a file holds a tensor under: as the plan says, or without (or with) the base
// prefix, as files saved from the base model alone ("gpt2", BertModel) have them; and a
// LayerNorm's weight and bias under their TensorFlow names gamma and beta, as BERT checkpoints
// converted from Google's (bert-base-cased) still have them.
std::string resolve(const HfWeights& w, const HfArchitecture& a, const std::string& name) {
  const std::string_view base = a.base_prefix;
  const std::string other = std::string_view(name).starts_with(base) ? name.substr(base.size())
                                                                     : std::string(base) + name;
  for (const std::string& n : {name, other}) {
    if (w.contains(n)) return n;
    for (const auto& [ours, tf] : {std::pair{".weight", ".gamma"}, std::pair{".bias", ".beta"}})
      if (n.ends_with(ours) && n.find("LayerNorm") != std::string::npos) {
        const std::string renamed = n.substr(0, n.size() - std::string_view(ours).size()) + tf;
        if (w.contains(renamed)) return renamed;
      }
  }
  return name;
}

std::string shape_text(const std::vector<int64_t>& s) {
  std::vector<std::string> d;
  for (int64_t x : s) d.push_back(x < 0 ? "any" : std::to_string(x));
  return fmt::format("[{}]", fmt::join(d, ", "));
}

bool shape_fits(const std::vector<int64_t>& have, const std::vector<int64_t>& want) {
  if (have.size() != want.size()) return false;
  for (size_t i = 0; i < have.size(); ++i)
    if (want[i] >= 0 ? have[i] != want[i] : have[i] < 1) return false;
  return true;
}

// One hwt parameter, made from its Hugging Face tensors piece by piece as write_safetensors
// asks for them (hwt_piece_from_hf).
struct LinkedParameter {
  const TensorLink* link = nullptr;
  std::vector<std::string> names;  // as the file holds them
  const HfWeights* weights = nullptr;

  void read(size_t offset, size_t n, void* dst) const {
    std::vector<SafetensorsFile::View> parts;
    for (const std::string& name : names) parts.push_back(weights->get(name));
    hwt_piece_from_hf(*link, parts, static_cast<int64_t>(offset / sizeof(float)),
                      static_cast<int64_t>(n / sizeof(float)), static_cast<float*>(dst));
  }
};

}  // namespace

ImportReport import_hf_model(const std::string& dir, const std::string& out,
                             const std::function<void(int64_t bytes, int64_t total)>& progress) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) fail_input("import: {} is not a model folder", dir);
  const std::string out_dir = fs::path(out).parent_path().string();
  if (!out_dir.empty() && !fs::is_directory(out_dir))
    fail_input("import: the folder of --out {} does not exist", out);
  const HfModelConfig cfg = read_hf_config(dir);
  const HfArchitecture& arch = *cfg.architecture;
  const ModelConfig& m = cfg.run.model;
  const HfTensorPlan plan = arch.tensors(m);
  const HfWeights weights(dir);
  const FolderTokenizer tokenizer = read_folder_tokenizer(dir, m.vocab_size);

  ImportReport report;
  report.architecture = std::string(arch.name);
  report.notes = cfg.model.notes;
  std::set<std::string> used;
  std::map<std::string, std::shared_ptr<LinkedParameter>> linked;  // by hwt name
  for (const TensorLink& link : plan.links) {
    auto p = std::make_shared<LinkedParameter>();
    p->link = &link;
    p->weights = &weights;
    for (const HfTensor& t : link.hf) {
      const std::string name = resolve(weights, arch, t.name);
      if (!weights.contains(name))
        fail_input("import {}: tensor '{}' missing ({} with this config.json has it)", dir, t.name,
                   arch.name);
      const SafetensorsFile::View v = weights.get(name);
      if (!shape_fits(v.shape, t.shape))
        fail_input("import {}: tensor '{}' in {} is {}; config.json gives {}", dir, name,
                   weights.file_of(name), shape_text(v.shape), shape_text(t.shape));
      if (!is_float(v.dtype))
        fail_input("import {}: tensor '{}' is {}, not F32, F16 or BF16", dir, name,
                   dtype_name(v.dtype));
      p->names.push_back(name);
      used.insert(name);
    }
    linked[link.hwt] = p;
  }
  int64_t buffers = 0;
  std::set<std::string> dropped;
  for (const std::string& name : weights.names()) {
    if (used.count(name)) continue;
    const std::string stripped = std::string_view(name).starts_with(arch.base_prefix)
                                     ? name.substr(arch.base_prefix.size())
                                     : name;
    const auto ignored = [&](const std::string& n) {
      return std::find(plan.ignored.begin(), plan.ignored.end(), n) != plan.ignored.end();
    };
    if (arch.is_buffer(name) || ignored(name) || ignored(stripped)) {
      ++buffers;
      continue;
    }
    const auto prefix = std::find_if(plan.dropped.begin(), plan.dropped.end(),
                                     [&](const std::string& d) { return name.starts_with(d); });
    if (prefix == plan.dropped.end())
      fail_input(
          "import {}: unexpected tensor '{}' in {} ({} with this config.json has no such "
          "tensor)",
          dir, name, weights.file_of(name), arch.name);
    dropped.insert(*prefix + "*");
  }
  if (!dropped.empty())
    report.notes.push_back(fmt::format("left out {}: a head hwt's model has no equivalent for",
                                       fmt::join(dropped, ", ")));
  if (buffers > 0)
    report.notes.push_back(
        fmt::format("skipped {} tensors that are buffers or a tied head, not "
                    "parameters",
                    buffers));
  if (!plan.fresh.empty())
    report.notes.push_back(fmt::format("initialised {} fresh (train.seed={}), to be fine-tuned",
                                       fmt::join(plan.fresh, ", "), cfg.run.train.seed));

  // hwt's parameters, from the model itself (on the trace backend, which allocates nothing), in
  // flat-buffer order: each is a linked Hugging Face tensor or a fresh head.
  TraceBackend trace;
  const Model model(m, trace, DType::F32);
  std::vector<const ParamInfo*> order;
  for (const ParamInfo& p : model.params().infos()) order.push_back(&p);
  std::sort(order.begin(), order.end(),
            [](const ParamInfo* a, const ParamInfo* b) { return a->offset < b->offset; });
  std::vector<SafetensorsEntry> entries;
  std::vector<std::vector<float>> fresh_values;
  int64_t read_bytes = 0, total_bytes = 0;
  fresh_values.reserve(plan.fresh.size());
  for (const ParamInfo* p : order) {
    const Shape s = p->data_shape();
    const std::vector<int64_t> shape(s.dims.begin(), s.dims.begin() + s.rank);
    report.parameters += s.numel();
    if (std::find(plan.fresh.begin(), plan.fresh.end(), p->name) != plan.fresh.end()) {
      fresh_values.emplace_back(static_cast<size_t>(s.numel()));
      initial_values(*p, static_cast<uint64_t>(cfg.run.train.seed), fresh_values.back().data());
      entries.push_back({p->name, DType::F32, shape, fresh_values.back().data()});
      continue;
    }
    const auto it = linked.find(p->name);
    HWT_CHECK(it != linked.end(), "{} maps no tensor onto hwt parameter {}", arch.name, p->name);
    const int64_t made = hwt_elements(*it->second->link);
    HWT_CHECK(made == s.numel(), "{} maps {} elements onto {} {}", arch.name, made, p->name,
              s.str());
    total_bytes += s.numel() * static_cast<int64_t>(sizeof(float));
    entries.push_back({p->name, DType::F32, shape, nullptr,
                       [q = it->second, &read_bytes, &total_bytes, &progress](size_t offset,
                                                                              size_t n, void* dst) {
                         q->read(offset, n, dst);
                         read_bytes += static_cast<int64_t>(n);
                         if (progress) progress(read_bytes, total_bytes);
                       }});
    linked.erase(it);
  }
  HWT_CHECK(linked.empty(), "{} maps onto {}, which hwt's model lacks", arch.name,
            linked.empty() ? "" : linked.begin()->first);

  report.notes.push_back(tokenizer.note);
  const nlohmann::json vocab = {{"task", task_name(m.head)},
                                {"tokenizer", tokenizer.json},
                                {"labels", cfg.model.labels},
                                {"token_labels", cfg.model.token_labels}};
  write_safetensors(out, entries, checkpoint_metadata(cfg.run, vocab, TrainState{}));
  return report;
}

}  // namespace hwt
