// ParamStore: every parameter lives in one flat fp32 buffer (with matching flat gradient and,
// for mixed precision, compute-dtype buffers). Decayed parameters (matrices, embeddings) come
// first, so optimizers run as one launch with a single decay boundary and checkpoints write
// whole buffers.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"

namespace hwt {

enum class Init : uint8_t { Normal, Zeros, Ones };

// Storage-only padding along one dimension (alignment): the dimension is blocks of `block`
// entries (0: one block, the whole dimension), each ending in `pad` entries that are zero,
// never data. A padded width is one trailing block; padded attention heads are one block each.
struct DimPad {
  int64_t pad = 0, block = 0;
};

struct ParamInfo {
  std::string name;
  Shape shape;  // as stored
  bool decay = true;
  Init init = Init::Normal;
  float std = 0.0f;
  int64_t offset = -1;  // element offset in the flat buffers, set by allocate()
  DimPad pad_rows;      // of the first dimension
  DimPad pad_cols;      // of a matrix's columns
  // A dense (Linear) layer's weight matrix: its gradient is a GEMM's output, the weight
  // gradient hwt sim models; embeddings, norms, biases and tensor-train cores are not.
  bool linear_weight = false;

  // The parameter itself: the stored shape without its padding rows and columns.
  Shape data_shape() const;
  // Where the data lies in the flat buffers: `count` runs of `length` elements, run i at
  // start(i) from `offset` on (one run unless the parameter is padded).
  struct Runs {
    int64_t count, length;
    // Run i is chunk i % chunks of row i / chunks % rows of block i / chunks / rows.
    int64_t chunks = 1, rows = 1, chunk_stride = 0, row_stride = 0, block_stride = 0;
    int64_t start(int64_t i) const {
      const int64_t row = i / chunks;
      return row / rows * block_stride + row % rows * row_stride + i % chunks * chunk_stride;
    }
  };
  Runs data_runs() const;
};

// Copies a parameter's data, dense in data_shape(), into its place in a host copy of a flat
// buffer (the padding is left as it is), and back.
void scatter_data(const ParamInfo& p, const float* data, float* flat);
void gather_data(const ParamInfo& p, const float* flat, float* data);

// A parameter's initial values (data_shape(), dense), as ParamStore::initialize(seed) sets them:
// a function of (seed, its name) only.
void initial_values(const ParamInfo& p, uint64_t seed, float* data);

class ParamStore {
 public:
  using Handle = size_t;

  // pad_rows, pad_cols: rows and columns of `shape` that only align the storage
  // (ParamInfo::pad_rows, pad_cols).
  Handle add(std::string name, Shape shape, bool decay, Init init, float std = 0.0f,
             DimPad pad_rows = {}, DimPad pad_cols = {});
  void mark_linear_weight(Handle h) { infos_.at(h).linear_weight = true; }
  // Lays out and allocates the flat buffers; `compute` is the dtype layers read weights in. The
  // buffers' storage is count() rounded up to storage_multiple elements, zeros past count()
  // (ZeRO-1 splits the storage into equal shards, one per rank).
  void allocate(Backend& backend, DType compute, int64_t storage_multiple = 1);
  // Deterministic initialisation: each parameter's values depend only on (seed, its name), not
  // on its padding, which is zero.
  void initialize(uint64_t seed);

  Tensor param(Handle h) const;    // fp32 master
  Tensor grad(Handle h) const;     // fp32 gradient
  Tensor compute(Handle h) const;  // what layers read (the master itself in fp32)

  Tensor params_flat() const;
  Tensor grads_flat() const;
  Tensor compute_flat() const;  // undefined when compute dtype is fp32
  // The same buffers with their whole storage (storage() elements).
  Tensor params_storage() const;
  Tensor grads_storage() const;
  Tensor compute_storage() const;  // undefined when compute dtype is fp32
  int64_t storage() const { return storage_; }
  int64_t n_decay() const { return n_decay_; }
  int64_t count() const { return count_; }  // elements stored, padding included
  int64_t parameters() const;               // the model's parameters: count() less padding
  const std::vector<ParamInfo>& infos() const { return infos_; }
  const ParamInfo* find(const std::string& name) const;
  Backend& backend() const { return *backend_; }

  // Parameter h's values (or its gradient's), downloaded and dense in data_shape(): storage
  // padding left out.
  std::vector<float> download_data(Handle h, bool gradient = false) const;

  void zero_grads();
  // Refreshes the compute copy from the masters (after loading or initialising).
  void sync_compute();

 private:
  Tensor view(const DeviceBuffer& buf, DType dtype, Handle h) const;

  std::vector<ParamInfo> infos_;
  std::unordered_map<std::string, Handle> by_name_;  // so that adding stays linear in parameters
  Backend* backend_ = nullptr;
  DType compute_dtype_ = DType::F32;
  int64_t count_ = 0, n_decay_ = 0, storage_ = 0;
  DeviceBuffer params_, grads_, compute_;
};

}  // namespace hwt
