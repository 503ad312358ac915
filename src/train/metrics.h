// Evaluation metrics accumulated over batches: sequence accuracy, token accuracy, slot F1
// over BIO spans (the seqeval/JointBERT convention), sentence accuracy for joint tasks,
// and loss / perplexity for language models.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "data/batch.h"
#include "data/dataset.h"
#include "model/model.h"

namespace hwt {

struct EvalResult {
  double loss = 0;  // mean objective (sum of per-head mean losses)
  int64_t examples = 0;
  std::optional<double> accuracy;           // sequence classes
  std::optional<double> token_accuracy;     // token classes (non-LM)
  std::optional<double> slot_f1;            // BIO spans
  std::optional<double> sentence_accuracy;  // joint: the class and every tag right
  std::optional<double> perplexity;         // LM: exp(token loss)

  // The number model selection maximises: slot F1 + accuracy for joint tasks, else the one
  // metric the task has, and -loss for language models.
  double score() const;
  nlohmann::json to_json() const;
  std::string summary() const;  // "loss 0.123 acc 97.1%"
};

// BIO spans (type, first token, last token) of a tag sequence; an I- tag that does not
// continue a span of its type starts one, and a tag without B-/I- prefix is a span of its own.
struct Span {
  std::string type;
  int64_t begin, end;
  bool operator==(const Span&) const = default;
};
std::vector<Span> bio_spans(const std::vector<std::string>& tags);

class MetricAccumulator {
 public:
  MetricAccumulator(Task task, const LabelSet& token_labels);
  void add(const Batch& b, const Predictions& p, const LossSums& losses);
  EvalResult result() const;
  // Its sums and counts as numbers, to be summed across data-parallel ranks, and back.
  std::vector<double> totals() const;
  void set_totals(std::span<const double> t);

 private:
  Task task_;
  const LabelSet& token_labels_;
  double seq_loss_ = 0, token_loss_ = 0;
  int64_t seq_count_ = 0, token_count_ = 0, examples_ = 0;
  int64_t seq_correct_ = 0, token_correct_ = 0, sentence_correct_ = 0;
  int64_t spans_pred_ = 0, spans_gold_ = 0, spans_match_ = 0;
};

}  // namespace hwt
