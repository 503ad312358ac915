#include "train/metrics_sink.h"

#include <vector>

namespace hwt {

MetricsSink::MetricsSink(const std::string& out_dir, bool append, bool tensorboard)
    : log_(out_dir + "/metrics.jsonl", append) {
  if (tensorboard) tb_ = std::make_unique<TensorBoardWriter>(out_dir);
}

void MetricsSink::write(const nlohmann::json& line) {
  log_.write(line);
  if (!tb_) return;
  const int64_t step = line.value("step", int64_t{0});
  const std::string prefix = line.value("split", std::string("train")) + "/";
  for (const auto& [key, value] : line.items())
    if (value.is_number() && key != "step" && key != "epoch")
      tb_->scalar(prefix + key, step, value.get<double>());
}

void MetricsSink::config_text(const std::string& toml) {
  // Indented four spaces: markdown shows it as code, line by line.
  std::string md;
  size_t start = 0;
  while (start < toml.size()) {
    const size_t end = toml.find('\n', start);
    md += "    " + toml.substr(start, end - start) + "\n";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (tb_) tb_->text("config", 0, md);
}

void MetricsSink::histograms(int64_t step, const ParamStore& params) {
  if (!tb_) return;
  for (ParamStore::Handle h = 0; h < params.infos().size(); ++h) {
    const std::string& name = params.infos()[h].name;
    tb_->histogram("weights/" + name, step, params.download_data(h));
    tb_->histogram("gradients/" + name, step, params.download_data(h, true));
  }
}

}  // namespace hwt
