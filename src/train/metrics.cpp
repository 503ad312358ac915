#include "train/metrics.h"

#include <fmt/format.h>

#include <cmath>

#include <nlohmann/json.hpp>
#include "core/error.h"

namespace hwt {

double EvalResult::score() const {
  if (slot_f1 && accuracy) return *slot_f1 + *accuracy;
  if (accuracy) return *accuracy;
  if (slot_f1) return *slot_f1;
  return -loss;
}

nlohmann::json EvalResult::to_json() const {
  nlohmann::json j = {{"loss", loss}, {"examples", examples}};
  if (accuracy) j["accuracy"] = *accuracy;
  if (token_accuracy) j["token_accuracy"] = *token_accuracy;
  if (slot_f1) j["slot_f1"] = *slot_f1;
  if (sentence_accuracy) j["sentence_accuracy"] = *sentence_accuracy;
  if (perplexity) j["perplexity"] = *perplexity;
  return j;
}

std::string EvalResult::summary() const {
  std::string s = fmt::format("loss {:.4f}", loss);
  if (accuracy) s += fmt::format(" acc {:.2f}%", 100 * *accuracy);
  if (slot_f1) s += fmt::format(" slot-F1 {:.2f}", 100 * *slot_f1);
  if (sentence_accuracy) s += fmt::format(" sent-acc {:.2f}%", 100 * *sentence_accuracy);
  if (perplexity) s += fmt::format(" ppl {:.3f}", *perplexity);
  return s;
}

std::vector<Span> bio_spans(const std::vector<std::string>& tags) {
  std::vector<Span> spans;
  auto type_of = [](const std::string& t) {
    return (t.size() > 2 && (t[0] == 'B' || t[0] == 'I') && t[1] == '-') ? t.substr(2) : t;
  };
  for (size_t i = 0; i < tags.size(); ++i) {
    const std::string& t = tags[i];
    if (t == "O") continue;
    const std::string type = type_of(t);
    const bool continues = t[0] == 'I' && t.size() > 2 && t[1] == '-' && !spans.empty() &&
                           spans.back().end == static_cast<int64_t>(i) - 1 &&
                           spans.back().type == type;
    if (continues)
      spans.back().end = static_cast<int64_t>(i);
    else
      spans.push_back({type, static_cast<int64_t>(i), static_cast<int64_t>(i)});
  }
  return spans;
}

MetricAccumulator::MetricAccumulator(Task task, const LabelSet& token_labels)
    : task_(task), token_labels_(token_labels) {}

void MetricAccumulator::add(const Batch& b, const Predictions& p, const LossSums& l) {
  seq_loss_ += l.seq;
  token_loss_ += l.token;
  seq_count_ += l.seq_count;
  token_count_ += l.token_count;
  examples_ += b.batch;
  if (task_ == Task::Lm) return;
  for (int64_t i = 0; i < b.batch; ++i) {
    bool all_right = true;
    if (!b.seq_labels.empty()) {
      const bool ok = p.seq[static_cast<size_t>(i)] == b.seq_labels[static_cast<size_t>(i)];
      seq_correct_ += ok;
      all_right = all_right && ok;
    }
    if (b.token_labels.empty()) {
      sentence_correct_ += all_right;
      continue;
    }
    std::vector<std::string> gold, pred;
    for (int64_t t = 0; t < b.seq; ++t) {
      const size_t at = static_cast<size_t>(i * b.seq + t);
      if (b.token_labels[at] < 0) continue;
      const bool ok = p.tokens[at] == b.token_labels[at];
      token_correct_ += ok;
      all_right = all_right && ok;
      gold.push_back(token_labels_.name(b.token_labels[at]));
      pred.push_back(token_labels_.name(p.tokens[at]));
    }
    const std::vector<Span> gs = bio_spans(gold), ps = bio_spans(pred);
    spans_gold_ += std::ssize(gs);
    spans_pred_ += std::ssize(ps);
    for (const Span& s : ps)
      for (const Span& g : gs) spans_match_ += s == g;
    sentence_correct_ += all_right;
  }
}

std::vector<double> MetricAccumulator::totals() const {
  auto d = [](int64_t n) { return static_cast<double>(n); };
  return {seq_loss_,      token_loss_,     d(seq_count_),     d(token_count_),
          d(examples_),   d(seq_correct_), d(token_correct_), d(sentence_correct_),
          d(spans_pred_), d(spans_gold_),  d(spans_match_)};
}

void MetricAccumulator::set_totals(std::span<const double> t) {
  HWT_CHECK(t.size() == 11, "{} metric totals", t.size());
  auto n = [&](size_t i) { return static_cast<int64_t>(std::llround(t[i])); };
  seq_loss_ = t[0];
  token_loss_ = t[1];
  seq_count_ = n(2);
  token_count_ = n(3);
  examples_ = n(4);
  seq_correct_ = n(5);
  token_correct_ = n(6);
  sentence_correct_ = n(7);
  spans_pred_ = n(8);
  spans_gold_ = n(9);
  spans_match_ = n(10);
}

EvalResult MetricAccumulator::result() const {
  EvalResult r;
  r.examples = examples_;
  const double seq_mean = seq_count_ ? seq_loss_ / static_cast<double>(seq_count_) : 0;
  const double token_mean = token_count_ ? token_loss_ / static_cast<double>(token_count_) : 0;
  r.loss = seq_mean + token_mean;
  auto ratio = [](int64_t a, int64_t b) {
    return b ? static_cast<double>(a) / static_cast<double>(b) : 0.0;
  };
  if (task_ == Task::Lm) {
    r.perplexity = std::exp(token_mean);
    return r;
  }
  if (task_ == Task::Classify || task_ == Task::Joint) r.accuracy = ratio(seq_correct_, seq_count_);
  if (task_ == Task::Tokens || task_ == Task::Joint) {
    r.token_accuracy = ratio(token_correct_, token_count_);
    const double prec = ratio(spans_match_, spans_pred_), rec = ratio(spans_match_, spans_gold_);
    r.slot_f1 = prec + rec > 0 ? 2 * prec * rec / (prec + rec) : 0.0;
  }
  if (task_ == Task::Joint) r.sentence_accuracy = ratio(sentence_correct_, examples_);
  return r;
}

}  // namespace hwt
