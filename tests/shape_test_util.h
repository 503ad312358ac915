// Model shapes for the shape-advisor tests.
#pragma once

#include "analysis/shape_advisor.h"

namespace hwt::test {

// A causal LM of the given shape, traced at batch b and sequence s.
inline ShapeCase causal_lm(int64_t h, int64_t heads, int64_t ffn, int64_t layers, int64_t vocab,
                           int64_t b, int64_t s) {
  ShapeCase c;
  c.model.vocab_size = vocab;
  c.model.max_seq = s;
  c.model.hidden = h;
  c.model.heads = heads;
  c.model.ffn = ffn;
  c.model.layers = layers;
  c.model.causal = true;
  c.model.head = Task::Lm;
  c.batch = b;
  c.seq = s;
  return c;
}

}  // namespace hwt::test
