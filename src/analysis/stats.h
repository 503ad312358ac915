// Agreement statistics between predicted and measured values.
#pragma once

#include <vector>

namespace hwt {

// Spearman rank correlation (ties share their average rank); 0 for fewer than two points.
double spearman(const std::vector<double>& x, const std::vector<double>& y);

// Median of v (the mean of the middle two for an even count); 0 when empty.
double median(std::vector<double> v);

}  // namespace hwt
