// Model shapes for the shape-advisor tests.
#pragma once

#include "analysis/shape_advisor.h"

namespace hwt::test {

// A causal LM of the given shape, traced at batch b and sequence s, its vocabulary, FFN and
// hidden widths stored as they are (model.vocab_multiple, ffn_multiple and hidden_multiple 1),
// so that the shapes under test reach the GEMMs unchanged.
inline StepSpec causal_lm(int64_t h, int64_t heads, int64_t ffn, int64_t layers, int64_t vocab,
                          int64_t b, int64_t s) {
  StepSpec c;
  c.config.model.vocab_size = vocab;
  c.config.model.vocab_multiple = 1;
  c.config.model.ffn_multiple = 1;
  c.config.model.hidden_multiple = 1;
  c.config.model.max_seq = s;
  c.config.model.hidden = h;
  c.config.model.heads = heads;
  c.config.model.ffn = ffn;
  c.config.model.layers = layers;
  c.config.model.causal = true;
  c.config.model.head = Task::Lm;
  c.batch = b;
  c.seq = s;
  return c;
}

}  // namespace hwt::test
