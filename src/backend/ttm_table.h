// The shape of a tensor-train-matrix token table (TtEmbeddingFwd's cores), read and checked once
// for every backend, and the work its lookups do.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace hwt {

struct TtmTable {
  std::vector<int64_t> ranks;          // r_0 … r_d (r_0 = r_d = 1)
  std::vector<int64_t> vocab, hidden;  // v_k, h_k
  size_t cores() const { return vocab.size(); }
  int64_t rows() const;                   // Π v_k: the ids it can look up
  int64_t cols() const;                   // Π h_k
  int64_t hidden_before(size_t k) const;  // h_0 · … · h_{k-1}
  int64_t hidden_after(size_t k) const;   // h_{k+1} · … · h_{d-1}
  // The k-th vocabulary digit of an id (row-major over v_0 … v_{d-1}).
  int64_t digit(int64_t id, size_t k) const;
  // Elements of core k's slice for one id: r_k · h_k · r_{k+1}.
  int64_t slice(size_t k) const { return ranks[k] * hidden[k] * ranks[k + 1]; }
  // GEMM FLOPs of one row: forming it left to right; its core gradients (prefixes, suffixes,
  // the per-core contractions with the row's gradient).
  double forward_flops() const;
  double backward_flops() const;
};

// The table of these cores ([r_k, v_k, h_k, r_{k+1}] each); HWT_CHECK on inconsistent shapes.
TtmTable ttm_table(const std::vector<Tensor>& cores);

}  // namespace hwt
