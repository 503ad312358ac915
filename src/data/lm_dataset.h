// Language-modelling data (data.format=text): token streams instead of examples.
#pragma once

#include "data/dataset.h"

namespace hwt {

// data.path tokenised as one stream. Without data.valid_path/test_path, the last
// data.valid_fraction of the tokens validate and the data.test_fraction before them test
// (nanoGPT's convention).
Dataset load_lm_dataset(const DataConfig& c);

}  // namespace hwt
