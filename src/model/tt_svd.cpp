#include "model/tt_svd.h"

#include <algorithm>

#include "core/error.h"

extern "C" void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda,
                        double* s, double* u, const int* ldu, double* vt, const int* ldvt,
                        double* work, const int* lwork, int* iwork, int* info);

namespace hwt {
namespace {

// The thin SVD of a row-major [m, n] matrix: u [m, k], s [k], vt [k, n] (k = min(m, n)), row-major.
void thin_svd(std::vector<double> a, int m, int n, std::vector<double>& u, std::vector<double>& s,
              std::vector<double>& vt) {
  // LAPACK is column-major: the row-major [m, n] matrix is the column-major Aᵀ [n, m], whose
  // SVD V S Uᵀ gives U and Vᵀ back row-major with the roles swapped.
  const int k = std::min(m, n);
  std::vector<double> ut(static_cast<size_t>(n) * k), v(static_cast<size_t>(k) * m);
  s.assign(static_cast<size_t>(k), 0.0);
  std::vector<int> iwork(static_cast<size_t>(8 * k));
  int info = 0, lwork = -1;
  double query = 0;
  const char jobz = 'S';
  dgesdd_(&jobz, &n, &m, a.data(), &n, s.data(), ut.data(), &n, v.data(), &k, &query, &lwork,
          iwork.data(), &info);
  lwork = static_cast<int>(query);
  std::vector<double> work(static_cast<size_t>(std::max(lwork, 1)));
  dgesdd_(&jobz, &n, &m, a.data(), &n, s.data(), ut.data(), &n, v.data(), &k, work.data(), &lwork,
          iwork.data(), &info);
  HWT_CHECK(info == 0, "LAPACK dgesdd failed ({}) on a {}x{} matrix", info, m, n);
  // Column-major ut [n, k] is row-major Vᵀ [k, n]; column-major v [k, m] is row-major U [m, k].
  vt = std::move(ut);
  u = std::move(v);
}

}  // namespace

std::vector<std::vector<double>> tt_svd(const std::vector<double>& tensor,
                                        const std::vector<int64_t>& modes,
                                        const std::vector<int64_t>& caps) {
  HWT_CHECK(!modes.empty() && caps.size() + 1 == modes.size(), "TT-SVD of {} modes with {} caps",
            modes.size(), caps.size());
  std::vector<std::vector<double>> cores;
  std::vector<double> rest = tensor;  // [r_k · modes[k] · …]
  int64_t r = 1;
  for (size_t k = 0; k + 1 < modes.size(); ++k) {
    const int64_t m = r * modes[k], n = static_cast<int64_t>(rest.size()) / m;
    std::vector<double> u, s, vt;
    thin_svd(rest, static_cast<int>(m), static_cast<int>(n), u, s, vt);
    const int64_t full = static_cast<int64_t>(s.size()), cap = caps[k];
    const int64_t keep = std::min(full, cap);
    std::vector<double> core(static_cast<size_t>(m * cap), 0.0);  // [r, modes[k], cap]
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < keep; ++j) core[i * cap + j] = u[i * full + j];
    cores.push_back(std::move(core));
    rest.assign(static_cast<size_t>(cap * n), 0.0);  // S·Vᵀ, [cap, n]
    for (int64_t j = 0; j < keep; ++j)
      for (int64_t c = 0; c < n; ++c) rest[j * n + c] = s[j] * vt[j * n + c];
    r = cap;
  }
  cores.push_back(std::move(rest));
  return cores;
}

std::vector<double> tt_merge(const std::vector<std::vector<double>>& cores,
                             const std::vector<int64_t>& modes) {
  std::vector<double> p = cores[0];  // [modes[0], r_1]
  int64_t rows = modes[0];
  for (size_t k = 1; k < cores.size(); ++k) {
    const int64_t r = static_cast<int64_t>(p.size()) / rows;
    const int64_t cols = static_cast<int64_t>(cores[k].size()) / r;
    std::vector<double> next(static_cast<size_t>(rows * cols), 0.0);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t a = 0; a < r; ++a) {
        const double x = p[i * r + a];
        for (int64_t j = 0; j < cols; ++j) next[i * cols + j] += x * cores[k][a * cols + j];
      }
    p = std::move(next);
    rows *= modes[k];
  }
  return p;
}

}  // namespace hwt
