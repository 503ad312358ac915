#include "interop/hf_export.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "core/error.h"
#include "core/files.h"
#include "data/dataset.h"
#include "interop/hf_architecture.h"
#include "interop/hf_tokenizer_files.h"
#include "interop/tensor_layout.h"
#include "train/checkpoint.h"
#include "train/evaluate.h"

namespace hwt {
namespace {

namespace fs = std::filesystem;

// A folder that is removed on destruction unless released: the export's work in progress.
class PartialFolder {
 public:
  explicit PartialFolder(fs::path p) : path_(std::move(p)) {
    std::error_code ec;
    fs::remove_all(path_, ec);
    make_output_folder(path_.string());
  }
  ~PartialFolder() {
    std::error_code ec;
    if (!released_) fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  void release() { released_ = true; }

 private:
  fs::path path_;
  bool released_ = false;
};

// The model with its vocabulary and label counts known (a trained run's config may leave them
// to the tokenizer and data).
ModelConfig resolved_model(const Checkpoint& ckpt) {
  ModelConfig m = ckpt.info().config.model;
  if (m.vocab_size > 0 && (!has_sequence_labels(m.head) || m.num_labels > 0) &&
      (!has_token_labels(m.head) || m.num_token_labels > 0))
    return m;
  return resolve_model_config(m, dataset_from_vocab_json(ckpt.info().vocab, m.head));
}

std::vector<std::string> label_names(const nlohmann::json& vocab, const char* key) {
  std::vector<std::string> names;
  if (vocab.is_object() && vocab.contains(key) && vocab[key].is_array())
    for (const nlohmann::json& n : vocab[key]) names.push_back(n.get<std::string>());
  return names;
}

struct OutTensor {
  const TensorLink* link;
  size_t part;
  std::vector<std::vector<int64_t>> shapes;  // of every part of the link
  DType dtype;
  int64_t bytes() const {
    return element_count(shapes[part]) * static_cast<int64_t>(dtype_size(dtype));
  }
};

const char* torch_dtype_name(DType dtype) {
  return dtype == DType::BF16 ? "bfloat16" : dtype == DType::F16 ? "float16" : "float32";
}

}  // namespace

ExportReport export_hf_model(const std::string& checkpoint, const std::string& dir,
                             int64_t shard_bytes,
                             const std::function<void(int64_t bytes, int64_t total)>& progress,
                             DType dtype) {
  HWT_CHECK(dtype == DType::F32 || dtype == DType::BF16 || dtype == DType::F16, "export in {}",
            dtype_name(dtype));
  const fs::path target(dir);
  if (fs::exists(target) && !(fs::is_directory(target) && fs::is_empty(target)))
    fail_input("export: {} exists and is not an empty folder", dir);
  const Checkpoint ckpt(checkpoint);
  const ModelConfig m = resolved_model(ckpt);
  const HfArchitecture& arch = hf_architecture_for(m);
  const HfTensorPlan plan = arch.tensors(m);
  const SafetensorsFile& saved = ckpt.tensors();

  std::vector<OutTensor> out;
  for (const TensorLink& link : plan.links) {
    if (!saved.contains(link.hwt))
      fail_input("export: checkpoint {} has no tensor '{}', which its model has", checkpoint,
                 link.hwt);
    const SafetensorsFile::View v = saved.get(link.hwt);
    if (v.dtype != DType::F32 || static_cast<int64_t>(v.bytes / 4) != hwt_elements(link))
      fail_input("export: checkpoint {}: tensor '{}' does not match its model's config", checkpoint,
                 link.hwt);
    std::vector<std::vector<int64_t>> shapes;
    for (const HfTensor& t : link.hf) {
      std::vector<int64_t> s = t.shape;
      for (int64_t& d : s)
        if (d < 0) d = 2;  // BERT's token types: the two segments transformers' configs use
      shapes.push_back(s);
    }
    for (size_t part = 0; part < link.hf.size(); ++part)
      out.push_back({&link, part, shapes, dtype});
  }

  // Shards in plan order, each up to shard_bytes.
  std::vector<std::vector<const OutTensor*>> shards(1);
  int64_t in_shard = 0, total = 0;
  for (const OutTensor& t : out) {
    if (in_shard > 0 && in_shard + t.bytes() > shard_bytes) {
      shards.emplace_back();
      in_shard = 0;
    }
    shards.back().push_back(&t);
    in_shard += t.bytes();
    total += t.bytes();
  }

  PartialFolder work(target.string() + fmt::format(".partial-{}", ::getpid()));
  nlohmann::ordered_json config = {{"architectures", {arch.name}}, {"model_type", arch.model_type}};
  const std::vector<std::string> labels =
      label_names(ckpt.info().vocab, m.head == Task::Tokens ? "token_labels" : "labels");
  const nlohmann::ordered_json fields = arch.write_config(m, labels);
  for (auto it = fields.begin(); it != fields.end(); ++it) config[it.key()] = it.value();
  config["torch_dtype"] = torch_dtype_name(dtype);
  write_file_atomic((work.path() / "config.json").string(), config.dump(2) + "\n");

  nlohmann::ordered_json weight_map = nlohmann::ordered_json::object();
  int64_t written = 0;
  for (size_t s = 0; s < shards.size(); ++s) {
    const std::string file = shards.size() == 1 ? "model.safetensors"
                                                : fmt::format("model-{:05d}-of-{:05d}.safetensors",
                                                              s + 1, shards.size());
    std::vector<SafetensorsEntry> entries;
    for (const OutTensor* t : shards[s]) {
      const std::string& name = t->link->hf[t->part].name;
      weight_map[name] = file;
      entries.push_back(
          {name, dtype, t->shapes[t->part], nullptr,
           [t, name, &saved, &written, total, &progress](size_t offset, size_t n, void* dst) {
             const auto size = static_cast<size_t>(dtype_size(t->dtype));
             const std::optional<float> too_large = hf_piece_from_hwt(
                 *t->link, t->part, static_cast<const float*>(saved.get(t->link->hwt).data),
                 t->shapes, t->dtype, static_cast<int64_t>(offset / size),
                 static_cast<int64_t>(n / size), dst);
             if (too_large)
               fail_input(
                   "export: tensor '{}' holds {}, past fp16's largest value 65504 "
                   "(export in bf16 or fp32)",
                   name, *too_large);
             written += static_cast<int64_t>(n);
             if (progress) progress(written, static_cast<int64_t>(total));
           }});
    }
    // transformers reads the format tag to know the tensors are PyTorch's layout.
    write_safetensors((work.path() / file).string(), entries, {{"format", "pt"}});
  }
  ExportReport report;
  report.architecture = std::string(arch.name);
  report.tensors = static_cast<int64_t>(out.size());
  report.bytes = total;
  report.shards = static_cast<int64_t>(shards.size());
  const nlohmann::json& tokenizer = ckpt.info().vocab.at("tokenizer");
  if (tokenizer.is_null())
    report.note = "no tokenizer files written: the checkpoint has none";
  else
    report.tokenizer_files = write_folder_tokenizer(*Tokenizer::from_json(tokenizer),
                                                    work.path().string(), m.max_seq, report.note);
  if (shards.size() > 1) {
    const nlohmann::ordered_json index = {{"metadata", {{"total_size", total}}},
                                          {"weight_map", weight_map}};
    write_file_atomic((work.path() / "model.safetensors.index.json").string(),
                      index.dump(2) + "\n");
  }
  if (fs::exists(target)) fs::remove(target);  // empty, checked above
  std::error_code ec;
  fs::rename(work.path(), target, ec);
  if (ec) fail_input("export: cannot create {}: {}", dir, ec.message());
  work.release();
  return report;
}

}  // namespace hwt
