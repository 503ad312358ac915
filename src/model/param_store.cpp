#include "model/param_store.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/integer_math.h"
#include "core/philox.h"

namespace hwt {
namespace {

uint64_t hash_name(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Standard normal draws from Philox uniforms (Box-Muller): identical on every platform,
// unlike std::normal_distribution, and on any number of threads (each pair depends on its index
// only), which keeps large models' start-up short.
void fill_normal(float* out, int64_t n, float std, uint64_t seed) {
  // Box-Muller on the uniforms philox_uniform(seed, i) and (seed, i + 1) for each even i; one
  // Philox block holds the words of two such pairs.
#pragma omp parallel for schedule(static)
  for (int64_t block = 0; block < ceil_div(n, 4); ++block) {
    const Philox4 words = philox4x32(static_cast<uint64_t>(block), seed);
    for (int64_t lane = 0; lane < 4 && 4 * block + lane < n; lane += 2) {
      const int64_t i = 4 * block + lane;
      const double u1 = static_cast<double>(uniform_24(words.v[lane])) + 0x1p-25;
      const double u2 = uniform_24(words.v[lane + 1]);
      const double r = std::sqrt(-2.0 * std::log(u1)), t = 6.283185307179586 * u2;
      out[i] = static_cast<float>(std * r * std::cos(t));
      if (i + 1 < n) out[i + 1] = static_cast<float>(std * r * std::sin(t));
    }
  }
}

// Blocks along a padded dimension of `n` entries, and the data entries of each.
int64_t blocks(const DimPad& p, int64_t n) {
  return p.block > 0 ? n / p.block : 1;
}
int64_t data_per_block(const DimPad& p, int64_t n) {
  return n / blocks(p, n) - p.pad;
}

}  // namespace

Shape ParamInfo::data_shape() const {
  Shape s = shape;
  s.dims[0] = blocks(pad_rows, shape[0]) * data_per_block(pad_rows, shape[0]);
  if (shape.rank == 2) s.dims[1] = blocks(pad_cols, shape[1]) * data_per_block(pad_cols, shape[1]);
  return s;
}

ParamInfo::Runs ParamInfo::data_runs() const {
  const int64_t rows = shape[0], inner = shape.numel() / rows;
  const int64_t row_block = rows / blocks(pad_rows, rows), row_data = row_block - pad_rows.pad;
  if (pad_cols.pad == 0) {  // each block's data rows lie together
    Runs r{blocks(pad_rows, rows), row_data * inner};
    r.block_stride = row_block * inner;
    return r;
  }
  const int64_t chunks = blocks(pad_cols, inner), chunk = inner / chunks;
  Runs r{blocks(pad_rows, rows) * row_data * chunks, chunk - pad_cols.pad};
  r.chunks = chunks;
  r.rows = row_data;
  r.chunk_stride = chunk;
  r.row_stride = inner;
  r.block_stride = row_block * inner;
  return r;
}

void scatter_data(const ParamInfo& p, const float* data, float* flat) {
  const ParamInfo::Runs r = p.data_runs();
  for (int64_t i = 0; i < r.count; ++i)
    std::copy_n(data + i * r.length, r.length, flat + p.offset + r.start(i));
}

void gather_data(const ParamInfo& p, const float* flat, float* data) {
  const ParamInfo::Runs r = p.data_runs();
  for (int64_t i = 0; i < r.count; ++i)
    std::copy_n(flat + p.offset + r.start(i), r.length, data + i * r.length);
}

std::vector<float> ParamStore::download_data(Handle h, bool gradient) const {
  const ParamInfo& p = infos_.at(h);
  std::vector<float> stored(static_cast<size_t>(p.shape.numel()));
  backend_->download(stored.data(), gradient ? grad(h) : param(h));
  std::vector<float> data(static_cast<size_t>(p.data_shape().numel()));
  ParamInfo at_zero = p;
  at_zero.offset = 0;
  gather_data(at_zero, stored.data(), data.data());
  return data;
}

ParamStore::Handle ParamStore::add(std::string name, Shape shape, bool decay, Init init, float std,
                                   DimPad pad_rows, DimPad pad_cols) {
  HWT_CHECK(!backend_, "parameter {} added after allocation", name);
  HWT_CHECK(!find(name), "duplicate parameter {}", name);
  auto valid = [](const DimPad& p, int64_t n) {
    const int64_t block = p.block > 0 ? p.block : n;
    return p.pad >= 0 && p.pad < block && n % block == 0;
  };
  HWT_CHECK(valid(pad_rows, shape[0]), "{}: padding rows {}/{} of {}", name, pad_rows.pad,
            pad_rows.block, shape.str());
  HWT_CHECK(pad_cols.pad == 0 || (shape.rank == 2 && valid(pad_cols, shape[1])),
            "{}: padding columns {}/{} of {}", name, pad_cols.pad, pad_cols.block, shape.str());
  by_name_.emplace(name, infos_.size());
  infos_.push_back(ParamInfo{std::move(name), shape, decay, init, std, -1, pad_rows, pad_cols});
  return infos_.size() - 1;
}

int64_t ParamStore::parameters() const {
  int64_t n = 0;
  for (const ParamInfo& p : infos_) n += p.data_shape().numel();
  return n;
}

const ParamInfo* ParamStore::find(const std::string& name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &infos_[it->second];
}

void ParamStore::allocate(Backend& backend, DType compute, int64_t storage_multiple) {
  backend_ = &backend;
  compute_dtype_ = compute;
  int64_t offset = 0;
  for (bool decayed : {true, false}) {
    for (ParamInfo& p : infos_)
      if (p.decay == decayed) {
        p.offset = offset;
        offset += p.shape.numel();
      }
    if (decayed) n_decay_ = offset;
  }
  count_ = offset;
  HWT_CHECK(storage_multiple >= 1, "storage multiple {}", storage_multiple);
  storage_ = round_up(count_, storage_multiple);
  const auto n = static_cast<size_t>(storage_);
  params_ = DeviceBuffer(backend, n * 4);
  grads_ = DeviceBuffer(backend, n * 4);
  if (compute != DType::F32) compute_ = DeviceBuffer(backend, n * dtype_size(compute));
  for (const Tensor& t : {params_storage(), grads_storage(), compute_storage()})
    if (t.defined() && storage_ > count_)
      backend.fill({t.flat_slice(count_, storage_ - count_), 0});
}

void initial_values(const ParamInfo& p, uint64_t seed, float* data) {
  const int64_t n = p.data_shape().numel();
  switch (p.init) {
    case Init::Zeros:
      std::fill_n(data, n, 0.0f);
      break;
    case Init::Ones:
      std::fill_n(data, n, 1.0f);
      break;
    case Init::Normal:
      fill_normal(data, n, p.std, mix_seed(seed ^ hash_name(p.name)));
      break;
  }
}

void ParamStore::initialize(uint64_t seed) {
  std::vector<float> host(static_cast<size_t>(count_)), data;  // the padding stays zero
  for (const ParamInfo& p : infos_) {
    data.resize(static_cast<size_t>(p.data_shape().numel()));
    initial_values(p, seed, data.data());
    scatter_data(p, data.data(), host.data());
  }
  backend_->upload(params_flat(), host.data());
  sync_compute();
  zero_grads();
}

Tensor ParamStore::view(const DeviceBuffer& buf, DType dtype, Handle h) const {
  const ParamInfo& p = infos_.at(h);
  return buf.tensor(dtype, p.shape, static_cast<size_t>(p.offset) * dtype_size(dtype));
}

Tensor ParamStore::param(Handle h) const {
  return view(params_, DType::F32, h);
}
Tensor ParamStore::grad(Handle h) const {
  return view(grads_, DType::F32, h);
}
Tensor ParamStore::compute(Handle h) const {
  return compute_dtype_ == DType::F32 ? param(h) : view(compute_, compute_dtype_, h);
}

Tensor ParamStore::params_flat() const {
  return params_.tensor(DType::F32, Shape{count_});
}
Tensor ParamStore::grads_flat() const {
  return grads_.tensor(DType::F32, Shape{count_});
}
Tensor ParamStore::compute_flat() const {
  return compute_dtype_ == DType::F32 ? Tensor{} : compute_.tensor(compute_dtype_, Shape{count_});
}

Tensor ParamStore::params_storage() const {
  return params_.tensor(DType::F32, Shape{storage_});
}
Tensor ParamStore::grads_storage() const {
  return grads_.tensor(DType::F32, Shape{storage_});
}
Tensor ParamStore::compute_storage() const {
  return compute_dtype_ == DType::F32 ? Tensor{} : compute_.tensor(compute_dtype_, Shape{storage_});
}

void ParamStore::zero_grads() {
  backend_->fill({grads_flat(), 0.0f});
}

void ParamStore::sync_compute() {
  if (compute_dtype_ != DType::F32) backend_->convert({compute_flat(), params_flat()});
}

}  // namespace hwt
