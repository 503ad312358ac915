// The contraction planner of the tensor-train linear layer (model.tt.attention, model.tt.ffn).
// Its cores form a chain of matrices: core k is [r_k, f_k, r_{k+1}], the out factors' cores
// first, then the in factors', r_0 = r_D = 1. Any bracketing of the chain's products builds a
// contiguous run of cores [r_a, f_a·…·f_b, r_{b+1}] with plain row-major GEMMs, so the planner
// picks, per (batch × sequence) rows:
//  - factored (Tian et al.'s bi-directional flow): R' = the out cores [M, r] and L' = the in
//    cores [r, N] merged separately, then y = (x·L'ᵀ)·R'ᵀ through the middle rank r;
//  - dense: the whole chain merged into W [M, N], then y = x·Wᵀ;
// and for every merged run the bracketing (matrix-chain order) with the fewest FLOPs, then the
// smallest largest intermediate. Its FLOP counts are what the trace of the layer records.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hwt {

struct TtChain {
  std::vector<int64_t> factors;  // f_k: the out factors, then the in factors
  std::vector<int64_t> ranks;    // r_0 … r_D, boundary ones included
  size_t out_cores = 0;          // cores [0, out_cores) carry the out factors

  size_t cores() const { return factors.size(); }
  int64_t product(size_t first, size_t last) const;  // f_first · … · f_last
  // Elements of the run of cores [first, last] merged: r_first · F · r_{last+1}.
  int64_t run_elements(size_t first, size_t last) const;
  int64_t out_dim() const { return product(0, out_cores - 1); }
  int64_t in_dim() const { return product(out_cores, cores() - 1); }
  int64_t middle_rank() const { return ranks[out_cores]; }
};

// The chain of a TT linear layer with the given factors and interior ranks (out cores first).
TtChain tt_linear_chain(const std::vector<int64_t>& out, const std::vector<int64_t>& in,
                        const std::vector<int64_t>& ranks);

// One product of the merge tree: the run [first, last] = run [first, split] · run [split+1, last].
struct TtMerge {
  size_t first = 0, split = 0, last = 0;
};

struct TtPlan {
  bool factored = true;
  std::vector<TtMerge> merges;                   // children before parents
  double forward_flops = 0, backward_flops = 0;  // GEMM FLOPs of one step, merges included
  int64_t largest = 0;  // elements of the largest intermediate (a merged run or x·L'ᵀ)
};

// The plan with the fewest forward + backward FLOPs for `rows` input rows (ties: the smaller
// largest intermediate). The backward computes the input gradient and every core gradient.
TtPlan plan_tt_linear(const TtChain& chain, int64_t rows);

// One line: "factored (x·L'ᵀ)·R'ᵀ through rank 10, R' = (G1·(G2·G3)), L' = ((G4·G5)·G6); 1.2
// MFLOP forward, 2.4 MFLOP backward, largest intermediate 7680 elements".
std::string describe(const TtChain& chain, const TtPlan& plan);

}  // namespace hwt
