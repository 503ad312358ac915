// The accuracy surrogate: a Gaussian process over shape features, fitted to the shapes trained
// so far. A GP suits a few dozen points, gives the uncertainty the acquisition needs, and costs
// no dependency beyond the LAPACK hwt already links (docs/codesign.md has the comparison).
#pragma once

#include <vector>

#include "codesign/model_space.h"

namespace hwt::codesign {

// A squared-exponential kernel on standardised targets plus observation noise; the length scale
// and the noise are chosen by the largest log marginal likelihood over a fixed grid.
class GaussianProcess {
 public:
  // x: points of equal dimension; y: their targets (at least one point).
  void fit(std::vector<std::vector<double>> x, const std::vector<double>& y);

  struct Prediction {
    double mean = 0, std = 0;
  };
  Prediction predict(const std::vector<double>& x) const;

  double length_scale() const { return length_; }
  double noise() const { return noise_; }

 private:
  double kernel(const std::vector<double>& a, const std::vector<double>& b) const;
  // Factorises K + noise I for the current hyperparameters into chol_ and solves alpha_;
  // returns the log marginal likelihood.
  double factorise(const std::vector<double>& ys);

  std::vector<std::vector<double>> x_;
  std::vector<double> chol_, alpha_;  // lower Cholesky factor (column-major), K^-1 y
  double y_mean_ = 0, y_scale_ = 1, length_ = 1, noise_ = 1e-2;
};

// A shape as the GP sees it: log2 of each of layers, hidden, heads and FFN width, scaled so the
// space's smallest and largest choices map to 0 and 1 (a single choice maps to 0).
class ShapeFeatures {
 public:
  explicit ShapeFeatures(const ModelSpace& space);
  std::vector<double> operator()(const ModelShape& s) const;

 private:
  std::vector<double> lo_, span_;
};

}  // namespace hwt::codesign
