#include "train/generate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "core/bf16.h"
#include "core/error.h"
#include "core/philox.h"

namespace hwt {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Rows of a logits tensor as floats on the host (downloading synchronises).
std::vector<float> download_rows(Backend& be, const Tensor& logits, int64_t first, int64_t count) {
  const Tensor rows = logits.row_slice(first, count);
  std::vector<float> out(static_cast<size_t>(rows.numel()));
  if (rows.dtype == DType::F32) {
    be.download(out.data(), rows);
    return out;
  }
  HWT_CHECK(rows.dtype == DType::BF16, "logits of dtype {} for generation", dtype_name(rows.dtype));
  std::vector<uint16_t> raw(out.size());
  be.download(raw.data(), rows);
  std::transform(raw.begin(), raw.end(), out.begin(), bf16_to_float);
  return out;
}

// The text the generated tokens add to the prompt's: decoded with the prompt (a token's text
// can depend on the one before it), or alone where that does not begin with the prompt's text.
std::string continuation_text(const Tokenizer& tok, const Generation& g) {
  std::vector<int32_t> all = g.prompt_ids;
  all.insert(all.end(), g.tokens.begin(), g.tokens.end());
  const std::string full = tok.decode(all);
  return full.starts_with(g.prompt_text) ? full.substr(g.prompt_text.size()) : tok.decode(g.tokens);
}

// Where the valid UTF-8 text of `s` ends: before a character whose bytes have not all come yet.
size_t complete_utf8(std::string_view s) {
  size_t i = s.size(), back = 0;
  while (i > 0 && back < 4 && (static_cast<unsigned char>(s[i - 1]) & 0xC0) == 0x80) --i, ++back;
  if (i == 0) return s.size();
  const auto lead = static_cast<unsigned char>(s[i - 1]);
  const size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  return back + 1 < need ? i - 1 : s.size();
}

struct Sequence {
  Generation g;
  bool done = false;
  size_t shown = 0;  // bytes of g.text given to on_text
};

}  // namespace

std::string_view finish_name(Finish f) {
  switch (f) {
    case Finish::Length:
      return "length";
    case Finish::Stop:
      return "stop";
    case Finish::EndOfText:
      return "end_of_text";
    case Finish::Context:
      return "context";
  }
  return "?";
}

int32_t sample_token(std::span<const float> logits, const SamplingOptions& s, uint64_t draw) {
  const int64_t n = std::ssize(logits);
  HWT_CHECK(n > 0, "sampling from no logits");
  if (s.temperature <= 0)
    return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  const float mx = *std::max_element(logits.begin(), logits.end());
  std::vector<double> p(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    p[static_cast<size_t>(i)] =
        std::exp(static_cast<double>(logits[static_cast<size_t>(i)] - mx) / s.temperature);
  const bool top_k = s.top_k > 0 && s.top_k < n;
  if (top_k || s.top_p < 1) {
    // Most likely first; equal probabilities by token order, as greedy picks them.
    std::vector<int32_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
      return p[static_cast<size_t>(a)] > p[static_cast<size_t>(b)];
    });
    size_t keep = top_k ? static_cast<size_t>(s.top_k) : order.size();
    double total = 0;  // of the top-k tokens: the nucleus is taken from what top-k kept
    for (size_t i = 0; i < keep; ++i) total += p[static_cast<size_t>(order[i])];
    double mass = 0;
    for (size_t i = 0; i < keep; ++i) {
      mass += p[static_cast<size_t>(order[i])];
      if (mass >= s.top_p * total) keep = i + 1;  // the nucleus: at least one token
    }
    for (size_t i = keep; i < order.size(); ++i) p[static_cast<size_t>(order[i])] = 0;
  }
  const double z = std::accumulate(p.begin(), p.end(), 0.0);
  const double u = philox_uniform(s.seed, draw) * z;
  double acc = 0;
  int32_t last = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (p[static_cast<size_t>(i)] <= 0) continue;
    last = static_cast<int32_t>(i);
    if ((acc += p[static_cast<size_t>(i)]) > u) break;
  }
  return last;
}

std::vector<std::vector<int32_t>> encode_prompts(const Tokenizer& tok,
                                                 const std::vector<std::string>& prompts,
                                                 int64_t max_seq) {
  if (prompts.empty()) fail_input("no prompt: give --prompt TEXT or --prompt-file FILE");
  std::vector<std::vector<int32_t>> ids;
  for (size_t i = 0; i < prompts.size(); ++i) {
    ids.push_back(tok.encode(prompts[i]));
    if (ids.back().empty())
      fail_input("prompt {} is empty: it must contain at least one token", i + 1);
    if (std::ssize(ids.back()) > max_seq)
      fail_input("prompt {} has {} tokens; the model's context (model.max_seq) is {}", i + 1,
                 ids.back().size(), max_seq);
  }
  return ids;
}

GenerationPlan plan_generation(const std::vector<std::vector<int32_t>>& prompts,
                               int64_t max_new_tokens, int64_t max_seq) {
  GenerationPlan p;
  p.batch = std::ssize(prompts);
  for (const auto& ids : prompts) p.prompt_seq = std::max(p.prompt_seq, std::ssize(ids));
  p.kv_capacity = std::min(max_seq, p.prompt_seq + max_new_tokens);
  return p;
}

std::vector<Generation> generate(Model& model, const Tokenizer& tok,
                                 const std::vector<std::vector<int32_t>>& prompts,
                                 const GenerateOptions& o,
                                 const std::function<void(size_t, std::string_view)>& on_text,
                                 GenerationSpeed* speed) {
  const ModelConfig& cfg = model.config();
  const int64_t vocab = cfg.vocab_size, max_seq = cfg.max_seq;
  const GenerationPlan plan = plan_generation(prompts, o.max_new_tokens, max_seq);
  std::vector<Sequence> seqs(prompts.size());
  Batch b;
  b.batch = plan.batch;
  b.seq = plan.prompt_seq;
  b.ids.assign(static_cast<size_t>(b.batch * b.seq), tok.pad_id() >= 0 ? tok.pad_id() : 0);
  for (size_t i = 0; i < prompts.size(); ++i) {
    std::copy(prompts[i].begin(), prompts[i].end(),
              b.ids.begin() + static_cast<int64_t>(i) * b.seq);
    b.lengths.push_back(static_cast<int32_t>(prompts[i].size()));
    seqs[i].g.prompt_ids = prompts[i];
    seqs[i].g.prompt_text = tok.decode(prompts[i]);
  }
  size_t hold = 0;  // bytes a stop string could still complete
  for (const std::string& s : o.stop) hold = std::max(hold, s.empty() ? 0 : s.size() - 1);

  // The text is followed token by token only for stop strings and streaming; otherwise it is
  // decoded once at the end (decoding the whole sequence per token costs more than a GPU step).
  const bool follow_text = on_text || !o.stop.empty();
  const std::vector<int32_t> stops = tok.stop_ids();
  // Appends a token to sequence i and decides whether it ended; streams what is certain.
  auto take = [&](size_t i, int32_t token) {
    Sequence& s = seqs[i];
    Generation& g = s.g;
    if (std::find(stops.begin(), stops.end(), token) != stops.end()) {
      g.finish = Finish::EndOfText;
      s.done = true;
    } else {
      g.tokens.push_back(token);
      size_t cut = std::string::npos;
      if (follow_text) {
        g.text = continuation_text(tok, g);
        for (const std::string& stop : o.stop)
          if (!stop.empty()) cut = std::min(cut, g.text.find(stop));
      }
      if (cut != std::string::npos) {
        g.text.resize(cut);
        g.finish = Finish::Stop;
        s.done = true;
      } else if (std::ssize(g.tokens) >= o.max_new_tokens) {
        g.finish = Finish::Length;
        s.done = true;
      } else if (std::ssize(g.prompt_ids) + std::ssize(g.tokens) >= plan.kv_capacity) {
        g.finish = plan.kv_capacity < max_seq ? Finish::Length : Finish::Context;
        s.done = true;
      }
    }
    if (!on_text) return;
    size_t ready = g.text.size();
    if (!s.done)
      ready = complete_utf8(std::string_view(g.text).substr(0, ready > hold ? ready - hold : 0));
    if (ready > s.shown) {
      on_text(i, std::string_view(g.text).substr(s.shown, ready - s.shown));
      s.shown = ready;
    }
  };

  Backend& be = model.backend();
  auto t = Clock::now();
  // Greedy picks are made on the device (Model::predictions): one id per row comes back
  // instead of the row's logits.
  const bool greedy = o.sampling.temperature == 0;
  model.prefill(b);
  const std::vector<int32_t> prefill_picks =
      greedy ? model.predictions().tokens : std::vector<int32_t>{};
  for (size_t i = 0; i < seqs.size(); ++i) {
    const int64_t last = static_cast<int64_t>(i) * b.seq + b.lengths[i] - 1;
    if (greedy) {
      take(i, prefill_picks[static_cast<size_t>(last)]);
      continue;
    }
    const std::vector<float> row = download_rows(be, model.token_logits(), last, 1);
    take(i, sample_token(std::span(row).first(static_cast<size_t>(vocab)), o.sampling, 0));
  }
  if (speed) {
    speed->prefill_tokens += b.tokens();
    speed->prefill_seconds += seconds_since(t);
  }
  t = Clock::now();
  int64_t decoded = 0;
  // Steps a sequence can still take before it ends by length (max_new_tokens or the cache).
  auto steps_left = [&](const Sequence& s) {
    const int64_t made = std::ssize(s.g.tokens);
    return std::min(o.max_new_tokens - made, plan.kv_capacity - std::ssize(s.g.prompt_ids) - made);
  };
  // Greedy steps run in chunks chained on the device (Model::decode_greedy): the host reads a
  // chunk's picks at once instead of waiting for every step. A chunk is sized to take about
  // kChunkSeconds, so that streamed text still flows, and never outlasts the longest sequence's
  // length; a sequence that ends inside one (end of text, a stop string) runs along to its end.
  constexpr double kChunkSeconds = 0.02;
  constexpr int64_t kMaxChunk = 32;
  int64_t chunk = 1;
  for (uint64_t step = 1;;) {
    int64_t left = 0;
    for (const Sequence& s : seqs)
      if (!s.done) left = std::max(left, steps_left(s));
    if (left == 0) break;
    // Finished sequences run along with their last token; their results are ignored.
    std::vector<int32_t> ids;
    for (const Sequence& s : seqs)
      ids.push_back(s.g.tokens.empty() ? s.g.prompt_ids.back() : s.g.tokens.back());
    if (greedy) {
      const int64_t n = std::min(chunk, left);
      const auto started = Clock::now();
      const std::vector<int32_t> picks = model.decode_greedy(ids, n);
      for (int64_t k = 0; k < n; ++k)
        for (size_t i = 0; i < seqs.size(); ++i) {
          if (seqs[i].done) continue;
          ++decoded;
          take(i, picks[static_cast<size_t>(k) * seqs.size() + i]);
        }
      const double per_step = seconds_since(started) / static_cast<double>(n);
      chunk = std::clamp<int64_t>(static_cast<int64_t>(kChunkSeconds / std::max(per_step, 1e-9)), 1,
                                  kMaxChunk);
      continue;
    }
    model.decode(ids);
    const int64_t padded = model.token_logits().cols();
    const std::vector<float> rows = download_rows(be, model.token_logits(), 0, std::ssize(ids));
    for (size_t i = 0; i < seqs.size(); ++i) {
      if (seqs[i].done) continue;
      ++decoded;
      take(i, sample_token(std::span(rows).subspan(i * static_cast<size_t>(padded),
                                                   static_cast<size_t>(vocab)),
                           o.sampling, step));
    }
    ++step;
  }
  if (speed) {
    speed->decode_tokens += decoded;
    speed->decode_seconds += seconds_since(t);
  }
  std::vector<Generation> out;
  for (Sequence& s : seqs) {
    if (!follow_text) s.g.text = continuation_text(tok, s.g);
    out.push_back(std::move(s.g));
  }
  return out;
}

}  // namespace hwt
