// TT-SVD (Oseledets 2011): a dense tensor as a tensor train with capped ranks, the other way into
// the tensor-train layers (hwt compress). Sequential truncated SVDs (LAPACK dgesdd, double).
#pragma once

#include <cstdint>
#include <vector>

namespace hwt {

// The tensor of the given mode sizes, row-major (mode 0 slowest), as cores
// [r_k, modes[k], r_{k+1}] with r_0 = r_D = 1 and r_k = caps[k-1] (D - 1 caps): each unfolding
// keeps its largest singular values up to the cap; where its rank is below, the core is padded
// with zeros, so the cores always have the capped shapes. A tensor of TT ranks within the caps
// comes back exactly (to rounding).
std::vector<std::vector<double>> tt_svd(const std::vector<double>& tensor,
                                        const std::vector<int64_t>& modes,
                                        const std::vector<int64_t>& caps);

// The tensor of a chain of cores [r_k, modes[k], r_{k+1}] (the inverse of tt_svd).
std::vector<double> tt_merge(const std::vector<std::vector<double>>& cores,
                             const std::vector<int64_t>& modes);

}  // namespace hwt
