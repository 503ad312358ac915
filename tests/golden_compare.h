// How the golden test compares a recorded answer with today's: keys, strings, integers and text
// exactly; floating-point numbers of JSON answers within a relative tolerance chosen by the kind
// of value (the subcommand that computed it). The recordings are made on one CPU and checked on
// others and on the portable build, and an fp32 result depends on the instruction set and on the
// GEMM kernel OpenBLAS picks for the CPU: both decide the order of float sums.
#pragma once

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace hwt::test {

// The relative tolerance for the JSON floats of one hwt subcommand's answer.
inline double float_tolerance(const std::string& subcommand) {
  // fp32 training (losses, metrics, probabilities after up to 60 steps): between CPUs and builds
  // the float sums run in another order (vector width, FMA, the GEMM kernel OpenBLAS picks), and
  // training carries that forward. The largest drift measured is 1.2e-7 relative (the portable
  // build against the native AVX-512 recording; docs/testing.md), so 1e-5 leaves a factor of 80,
  // while a real change (another batch, learning rate, initialisation or gradient) moves a loss
  // by 1e-3 or more.
  if (subcommand == "train" || subcommand == "eval" || subcommand == "predict") return 1e-5;
  // The analyses (FLOP counts, memory plans, GEMM time model, shape advice, step estimates, the
  // simulator) compute in double; builds differ only in rounding (FMA contraction, libm's
  // variants), measured at most 2.3e-14 relative. 1e-10 leaves a factor of 4000, and a modelling
  // change moves them by far more.
  return 1e-10;
}

// |a - b| within `relative` of the larger magnitude.
inline bool floats_agree(double a, double b, double relative) {
  return std::fabs(a - b) <= relative * std::max(std::fabs(a), std::fabs(b));
}

// What one comparison found: the differences, one line each with its place first, and the largest
// relative difference of the floats that agreed or not (the drift the golden test reports, so
// that a tolerance can be checked against what the machines really do).
struct Comparison {
  std::vector<std::string> differences;
  double largest_float_drift = 0;
};

// Where `got` is not a superset of `want` (every recorded key present with the same value; objects
// may gain keys, arrays keep their length). Keys in `uncompared` are skipped. Floats are compared
// within `relative`; integers, strings, booleans and nulls exactly, and a number does not change
// kind (an integer that becomes a float is a difference).
inline void compare_json(const nlohmann::json& want, const nlohmann::json& got,
                         const std::string& at, double relative,
                         const std::set<std::string>& uncompared, Comparison& out) {
  auto differ = [&](const std::string& line) { out.differences.push_back(at + ": " + line); };
  if (want.is_object()) {
    if (!got.is_object()) return differ("expected an object, got " + got.dump());
    for (const auto& [key, value] : want.items()) {
      if (uncompared.count(key)) continue;
      if (!got.contains(key)) {
        differ("key '" + key + "' is missing");
        continue;
      }
      compare_json(value, got[key], at + "." + key, relative, uncompared, out);
    }
  } else if (want.is_array()) {
    if (!got.is_array()) return differ("expected an array, got " + got.dump());
    if (want.size() != got.size())
      return differ("array length " + std::to_string(want.size()) + " recorded, " +
                    std::to_string(got.size()) + " now");
    for (size_t i = 0; i < want.size(); ++i)
      compare_json(want[i], got[i], at + "[" + std::to_string(i) + "]", relative, uncompared, out);
  } else if (want.is_number_float() && got.is_number_float()) {
    const double w = want.get<double>(), g = got.get<double>();
    const double larger = std::max(std::fabs(w), std::fabs(g));
    if (larger > 0)
      out.largest_float_drift = std::max(out.largest_float_drift, std::fabs(w - g) / larger);
    if (!floats_agree(w, g, relative))
      differ(want.dump() + " recorded, " + got.dump() + " now (" +
             std::to_string(std::fabs(w - g) / larger) + " relative, tolerance " +
             std::to_string(relative) + ")");
  } else if (want != got || want.type() != got.type()) {
    differ(want.dump() + " recorded, " + got.dump() + " now");
  }
}

}  // namespace hwt::test
