#include "codesign/surrogate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.h"

extern "C" {
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
void dpotrs_(const char* uplo, const int* n, const int* nrhs, const double* a, const int* lda,
             double* b, const int* ldb, int* info);
void dtrtrs_(const char* uplo, const char* trans, const char* diag, const int* n, const int* nrhs,
             const double* a, const int* lda, double* b, const int* ldb, int* info);
}

namespace hwt::codesign {
namespace {

constexpr double kLengths[] = {0.1, 0.15, 0.25, 0.4, 0.6, 1.0, 1.6, 2.5};
constexpr double kNoises[] = {1e-4, 1e-3, 1e-2, 0.05, 0.1, 0.3};

}  // namespace

double GaussianProcess::kernel(const std::vector<double>& a, const std::vector<double>& b) const {
  double d2 = 0;
  for (size_t i = 0; i < a.size(); ++i) d2 += (a[i] - b[i]) * (a[i] - b[i]);
  return std::exp(-0.5 * d2 / (length_ * length_));
}

double GaussianProcess::factorise(const std::vector<double>& ys) {
  const int n = static_cast<int>(x_.size());
  chol_.assign(static_cast<size_t>(n) * n, 0.0);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i)
      chol_[static_cast<size_t>(j) * n + i] = kernel(x_[i], x_[j]) + (i == j ? noise_ : 0.0);
  int info = 0, one = 1;
  const char lower = 'L';
  dpotrf_(&lower, &n, chol_.data(), &n, &info);
  if (info != 0) return -std::numeric_limits<double>::infinity();
  alpha_ = ys;
  dpotrs_(&lower, &n, &one, chol_.data(), &n, alpha_.data(), &n, &info);
  HWT_CHECK(info == 0, "LAPACK dpotrs failed ({})", info);
  double fit = 0, log_det = 0;
  for (int i = 0; i < n; ++i) {
    fit += ys[i] * alpha_[i];
    log_det += std::log(chol_[static_cast<size_t>(i) * n + i]);
  }
  return -0.5 * fit - log_det - 0.5 * n * std::log(2 * M_PI);
}

void GaussianProcess::fit(std::vector<std::vector<double>> x, const std::vector<double>& y) {
  HWT_CHECK(!x.empty() && x.size() == y.size(), "{} points, {} targets", x.size(), y.size());
  x_ = std::move(x);
  const double n = static_cast<double>(y.size());
  y_mean_ = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double var = 0;
  for (double v : y) var += (v - y_mean_) * (v - y_mean_);
  y_scale_ = std::max(std::sqrt(var / n), 1e-6);
  std::vector<double> ys(y.size());
  for (size_t i = 0; i < y.size(); ++i) ys[i] = (y[i] - y_mean_) / y_scale_;

  double best = -std::numeric_limits<double>::infinity(), best_l = kLengths[0],
         best_n = kNoises[std::size(kNoises) - 1];
  for (double l : kLengths)
    for (double s : kNoises) {
      length_ = l;
      noise_ = s;
      const double lml = factorise(ys);
      if (lml > best) {
        best = lml;
        best_l = l;
        best_n = s;
      }
    }
  length_ = best_l;
  noise_ = best_n;
  HWT_CHECK(std::isfinite(factorise(ys)), "GP covariance not positive definite");
}

GaussianProcess::Prediction GaussianProcess::predict(const std::vector<double>& x) const {
  const int n = static_cast<int>(x_.size());
  std::vector<double> k(x_.size());
  for (size_t i = 0; i < x_.size(); ++i) k[i] = kernel(x, x_[i]);
  const double mean = std::inner_product(k.begin(), k.end(), alpha_.begin(), 0.0);
  // Variance k(x, x) - k^T K^-1 k = 1 - |L^-1 k|^2.
  int info = 0, one = 1;
  const char lower = 'L', no = 'N', non_unit = 'N';
  dtrtrs_(&lower, &no, &non_unit, &n, &one, chol_.data(), &n, k.data(), &n, &info);
  HWT_CHECK(info == 0, "LAPACK dtrtrs failed ({})", info);
  const double var = std::max(1 - std::inner_product(k.begin(), k.end(), k.begin(), 0.0), 0.0);
  return {y_mean_ + y_scale_ * mean, y_scale_ * std::sqrt(var)};
}

ShapeFeatures::ShapeFeatures(const ModelSpace& space) {
  for (const std::vector<int64_t>* v : {&space.layers, &space.hidden, &space.heads, &space.ffn}) {
    const auto [lo, hi] = std::minmax_element(v->begin(), v->end());
    lo_.push_back(std::log2(static_cast<double>(*lo)));
    span_.push_back(std::log2(static_cast<double>(*hi)) - lo_.back());
  }
}

std::vector<double> ShapeFeatures::operator()(const ModelShape& s) const {
  const int64_t values[] = {s.layers, s.hidden, s.heads, s.ffn};
  std::vector<double> f(4);
  for (size_t i = 0; i < 4; ++i) {
    const double v = std::log2(static_cast<double>(values[i])) - lo_[i];
    f[i] = span_[i] > 0 ? v / span_[i] : 0.0;
  }
  return f;
}

}  // namespace hwt::codesign
