#include "backend/ttm_table.h"

#include "core/error.h"

namespace hwt {

int64_t TtmTable::rows() const {
  int64_t p = 1;
  for (int64_t v : vocab) p *= v;
  return p;
}

int64_t TtmTable::cols() const {
  return hidden_before(cores());
}

int64_t TtmTable::hidden_before(size_t k) const {
  int64_t p = 1;
  for (size_t j = 0; j < k; ++j) p *= hidden[j];
  return p;
}

int64_t TtmTable::hidden_after(size_t k) const {
  int64_t p = 1;
  for (size_t j = k + 1; j < cores(); ++j) p *= hidden[j];
  return p;
}

int64_t TtmTable::digit(int64_t id, size_t k) const {
  for (size_t j = k + 1; j < cores(); ++j) id /= vocab[j];
  return id % vocab[k];
}

double TtmTable::forward_flops() const {
  double f = 0;
  for (size_t k = 1; k < cores(); ++k) f += 2.0 * static_cast<double>(hidden_before(k) * slice(k));
  return f;
}

double TtmTable::backward_flops() const {
  const size_t d = cores();
  double f = 0;
  for (size_t k = 0; k < d; ++k) {
    const double after = static_cast<double>(hidden_after(k));
    if (k >= 1 && k + 2 <= d)
      f += 2.0 * static_cast<double>(hidden_before(k) * slice(k));               // prefix
    if (k >= 1 && k + 2 <= d) f += 2.0 * static_cast<double>(slice(k)) * after;  // suffix
    if (k >= 1) f += 2.0 * static_cast<double>(ranks[k] * cols());               // Z
    if (k + 1 < d) f += 2.0 * static_cast<double>(slice(k)) * after;             // dS
  }
  return f;
}

TtmTable ttm_table(const std::vector<Tensor>& cores) {
  HWT_CHECK(!cores.empty(), "a TTM table needs at least one core");
  TtmTable t;
  t.ranks.push_back(1);
  for (const Tensor& g : cores) {
    HWT_CHECK(g.shape.rank == 4 && g.dim(0) == t.ranks.back(), "TTM core {} after rank {}",
              g.shape.str(), t.ranks.back());
    t.vocab.push_back(g.dim(1));
    t.hidden.push_back(g.dim(2));
    t.ranks.push_back(g.dim(3));
  }
  HWT_CHECK(t.ranks.back() == 1, "the last TTM core {} must end in rank 1", cores.back().str());
  return t;
}

}  // namespace hwt
