#include "train/compress.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "model/tt_svd.h"
#include "train/checkpoint.h"
#include "train/inference.h"

namespace hwt {
namespace {

ParamStore::Handle handle_of(const ParamStore& ps, const ParamInfo* p) {
  return static_cast<ParamStore::Handle>(p - ps.infos().data());
}

// Uploads data dense in data_shape() into the parameter's storage (its padding zero).
void upload_data(ParamStore& ps, ParamStore::Handle h, const std::vector<float>& data) {
  ParamInfo at_zero = ps.infos()[h];
  at_zero.offset = 0;
  std::vector<float> stored(static_cast<size_t>(at_zero.shape.numel()), 0.0f);
  scatter_data(at_zero, data.data(), stored.data());
  ps.backend().upload(ps.param(h), stored.data());
}

double relative_error(const std::vector<double>& approx, const std::vector<double>& exact) {
  double num = 0, den = 0;
  for (size_t i = 0; i < exact.size(); ++i) {
    num += (approx[i] - exact[i]) * (approx[i] - exact[i]);
    den += exact[i] * exact[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// The dense matrix as the tensor the cores describe: a TT linear layer's weight [out, in] is
// already row-major over its factors; a TTM table [V, H] becomes modes (v_k, h_k) interleaved,
// rows beyond V (the cores may describe more) zero.
std::vector<double> as_tensor(const std::vector<double>& dense, const Shape& dense_shape,
                              const std::vector<Shape>& cores) {
  if (cores.front().rank == 3) return dense;
  const size_t d = cores.size();
  int64_t rows = 1, cols = 1;
  for (const Shape& s : cores) rows *= s[1], cols *= s[2];
  std::vector<double> t(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t v = 0; v < dense_shape[0]; ++v)
    for (int64_t h = 0; h < cols; ++h) {
      // Digits of v and h (mode 0 slowest), then the interleaved index.
      std::vector<int64_t> dv(d), dh(d);
      int64_t rv = v, rh = h;
      for (size_t k = d; k-- > 0;) {
        dv[k] = rv % cores[k][1], rv /= cores[k][1];
        dh[k] = rh % cores[k][2], rh /= cores[k][2];
      }
      int64_t at = 0;
      for (size_t k = 0; k < d; ++k)
        at = at * cores[k][1] * cores[k][2] + dv[k] * cores[k][2] + dh[k];
      t[static_cast<size_t>(at)] = dense[v * cols + h];
    }
  return t;
}

}  // namespace

std::vector<CompressedLayer> compress_checkpoint(
    const std::string& checkpoint, const std::string& tt_config, const std::string& out,
    const std::function<void(int64_t done, int64_t total)>& progress) {
  const Checkpoint ckpt(checkpoint);
  LoadedModel dense = load_model(ckpt, DeviceChoice::Cpu, 0, 1);
  RunConfig cfg = dense.config;
  // The file's factors are checked against this model's sizes, not its own.
  const ModelConfig& m = cfg.model;
  cfg.model.tt = load_run_config(tt_config, {fmt::format("model.hidden={}", m.hidden),
                                             fmt::format("model.ffn={}", m.ffn),
                                             fmt::format("model.vocab_size={}", m.vocab_size)})
                     .model.tt;
  validate(cfg);
  Model tt(cfg.model, *dense.backend);
  tt.init_parameters(static_cast<uint64_t>(cfg.train.seed));
  const ParamStore& dp = dense.model->params();
  ParamStore& tp = tt.params();

  // Parameters the dense model has are copied; the others are cores "<layer>.core<k>".
  std::map<std::string, std::vector<ParamStore::Handle>> layers;
  for (ParamStore::Handle h = 0; h < tp.infos().size(); ++h) {
    const ParamInfo& p = tp.infos()[h];
    if (const ParamInfo* d = dp.find(p.name)) {
      HWT_CHECK(d->data_shape() == p.data_shape(), "{}: {} in the checkpoint, {} in the TT model",
                p.name, d->data_shape().str(), p.data_shape().str());
      upload_data(tp, h, dp.download_data(handle_of(dp, d)));
      continue;
    }
    const size_t dot = p.name.rfind(".core");
    HWT_CHECK(dot != std::string::npos, "TT model parameter {} is neither dense nor a core",
              p.name);
    layers[p.name.substr(0, dot)].push_back(h);
  }
  std::vector<CompressedLayer> report;
  for (const auto& [name, cores] : layers) {
    const ParamInfo* d = dp.find(name + ".weight");
    if (!d) d = dp.find(name);
    if (!d) fail_input("{} has no dense matrix {} to compress", checkpoint, name);
    std::vector<Shape> shapes;
    std::vector<int64_t> modes, caps;
    int64_t tt_params = 0;
    for (ParamStore::Handle h : cores) {
      const Shape& s = tp.infos()[h].shape;
      shapes.push_back(s);
      modes.push_back(s.rank == 3 ? s[1] : s[1] * s[2]);
      caps.push_back(s[s.rank - 1]);
      tt_params += s.numel();
    }
    caps.pop_back();
    const std::vector<float> data = dp.download_data(handle_of(dp, d));
    const std::vector<double> w = as_tensor({data.begin(), data.end()}, d->data_shape(), shapes);
    const std::vector<std::vector<double>> fit = tt_svd(w, modes, caps);
    for (size_t k = 0; k < cores.size(); ++k) {
      const std::vector<float> host(fit[k].begin(), fit[k].end());
      dense.backend->upload(tp.param(cores[k]), host.data());
    }
    report.push_back(
        {name, d->data_shape().numel(), tt_params, relative_error(tt_merge(fit, modes), w)});
    if (progress) progress(std::ssize(report), std::ssize(layers));
  }
  tp.sync_compute();
  save_checkpoint(out, cfg, ckpt.info().vocab, TrainState{}, tp, nullptr);
  return report;
}

}  // namespace hwt
