// Examples as read from disk, before tokenisation, and the per-format readers that make them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/data_config.h"

namespace hwt {

struct RawExample {
  std::string text;
  std::string label;              // sequence label
  std::vector<std::string> tags;  // token labels, one per whitespace-separated token of text
  // Where the label and the tags were read, for error messages; line 0: the whole file.
  std::shared_ptr<const std::string> label_file, tags_file;
  int64_t line = 0;
};

struct RawSplits {
  std::vector<RawExample> train, valid, test;
  std::string source;  // "<format> <path>"
};

// spam-assassin folder (data.path, or the installed default): one example per e-mail, split
// by data.valid_fraction/test_fraction. Only the e-mails kept after data.max_examples are read.
RawSplits read_spam(const DataConfig& c);

// JointBERT folder with train/, dev/, test/ (seq.in, label, seq.out); reads the intent labels
// and/or the slot tags as asked.
RawSplits read_jointbert(const DataConfig& c, bool intents, bool tags);

// tsv, csv or jsonl: data.path, with data.valid_path/test_path or fractions split off it.
RawSplits read_table(const DataConfig& c);

}  // namespace hwt
