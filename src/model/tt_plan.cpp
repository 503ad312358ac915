#include "model/tt_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/error.h"

namespace hwt {
namespace {

// The cheapest bracketing of every run of cores (matrix-chain order), by (FLOPs, largest).
class ChainOrder {
 public:
  explicit ChainOrder(const TtChain& c) : n_(c.cores()), best_(n_ * n_) {
    for (size_t len = 2; len <= n_; ++len)
      for (size_t a = 0; a + len <= n_; ++a) {
        const size_t b = a + len - 1;
        Best& out = at(a, b);
        out.flops = -1;
        for (size_t s = a; s < b; ++s) {
          const double m = static_cast<double>(c.ranks[a] * c.product(a, s));
          const double k = static_cast<double>(c.ranks[s + 1]);
          const double nn = static_cast<double>(c.product(s + 1, b) * c.ranks[b + 1]);
          const double flops = at(a, s).flops + at(s + 1, b).flops + 2 * m * k * nn;
          const int64_t largest =
              std::max({at(a, s).largest, at(s + 1, b).largest, c.run_elements(a, b)});
          if (out.flops < 0 ||
              std::make_pair(flops, largest) < std::make_pair(out.flops, out.largest))
            out = Best{flops, largest, s};
        }
      }
  }
  double flops(size_t a, size_t b) const { return at(a, b).flops; }
  int64_t largest(size_t a, size_t b) const { return at(a, b).largest; }
  // The merges that build run [a, b], children first.
  void merges(size_t a, size_t b, std::vector<TtMerge>& out) const {
    if (a == b) return;
    const size_t s = at(a, b).split;
    merges(a, s, out);
    merges(s + 1, b, out);
    out.push_back(TtMerge{a, s, b});
  }

 private:
  struct Best {
    double flops = 0;
    int64_t largest = 0;
    size_t split = 0;
  };
  Best& at(size_t a, size_t b) { return best_[a * n_ + b]; }
  const Best& at(size_t a, size_t b) const { return best_[a * n_ + b]; }
  size_t n_;
  std::vector<Best> best_;
};

std::string bracketing(const std::vector<TtMerge>& merges, size_t a, size_t b) {
  if (a == b) return fmt::format("G{}", a + 1);
  for (const TtMerge& m : merges)
    if (m.first == a && m.last == b)
      return fmt::format("({}·{})", bracketing(merges, a, m.split),
                         bracketing(merges, m.split + 1, b));
  HWT_CHECK(false, "no merge builds cores {}..{}", a + 1, b + 1);
}

}  // namespace

int64_t TtChain::product(size_t first, size_t last) const {
  int64_t p = 1;
  for (size_t k = first; k <= last; ++k) p *= factors[k];
  return p;
}

int64_t TtChain::run_elements(size_t first, size_t last) const {
  return ranks[first] * product(first, last) * ranks[last + 1];
}

TtChain tt_linear_chain(const std::vector<int64_t>& out, const std::vector<int64_t>& in,
                        const std::vector<int64_t>& ranks) {
  TtChain c;
  c.factors = out;
  c.factors.insert(c.factors.end(), in.begin(), in.end());
  c.ranks.push_back(1);
  c.ranks.insert(c.ranks.end(), ranks.begin(), ranks.end());
  c.ranks.push_back(1);
  c.out_cores = out.size();
  HWT_CHECK(!out.empty() && !in.empty() && c.ranks.size() == c.factors.size() + 1,
            "TT chain of {} out and {} in factors with {} ranks", out.size(), in.size(),
            ranks.size());
  return c;
}

TtPlan plan_tt_linear(const TtChain& c, int64_t rows) {
  const ChainOrder order(c);
  const size_t d = c.cores(), mid = c.out_cores;
  const double m = static_cast<double>(c.out_dim()), n = static_cast<double>(c.in_dim());
  const double r = static_cast<double>(c.middle_rank()), b = static_cast<double>(rows);

  TtPlan factored;
  factored.factored = true;
  order.merges(0, mid - 1, factored.merges);
  order.merges(mid, d - 1, factored.merges);
  const double merge_flops = order.flops(0, mid - 1) + order.flops(mid, d - 1);
  factored.forward_flops = merge_flops + 2 * b * r * (m + n);
  factored.backward_flops = 2 * merge_flops + 4 * b * r * (m + n);
  factored.largest =
      std::max({mid > 1 ? order.largest(0, mid - 1) : 0,
                d - mid > 1 ? order.largest(mid, d - 1) : 0, rows * c.middle_rank()});

  TtPlan dense;
  dense.factored = false;
  order.merges(0, d - 1, dense.merges);
  dense.forward_flops = order.flops(0, d - 1) + 2 * b * m * n;
  dense.backward_flops = 2 * order.flops(0, d - 1) + 4 * b * m * n;
  dense.largest = order.largest(0, d - 1);

  const auto key = [](const TtPlan& p) {
    return std::make_pair(p.forward_flops + p.backward_flops, p.largest);
  };
  return key(dense) < key(factored) ? dense : factored;
}

std::string describe(const TtChain& c, const TtPlan& p) {
  const size_t d = c.cores(), mid = c.out_cores;
  const std::string order =
      p.factored
          ? fmt::format("factored (x·L'ᵀ)·R'ᵀ through rank {}, R' = {}, L' = {}", c.middle_rank(),
                        bracketing(p.merges, 0, mid - 1), bracketing(p.merges, mid, d - 1))
          : fmt::format("dense x·Wᵀ, W = {}", bracketing(p.merges, 0, d - 1));
  return fmt::format(
      "{}; {:.4g} MFLOP forward, {:.4g} MFLOP backward, largest intermediate {} "
      "elements",
      order, p.forward_flops / 1e6, p.backward_flops / 1e6, p.largest);
}

}  // namespace hwt
