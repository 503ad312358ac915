#include "train/trainer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <optional>
#include <set>
#include <utility>

#include "core/files.h"
#include "core/fingerprint.h"
#include "core/integer_math.h"
#include "core/interrupt.h"
#include "core/philox.h"
#include "data/dataset.h"
#include "measure/host_info.h"
#include "model/model.h"
#include "report/progress_meter.h"
#include "train/checkpoint.h"
#include "train/evaluate.h"
#include "train/fine_tune.h"
#include "train/gradient_sync.h"
#include "train/metrics_sink.h"
#include "train/numeric_check.h"
#include "train/progress.h"
#include "train/run_files.h"
#include "train/run_setup.h"
#include "train/run_telemetry.h"
#include "train/schedule.h"
#include "train/sparsity_log.h"

namespace hwt {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Wall time per phase. Training steps are timed as a whole; their split into forward,
// backward and optimizer is sampled on timed steps, which synchronise the device at phase
// boundaries (every step on the CPU, where that costs nothing; log steps on a GPU, so other
// steps run without host synchronisation).
struct PhaseTimes {
  double data_load = 0, setup = 0, first_step = 0, train = 0, eval = 0, checkpoint = 0;
  double data = 0, forward = 0, backward = 0, optimizer = 0;  // over timed steps
  int64_t timed_steps = 0;
  nlohmann::json to_json(double total) const {
    const double n = static_cast<double>(std::max<int64_t>(1, timed_steps));
    return {{"total_s", total},
            {"data_load_s", data_load},
            {"setup_s", setup},
            {"first_step_s", first_step},
            {"train_s", train},
            {"eval_s", eval},
            {"checkpoint_s", checkpoint},
            {"timed_steps", timed_steps},
            {"step_phase_ms",
             {{"data", 1e3 * data / n},
              {"forward", 1e3 * forward / n},
              {"backward", 1e3 * backward / n},
              {"optimizer", 1e3 * optimizer / n}}}};
  }
};

class Run {
 public:
  explicit Run(const TrainRequest& r) : req_(r), cfg_(r.config), telemetry_(cfg_.train) {}
  nlohmann::json execute();

 private:
  Model& model() { return training_->model(); }
  bool leader() const { return req_.world.leader(); }
  int64_t ranks() const { return comm_ ? comm_->size() : 1; }
  void setup();
  void join_ranks();
  void start_from_init();
  bool next_batch(Batch& b);
  void train_step(int64_t step);
  bool captures(const Batch& b, bool timed) const;
  bool any_rank(bool mine, int64_t step);
  int any_rank_signal(int64_t step);
  std::optional<std::string> step_fault(bool loss_known, double loss);
  void check_weights(int64_t step);
  void evaluate_and_track(int64_t step);
  void save(const std::string& name, bool with_optimizer);
  nlohmann::json telemetry_report();
  [[noreturn]] void stop_on_fault(double total_s);
  nlohmann::json report(const std::string& stopped, const EvalResult& valid,
                        const std::optional<EvalResult>& test, double total_s);

  const TrainRequest& req_;
  RunConfig cfg_;
  RunTelemetry telemetry_;  // first, so that it measures the whole run
  Dataset data_;
  std::optional<Checkpoint> resume_;
  std::optional<Checkpoint> init_;     // --init: the weights the run starts from
  std::vector<std::string> starting_;  // what the run says about its start, once progress shows
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<TrainingModel> training_;
  std::unique_ptr<Communicator> comm_;  // data parallel; null for one process
  std::unique_ptr<GradientSync> sync_;
  std::unique_ptr<BatchIterator> it_;
  std::unique_ptr<MetricsSink> log_;
  std::unique_ptr<Progress> progress_;
  std::unique_ptr<SparsityLog> sparsity_;  // model.prune on
  TrainState state_;
  PhaseTimes times_;
  RunCurves curve_;
  std::vector<float> best_params_;
  std::vector<std::string> notices_;  // the backend's slow paths, in run.json
  LossHistory losses_;
  std::string last_checkpoint_;              // the newest with optimizer state, for a diagnosis
  std::optional<NumericFaultReport> fault_;  // set when a step met NaN or infinity
  nlohmann::json stop_detail_ = nlohmann::json::object();  // into run.json's results
  int64_t total_steps_ = 0, steps_per_epoch_ = 0;
  int64_t tokens_since_log_ = 0, tokens_trained_ = 0;
  Clock::time_point last_log_ = Clock::now();
  bool data_exhausted_ = false;
  // train.cuda_graph: the (batch, seq) shapes of finished steps.
  std::set<std::pair<int64_t, int64_t>> warm_shapes_;
};

void Run::setup() {
  const auto t0 = Clock::now();
  if (!req_.resume.empty()) resume_.emplace(req_.resume);
  if (!req_.init.empty()) init_.emplace(req_.init);
  // The token cache's lines (built, reused, stale) are progress output: the leader's, not --quiet;
  // on a terminal a meter follows the encoding of a corpus, with the time left.
  const bool show = req_.progress && leader();
  ProgressMeter encoding("tokenising", "MB", show);
  TokenizeOptions tokenize = tokenize_with_meter(cfg_.train.threads, encoding, show);
  static const nlohmann::json kNoTokenizer;
  const nlohmann::json& init_tokenizer =
      init_ ? init_->info().vocab.value("tokenizer", kNoTokenizer) : kNoTokenizer;
  const bool own_tokenizer = init_ && names_own_tokenizer(cfg_.data, init_tokenizer);
  if (init_ && !own_tokenizer) {
    if (init_tokenizer.is_null())
      fail_input(
          "--init {} holds no tokenizer (its Hugging Face folder had no tokenizer files hwt "
          "reads): name one with data.tokenizer and data.vocab",
          req_.init);
    tokenize.tokenizer = &init_tokenizer;
  }
  data_ = load_dataset(cfg_.data, cfg_.model.head, tokenize);
  encoding.finish();
  if (own_tokenizer && data_.tokenizer->vocab_size() != cfg_.model.vocab_size)
    fail_input("--init {}: the config's tokenizer has {} tokens, the init's model {}", req_.init,
               data_.tokenizer->vocab_size(), cfg_.model.vocab_size);
  times_.data_load = seconds_since(t0);
  if (resume_ && resume_->info().vocab != data_.vocab_json())
    fail_input(
        "checkpoint {}: the data's vocabulary or labels differ from those it was trained with",
        req_.resume);
  if (data_.train.size() == 0) fail_input("the training split of {} is empty", data_.source);
  cfg_.model = resolve_model_config(cfg_.model, data_);

  backend_ = make_backend(cfg_.train);
  // ZeRO-1 splits the flat buffers into one equal shard per rank.
  const int64_t storage_multiple = cfg_.train.zero == 1 ? 64 * int64_t{req_.world.size} : 1;
  training_ = std::make_unique<TrainingModel>(cfg_, *backend_, cfg_.train.batch_size,
                                              cfg_.data.max_len, storage_multiple, req_.choose_fp8);
  starting_.insert(starting_.end(), training_->fp8_notes().begin(), training_->fp8_notes().end());
  model().init_parameters(static_cast<uint64_t>(cfg_.train.seed));
  join_ranks();
  if (resume_) {
    resume_->load_parameters(model().params(), cfg_.model);
    if (!resume_->info().has_optimizer)
      fail_input("checkpoint {} has no optimizer state to resume from", req_.resume);
    resume_->load_optimizer(training_->optimizer(), cfg_.model);
    if (Fp8Training* fp8 = training_->fp8()) {
      if (const auto saved = resume_->fp8_state())
        fp8->restore(*saved);
      else
        warn("checkpoint {} was not saved by an fp8 run: the fp8 scales start afresh", req_.resume);
    }
    state_ = resume_->info().state;
    last_checkpoint_ = req_.resume;
  }
  if (init_) start_from_init();

  // train.batch_size is per rank: the ranks split batches of batch_size x ranks.
  it_ = std::make_unique<BatchIterator>(data_, data_.train, cfg_.train.batch_size * ranks(),
                                        cfg_.data.max_len, true,
                                        static_cast<uint64_t>(cfg_.train.seed));
  if (comm_) it_->set_shard(comm_->rank(), comm_->size());
  it_->set_word_dropout(cfg_.data.word_dropout);
  it_->seek(state_.epoch, state_.position);
  const int64_t accum = cfg_.train.grad_accum;
  steps_per_epoch_ = std::max<int64_t>(1, ceil_div(it_->batches_per_epoch(), accum));
  total_steps_ =
      cfg_.train.max_steps > 0 ? cfg_.train.max_steps : cfg_.train.epochs * steps_per_epoch_;
  // The output folder appears only once the data, model and checkpoint are known to be good.
  std::vector<std::string> stale;
  if (leader()) {
    make_output_folder(req_.out_dir);
    stale = remove_stale_temporaries(req_.out_dir);
    // checkpoint-step files, checkpoint.safetensors and the copy of its predecessor a save
    // replaces; best.safetensors (no optimizer state) fits in the margin that leaves.
    const int64_t step_files =
        cfg_.train.checkpoint_every > 0 ? total_steps_ / cfg_.train.checkpoint_every : 0;
    check_room_for_checkpoints(req_.out_dir,
                               static_cast<uint64_t>(model().params().count()) * sizeof(float) +
                                   training_->optimizer().state_bytes() *
                                       static_cast<uint64_t>(cfg_.train.zero == 1 ? ranks() : 1),
                               step_files + 2);
    // A fresh run replaces an earlier one in its folder whole (hwt train asks for --overwrite
    // first): no stale best.safetensors or step checkpoint may pass for this run's.
    if (!resume_)
      for (const std::string& name : run_files_in(req_.out_dir)) {
        std::error_code ec;
        std::filesystem::remove(std::filesystem::path(req_.out_dir) / name, ec);
        if (ec) fail_input("cannot replace {}/{}: {}", req_.out_dir, name, ec.message());
      }
    log_ = std::make_unique<MetricsSink>(req_.out_dir, resume_.has_value(), cfg_.train.tensorboard);
    log_->config_text(to_toml(cfg_));
  }
  progress_ = std::make_unique<Progress>(total_steps_, req_.progress && leader());
  for (const std::string& line : starting_) progress_->message(line);
  if (const Freezer& f = training_->freezer(); !f.empty()) {
    const int64_t all = model().params().parameters();
    progress_->message(fmt::format("train.freeze: training {} of {} parameters ({} frozen)",
                                   all - f.frozen_parameters(), all, f.frozen_parameters()));
  }
  if (!stale.empty())
    progress_->message(fmt::format("removed {} temporary file(s) of an interrupted write: {}",
                                   stale.size(), fmt::join(stale, ", ")));
  if (comm_)
    progress_->message(
        fmt::format("data parallel: {} ranks over {}, {}", comm_->size(), comm_->name(),
                    sync_ ? fmt::format("gradients in {} buckets", sync_->buckets().size())
                          : "ZeRO-1 (optimizer state sharded)"));
  if (Pruning* p = model().pruning()) sparsity_ = std::make_unique<SparsityLog>(*p);
  for (const std::string& line : model().tt_contractions())
    progress_->message("tensor train " + line);
  times_.setup = seconds_since(t0) - times_.data_load;
}

// --init: the weights of the init, a fresh task head where it has none for this data (or labels
// other than the data's), and the optimizer at step 0; train.freeze's count.
void Run::start_from_init() {
  const nlohmann::json& v = init_->info().vocab;
  const bool same_labels =
      v.value("labels", nlohmann::json()) == data_.labels.to_json() &&
      v.value("token_labels", nlohmann::json()) == data_.token_labels.to_json();
  const std::vector<std::string> fresh =
      init_->load_initial_parameters(model().params(), cfg_.model, same_labels);
  starting_.push_back(
      fmt::format("init: the weights of {}, fresh optimizer state at step 0", req_.init));
  if (!fresh.empty())
    starting_.push_back(fmt::format(
        "init: fresh task head {} (train.seed={}): the init has none for this data's {}",
        fmt::join(fresh, ", "), cfg_.train.seed,
        has_token_labels(cfg_.model.head) ? "token labels" : "labels"));
}

// Data parallel: the communicator, a check that every rank was given the same config, and the
// gradient buckets. Parameters start equal on every rank (the same seed or checkpoint).
void Run::join_ranks() {
  comm_ = make_communicator(req_.world, cfg_.train, *backend_);
  if (!comm_) return;
  if (cfg_.train.cuda_graph)
    fail_input("train.cuda_graph does not capture data-parallel steps; set it to false");
  // All ranks hold the same 16-bit pieces exactly when the sums of the pieces and of their
  // squares are N times this rank's own.
  const uint64_t h = fingerprint(to_json(cfg_).dump() + "\n" + req_.resume + "\n" + req_.init);
  std::vector<double> mine;
  for (int i = 0; i < 4; ++i) {
    const auto piece = static_cast<double>((h >> (16 * i)) & 0xffff);
    mine.insert(mine.end(), {piece, piece * piece});
  }
  std::vector<double> sums = mine;
  comm_->sum_host(sums);
  for (size_t i = 0; i < sums.size(); ++i)
    if (sums[i] != mine[i] * static_cast<double>(comm_->size()))
      fail_input("the {} ranks were given different configs or checkpoints", comm_->size());
  if (cfg_.train.zero == 1)
    training_->optimizer().shard(*comm_);  // its step reduce-scatters the gradients
  else
    sync_ = std::make_unique<GradientSync>(*comm_, model(), cfg_.train);
}

// The next micro-batch, moving to the next epoch at the end of one; false once train.epochs
// are done (when train.max_steps is not set).
bool Run::next_batch(Batch& b) {
  while (!it_->next(b)) {
    const int64_t next_epoch = it_->epoch() + 1;
    if (cfg_.train.max_steps == 0 && next_epoch >= cfg_.train.epochs) return false;
    it_->start_epoch(next_epoch);
  }
  return true;
}

// Whether to stop for a reason each rank sees on its own (train.time_limit, a signal). Data
// parallel: the ranks' clocks and signals differ, so they stop together when any rank's reason
// holds, checked on log steps (a check synchronises every rank).
bool Run::any_rank(bool mine, int64_t step) {
  if (!comm_) return mine;
  if (step % cfg_.train.log_every != 0) return false;
  std::array<double, 1> any = {mine ? 1.0 : 0.0};
  comm_->sum_host(any);
  return any[0] > 0;
}

// The stop signal any rank received (as any_rank checks it), or 0. Ranks signalled differently
// agree on SIGTERM, the scheduler's request, over SIGINT.
int Run::any_rank_signal(int64_t step) {
  const int mine = interrupt_signal();
  if (!comm_) return mine;
  if (step % cfg_.train.log_every != 0) return 0;
  std::array<double, 2> got = {mine == SIGTERM ? 1.0 : 0.0, mine == SIGINT ? 1.0 : 0.0};
  comm_->sum_host(got);
  return got[0] > 0 ? SIGTERM : got[1] > 0 ? SIGINT : 0;
}

// After a timed step: what was not finite in what the step computed anyway, or nullopt. The loss
// counts when `loss_known` (it is then the same on every rank); the gradient norm exists when
// clipping or fp16 loss scaling needs it (the same on every rank too). fp16 skips steps whose
// gradients overflow and halves its scale: only a collapsed scale is a fault.
std::optional<std::string> Run::step_fault(bool loss_known, double loss) {
  if (const LossScaler* s = training_->loss_scaler()) {
    if (s->collapsed())
      return fmt::format(
          "the fp16 loss scale collapsed to {:.3g} (the gradients overflow at every step)",
          s->read_scale());
    return std::nullopt;
  }
  if (const Fp8Training* fp8 = training_->fp8())
    if (auto why = fp8->collapsed()) return why;
  if (loss_known && !std::isfinite(loss)) return "the loss is " + value_text(loss);
  const Optimizer& o = training_->optimizer();
  if (o.computes_grad_norm()) {
    float norm_sq = 0;
    backend_->download(&norm_sq, o.grad_norm_sq());
    if (!std::isfinite(norm_sq)) return "the squared gradient norm is " + value_text(norm_sq);
  }
  return std::nullopt;
}

// Before weights are evaluated or saved: steps between checks (on a GPU, those that are not
// logged) may have made them non-finite, and such weights must never become a checkpoint.
void Run::check_weights(int64_t step) {
  if (fault_ || weights_finite(model().params())) return;
  fault_ = NumericFaultReport{step, "the weights are not finite",
                              learning_rate(cfg_.optim, step, total_steps_), losses_.str(),
                              last_checkpoint_};
}

// train.cuda_graph on a GPU: a micro-batch's forward and backward are captured and launched as
// one graph unless the step is timed (it synchronises between phases and reads the loss) or
// no finished step had its shape: the first run of a shape grows scratch memory and makes (and
// autotunes) GEMM plans, none of which may happen inside a capture. So the first step always
// runs uncaptured.
bool Run::captures(const Batch& b, bool timed) const {
  return cfg_.train.cuda_graph && backend_->device() == Device::Cuda && !timed &&
         warm_shapes_.contains({b.batch, b.seq});
}

void Run::train_step(int64_t step) {
  const auto step_start = Clock::now();
  const int64_t accum = cfg_.train.grad_accum;
  const bool log_now = step % cfg_.train.log_every == 0 || step == total_steps_;
  const bool timed = log_now || backend_->device() == Device::Cpu;
  // Adds the time since `t` to `phase` on timed steps (after letting the device finish).
  auto lap = [&](Clock::time_point& t, double& phase) {
    if (!timed) return;
    backend_->synchronize();
    phase += seconds_since(t);
    t = Clock::now();
  };
  // A timed step first lets the device finish the steps before it, whose work would otherwise
  // land in this step's data phase.
  if (timed) backend_->synchronize();
  model().params().zero_grads();
  double loss = 0;
  Batch b;
  std::vector<std::pair<int64_t, int64_t>> shapes;
  bool synced = false;
  auto t = Clock::now();
  for (int64_t micro = 0; micro < accum; ++micro) {
    if (!next_batch(b)) {
      data_exhausted_ = true;
      break;
    }
    // Each rank weights its gradients by its share of the global batch; the ranks' sum is then
    // the global batch's mean gradient.
    const double weight = it_->share() / static_cast<double>(accum);
    model().set_batch(b, static_cast<float>(weight));
    tokens_since_log_ += b.tokens();
    tokens_trained_ += b.tokens();
    lap(t, times_.data);
    const uint64_t seed = mix_seed(static_cast<uint64_t>(cfg_.train.seed) ^
                                   mix_seed(static_cast<uint64_t>(step * accum + micro)));
    CaptureScope graph(*backend_, captures(b, timed));
    shapes.emplace_back(b.batch, b.seq);
    model().forward(true, seed);
    if (timed) loss += model().losses().mean() * weight;
    lap(t, times_.forward);
    const bool last_micro = micro == accum - 1;
    if (sync_ && last_micro) sync_->start();
    model().backward();
    if (sync_ && last_micro) {
      sync_->finish();
      synced = true;
    }
    graph.launch();
    lap(t, times_.backward);
  }
  // The data ran out before the last micro-batch (on every rank alike): sum what there is.
  if (sync_ && !synced) {
    sync_->start();
    sync_->finish();
  }
  if (cfg_.train.cuda_graph) warm_shapes_.insert(shapes.begin(), shapes.end());
  const double lr = learning_rate(cfg_.optim, step, total_steps_);
  training_->update(step, lr, comm_.get());
  lap(t, times_.optimizer);
  times_.timed_steps += timed;
  times_.train += seconds_since(step_start);
  state_.step = step;
  state_.epoch = it_->epoch();
  state_.position = it_->position();
  if (log_now && comm_) {
    std::array<double, 2> sums = {loss, static_cast<double>(tokens_since_log_)};
    comm_->sum_host(sums);
    loss = sums[0];
    tokens_since_log_ = static_cast<int64_t>(sums[1]);
  }
  if (timed) {
    // Data parallel: off log steps the loss is this rank's alone.
    const bool loss_known = log_now || !comm_;
    if (loss_known) losses_.add(step, loss);
    if (const auto what = step_fault(loss_known, loss)) {
      fault_ = NumericFaultReport{step, *what, lr, losses_.str(), last_checkpoint_};
      return;
    }
  }
  if (!log_now) return;
  const double tps =
      static_cast<double>(tokens_since_log_) / std::max(1e-9, seconds_since(last_log_));
  tokens_since_log_ = 0;
  last_log_ = Clock::now();
  nlohmann::json line = {
      {"step", step}, {"epoch", state_.epoch}, {"loss", loss}, {"lr", lr}, {"tokens_per_s", tps}};
  line.update(telemetry_.next_log_interval());
  if (sparsity_) line["sparsity"] = sparsity_->window();
  if (Fp8Training* fp8 = training_->fp8()) line["fp8"] = fp8_metrics(fp8->take_figures());
  if (log_) log_->write(line);
  if (line.value("gpu_power_w", nlohmann::json()).is_number() &&
      line.value("gpu_util_pct", nlohmann::json()).is_number()) {
    curve_.gpu_step.push_back(static_cast<double>(step));
    curve_.gpu_power_w.push_back(line["gpu_power_w"].get<double>());
    curve_.gpu_util_pct.push_back(line["gpu_util_pct"].get<double>());
  }
  curve_.train_step.push_back(static_cast<double>(step));
  curve_.train_loss.push_back(loss);
  progress_->update(step, loss, lr, tps, cfg_.train.log_every);
}

void Run::evaluate_and_track(int64_t step) {
  if (data_.valid.size() == 0) return;
  const auto t = Clock::now();
  telemetry_.begin("eval");
  const EvalResult r = evaluate(model(), data_, data_.valid, cfg_.train.batch_size,
                                cfg_.data.max_len, cfg_.train.eval_batches, comm_.get());
  nlohmann::json line = r.to_json();
  line["step"] = step;
  line["split"] = "valid";
  if (log_) {
    log_->write(line);
    log_->histograms(step, model().params());
  }
  curve_.valid_step.push_back(static_cast<double>(step));
  curve_.valid_loss.push_back(r.loss);
  const bool improved = r.score() > state_.best_score;
  if (improved) {
    state_.best_score = r.score();
    state_.evals_since_best = 0;
    best_params_.resize(static_cast<size_t>(model().params().count()));
    backend_->download(best_params_.data(), model().params().params_flat());
  } else {
    ++state_.evals_since_best;
  }
  telemetry_.end("eval");
  times_.eval += seconds_since(t);
  progress_->message(
      fmt::format("step {} validation: {}{}", step, r.summary(), improved ? " (best)" : ""));
  if (improved) save("best.safetensors", false);
}

void Run::save(const std::string& name, bool with_optimizer) {
  const auto t = Clock::now();
  // Under ZeRO-1 every rank takes part in gathering the optimizer state.
  Optimizer::FullState optimizer;
  if (with_optimizer) optimizer = training_->optimizer().full_state();
  if (!leader()) return;
  const Fp8Training* fp8 = with_optimizer ? training_->fp8() : nullptr;
  const std::vector<float> fp8_state = fp8 ? fp8->state() : std::vector<float>{};
  save_checkpoint(req_.out_dir + "/" + name, cfg_, data_.vocab_json(), state_, model().params(),
                  with_optimizer ? &optimizer.tensors : nullptr, fp8 ? &fp8_state : nullptr);
  if (with_optimizer) last_checkpoint_ = req_.out_dir + "/" + name;
  times_.checkpoint += seconds_since(t);
}

nlohmann::json Run::execute() {
  // The telemetry window opens before the run's clock starts and closes after it stops (in
  // report), so telemetry's total never reads shorter than timing.total_s.
  telemetry_.begin("total");
  const auto start = Clock::now();
  setup();
  const int64_t eval_every = cfg_.train.eval_every > 0 ? cfg_.train.eval_every : steps_per_epoch_;
  std::string stopped = cfg_.train.max_steps > 0 ? "max_steps" : "epochs";
  const auto train_start = Clock::now();
  const int64_t first_step = state_.step + 1;
  // The device first finishes the steps it was given, so that their energy stays in "train".
  auto pause_training = [&] {
    backend_->synchronize();
    telemetry_.pause_training();
  };
  telemetry_.resume_training();
  for (int64_t step = first_step; step <= total_steps_; ++step) {
    const auto step_start = Clock::now();
    train_step(step);
    if (fault_) break;
    if (step == first_step) {  // plans, autotuning and scratch growth land here
      backend_->synchronize();
      times_.first_step = seconds_since(step_start);
      for (std::string& n : backend_->take_notices()) {
        progress_->message("note: " + n);
        notices_.push_back(std::move(n));
      }
    }
    if (data_exhausted_) break;
    const bool eval_now = step % eval_every == 0 || step == total_steps_;
    const bool save_now =
        cfg_.train.checkpoint_every > 0 && step % cfg_.train.checkpoint_every == 0;
    if (eval_now || save_now) {
      pause_training();
      check_weights(step);
      if (fault_) break;
      if (eval_now) evaluate_and_track(step);
      if (save_now) save(fmt::format("checkpoint-step{}.safetensors", step), true);
      telemetry_.resume_training();
    }
    if (cfg_.train.early_stop_patience > 0 &&
        state_.evals_since_best >= cfg_.train.early_stop_patience) {
      stopped = "early_stop";
      break;
    }
    if (cfg_.train.time_limit > 0 &&
        any_rank(seconds_since(train_start) > cfg_.train.time_limit, step)) {
      stopped = "time_limit";
      break;
    }
    if (const int sig = any_rank_signal(step)) {
      stopped = "interrupted";
      stop_detail_["signal"] = signal_name(sig);
      break;
    }
  }
  pause_training();
  progress_->finish();
  check_weights(state_.step);
  if (fault_) stop_on_fault(seconds_since(start));
  save("checkpoint.safetensors", true);
  if (stopped == "interrupted") {
    // The user wants the process back: the checkpoint is written, the final evaluation skipped.
    return report(stopped, EvalResult{}, std::nullopt, seconds_since(start));
  }

  // Final figures: validation with the final weights; test with the best-on-validation ones.
  const auto t = Clock::now();
  telemetry_.begin("eval");
  const EvalResult valid = data_.valid.size() > 0
                               ? evaluate(model(), data_, data_.valid, cfg_.train.batch_size,
                                          cfg_.data.max_len, 0, comm_.get())
                               : EvalResult{};
  std::optional<EvalResult> test;
  if (data_.test.size() > 0) {
    if (!best_params_.empty()) {
      backend_->upload(model().params().params_flat(), best_params_.data());
      model().params().sync_compute();
    }
    test = evaluate(model(), data_, data_.test, cfg_.train.batch_size, cfg_.data.max_len, 0,
                    comm_.get());
  }
  telemetry_.end("eval");
  times_.eval += seconds_since(t);
  if (comm_) {
    std::array<double, 1> tokens = {static_cast<double>(tokens_trained_)};
    comm_->sum_host(tokens);
    tokens_trained_ = static_cast<int64_t>(tokens[0]);
  }
  if (leader()) {
    write_run_plots(req_.out_dir, curve_);
    if (sparsity_) sparsity_->write_run_file(req_.out_dir + "/sparsity.json", cfg_.model.prune);
  }
  return report(stopped, valid, test, seconds_since(start));
}

// A numeric fault: run.json records the diagnosis (no checkpoint is written: the last good one
// stays), then NumericFault carries it to the CLI.
void Run::stop_on_fault(double total_s) {
  const std::string diagnosis = diagnose(*fault_, model().params());
  stop_detail_["diagnosis"] = diagnosis;
  report("non_finite", EvalResult{}, std::nullopt, total_s);
  throw NumericFault(diagnosis);
}

nlohmann::json Run::telemetry_report() {
  telemetry_.end("total");
  RunCosting c{req_.price_per_gpu_hour, tokens_trained_, {}};
  if (req_.flops_per_token) c.flops_per_token = [this] { return req_.flops_per_token(cfg_); };
  return telemetry_.report(cfg_, c);
}

nlohmann::json Run::report(const std::string& stopped, const EvalResult& valid,
                           const std::optional<EvalResult>& test, double total_s) {
  nlohmann::json results = {{"steps", state_.step},
                            {"tokens_trained", tokens_trained_},
                            {"epochs_completed", static_cast<double>(state_.step) /
                                                     static_cast<double>(steps_per_epoch_)},
                            {"stopped_by", stopped},
                            {"valid", valid.to_json()}};
  results.update(stop_detail_);
  if (test) results["test"] = test->to_json();
  if (std::isfinite(state_.best_score)) results["best_valid_score"] = state_.best_score;
  nlohmann::json timing = times_.to_json(total_s);
  const int64_t steps_here = state_.step - (resume_ ? resume_->info().state.step : 0);
  timing["step_ms"] = steps_here > 0 ? 1e3 * times_.train / static_cast<double>(steps_here) : 0.0;
  nlohmann::json run = {{"hwt_version", HWT_VERSION},
                        {"config", to_json(cfg_)},
                        {"hardware", {{"host", host_info()}, {"backend", backend_->name()}}},
                        {"data",
                         {{"source", data_.source},
                          {"train_examples", data_.train.size()},
                          {"valid_examples", data_.valid.size()},
                          {"test_examples", data_.test.size()},
                          {"vocab_size", data_.tokenizer->vocab_size()}}},
                        {"model",
                         {{"parameters", model().params().parameters()},
                          {"activation_bytes", model().activation_bytes()}}},
                        {"results", results},
                        {"timing", timing},
                        {"telemetry", telemetry_report()},
                        {"notices", notices_},
                        {"resumed_from", req_.resume},
                        {"init", req_.init}};
  if (comm_)
    run["data_parallel"] = {
        {"ranks", comm_->size()},
        {"communicator", comm_->name()},
        {"global_batch", cfg_.train.batch_size * comm_->size()},
        {"zero", cfg_.train.zero},
        {"optimizer_state_bytes_per_rank", training_->optimizer().state_bytes()},
        {"optimizer_state_bytes_unsharded", training_->optimizer().state().size() *
                                                static_cast<size_t>(model().params().count()) * 4}};
  if (leader()) write_file_atomic(req_.out_dir + "/run.json", run.dump(2) + "\n");
  return run;
}

}  // namespace

nlohmann::json train(const TrainRequest& request) {
  return Run(request).execute();
}

}  // namespace hwt
