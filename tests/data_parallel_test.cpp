// Data parallel on the CPU through MPI (two ranks under mpirun): the same training as one rank
// with the global batch, gradient accumulation, resume across rank counts, and what happens
// when a rank dies or hangs. Also the pieces: gradient buckets, world detection.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "backend/cpu/cpu_backend.h"
#include "cli_util.h"
#include "core/safetensors.h"
#include "cuda_test_util.h"
#include "dist/world.h"
#include "train/gradient_sync.h"

namespace hwt {
namespace {

using test::TempDir;

// Two ranks on a machine without a scheduler; runs as root in CI containers. Under the
// sanitizer build (scripts/sanitize.sh) the ranks run without LeakSanitizer: OpenMPI's plugins
// hold memory at exit that it reports from frames without a module, which no suppression can
// name. ASan's other checks and UBSan stay on; the option means nothing to other builds.
const std::string kMpirun =
    "mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader "
    "--mca btl_vader_single_copy_mechanism none -x ASAN_OPTIONS=detect_leaks=0 ";

// A tiny classifier on dir/train.tsv, as --set options; `batch` examples per rank.
std::string tiny_run(const TempDir& dir, int batch, int steps, const std::string& out) {
  return fmt::format(
      "train --quiet --out {} --set data.format=tsv --set data.path={} --set data.min_freq=1 "
      "--set data.max_len=16 --set model.hidden=32 --set model.heads=4 --set model.ffn=64 "
      "--set model.layers=2 --set model.max_seq=16 --set train.batch_size={} "
      "--set train.threads=1 --set train.max_steps={} --set train.log_every=1 "
      "--set train.eval_every=0 --set train.device=cpu --set model.dropout=0 --set "
      "model.attn_dropout=0 "
      "--set train.telemetry=false",
      out, dir / "train.tsv", batch, steps);
}

test::CliResult mpi_run(int ranks, const std::string& args, const TempDir& dir) {
  return test::run_hwt_with(kMpirun + "-np " + std::to_string(ranks) + " ", args, dir);
}

// Largest absolute difference between the f32 tensors of two checkpoints (parameters and, when
// present in both, optimizer state).
double max_difference(const std::string& a, const std::string& b) {
  const SafetensorsFile fa = SafetensorsFile::open(a), fb = SafetensorsFile::open(b);
  EXPECT_EQ(fa.names(), fb.names());
  double worst = 0;
  for (const std::string& n : fa.names()) {
    const auto va = fa.get(n), vb = fb.get(n);
    if (va.dtype != DType::F32) continue;
    EXPECT_EQ(va.bytes, vb.bytes) << n;
    const auto* x = static_cast<const float*>(va.data);
    const auto* y = static_cast<const float*>(vb.data);
    for (size_t i = 0; i < va.bytes / 4; ++i)
      worst = std::max(worst, static_cast<double>(std::fabs(x[i] - y[i])));
  }
  return worst;
}

std::vector<double> losses(const std::string& metrics) {
  std::vector<double> out;
  std::ifstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.contains("loss") && !j.contains("split")) out.push_back(j["loss"].get<double>());
  }
  return out;
}

void expect_same_training(const std::string& a, const std::string& b, double tolerance) {
  const std::vector<double> la = losses(a + "/metrics.jsonl"), lb = losses(b + "/metrics.jsonl");
  ASSERT_EQ(la.size(), lb.size());
  ASSERT_FALSE(la.empty());
  for (size_t i = 0; i < la.size(); ++i)
    EXPECT_NEAR(la[i], lb[i], tolerance * std::max(1.0, std::fabs(la[i]))) << "step " << i + 1;
  EXPECT_LT(max_difference(a + "/checkpoint.safetensors", b + "/checkpoint.safetensors"),
            tolerance);
}

class DataParallel : public ::testing::Test {
 protected:
  DataParallel() : dir("data_parallel") {
    dir.write("train.tsv", test::tiny_sentiment_tsv(300, 11));
  }
  TempDir dir;
};

// The two ranks' gradients are summed in another order than one rank's batch reduction, so
// results agree to rounding, not bitwise: after 8 AdamW steps within 1e-5.
TEST_F(DataParallel, TwoRanksMatchOneRankWithTwiceTheBatch) {
  const auto one = test::run_hwt(tiny_run(dir, 8, 8, dir / "one"), dir);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto two = mpi_run(2, tiny_run(dir, 4, 8, dir / "two"), dir);
  ASSERT_EQ(two.exit_code, 0) << two.err;
  expect_same_training(dir / "one", dir / "two", 1e-5);
  const auto run = nlohmann::json::parse(test::slurp(dir / "two/run.json"));
  EXPECT_EQ(run["data_parallel"]["ranks"], 2);
  EXPECT_EQ(run["data_parallel"]["global_batch"], 8);
  // The evaluation is split between the ranks and summed: it covers every example once.
  EXPECT_EQ(
      run["results"]["valid"]["examples"],
      nlohmann::json::parse(test::slurp(dir / "one/run.json"))["results"]["valid"]["examples"]);
}

TEST_F(DataParallel, GradientAccumulationSumsOnlyTheLastMicroBatch) {
  const auto one =
      test::run_hwt(tiny_run(dir, 4, 6, dir / "one") + " --set train.grad_accum=2", dir);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto two = mpi_run(2, tiny_run(dir, 2, 6, dir / "two") + " --set train.grad_accum=2", dir);
  ASSERT_EQ(two.exit_code, 0) << two.err;
  expect_same_training(dir / "one", dir / "two", 1e-5);
}

TEST_F(DataParallel, SmallBucketsGiveTheSameResult) {
  const auto one = test::run_hwt(tiny_run(dir, 8, 4, dir / "one"), dir);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto two =
      mpi_run(2, tiny_run(dir, 4, 4, dir / "two") + " --set train.bucket_mb=0.01", dir);
  ASSERT_EQ(two.exit_code, 0) << two.err;
  expect_same_training(dir / "one", dir / "two", 1e-5);
}

TEST_F(DataParallel, ResumesWithAnotherNumberOfRanks) {
  const std::string every4 = " --set train.checkpoint_every=4";
  const auto straight = test::run_hwt(tiny_run(dir, 8, 8, dir / "straight") + every4, dir);
  ASSERT_EQ(straight.exit_code, 0) << straight.err;
  // Two ranks to step 4, then one rank on; and one rank to step 4, then two ranks on.
  ASSERT_EQ(mpi_run(2, tiny_run(dir, 4, 4, dir / "a") + every4, dir).exit_code, 0);
  const auto a = test::run_hwt(
      tiny_run(dir, 8, 8, dir / "a2") + " --resume " + dir / "a/checkpoint-step4.safetensors", dir);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto b = mpi_run(2,
                         tiny_run(dir, 4, 8, dir / "b2") + " --resume " +
                             dir / "straight/checkpoint-step4.safetensors",
                         dir);
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_LT(
      max_difference(dir / "straight/checkpoint.safetensors", dir / "a2/checkpoint.safetensors"),
      1e-5);
  EXPECT_LT(
      max_difference(dir / "straight/checkpoint.safetensors", dir / "b2/checkpoint.safetensors"),
      1e-5);
}

// A character LM in fp8 whose linear layers (hidden 32, FFN 64, vocabulary padded to 128) and
// batches (`batch` x 32 rows) are multiples of 16, so each runs in fp8.
std::string fp8_lm_run(int batch, const std::string& out) {
  return fmt::format(
      "train --quiet --out {} --set data.format=text --set data.path={} --set data.tokenizer=char "
      "--set data.max_len=32 --set data.test_fraction=0 --set model.max_seq=32 --set model.head=lm "
      "--set model.causal=true --set model.hidden=32 --set model.heads=4 --set model.ffn=64 "
      "--set model.layers=2 --set model.dropout=0 --set model.attn_dropout=0 "
      "--set train.batch_size={} --set train.threads=1 --set train.max_steps=8 "
      "--set train.log_every=1 --set train.eval_every=0 --set train.device=cpu "
      "--set train.telemetry=false --set train.precision=fp8 --set optim.lr=3e-3",
      out, HWT_SOURCE_DIR "/tests/fixtures/golden/lm.txt", batch);
}

// fp8 under data parallel: the ranks scale each tensor from the largest amax any of them saw,
// which is the whole batch's: every scale is the one rank's with twice the batch, up to a power
// of two (the output gradients': the loss is averaged over another count), so both quantise the
// same values alike and train alike. Ranks scaling from their own halves would not.
TEST_F(DataParallel, Fp8RanksScaleFromTheLargestAmaxOfAll) {
  const auto one = test::run_hwt(fp8_lm_run(8, dir / "one"), dir);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto two = mpi_run(2, fp8_lm_run(4, dir / "two"), dir);
  ASSERT_EQ(two.exit_code, 0) << two.err;
  const SafetensorsFile a = SafetensorsFile::open(dir / "one/checkpoint.safetensors"),
                        b = SafetensorsFile::open(dir / "two/checkpoint.safetensors");
  const auto sa = a.get("fp8.scaling"), sb = b.get("fp8.scaling");
  ASSERT_EQ(sa.bytes, sb.bytes);
  const auto* x = static_cast<const float*>(sa.data);
  const auto* y = static_cast<const float*>(sb.data);
  int moved = 0;
  for (size_t i = 0; i < sa.bytes / 4; ++i) {
    if (x[i] == 0 || y[i] == 0) {
      EXPECT_EQ(x[i], y[i]) << "element " << i;
      continue;
    }
    moved += x[i] != 1.0f;
    // The activations differ by float rounding between the two runs: so do their amaxes.
    const double octaves = std::log2(static_cast<double>(x[i]) / y[i]);
    EXPECT_NEAR(octaves, std::round(octaves), 1e-4)
        << "element " << i << ": " << x[i] << " vs " << y[i];
  }
  EXPECT_GT(moved, 0) << "the scales moved from 1: the layers ran in fp8";
  // The same quantised training: the losses agree to the fp8 rounding of a value here and there.
  const std::vector<double> la = losses(dir / "one/metrics.jsonl"),
                            lb = losses(dir / "two/metrics.jsonl");
  ASSERT_EQ(la.size(), lb.size());
  for (size_t i = 0; i < la.size(); ++i) EXPECT_NEAR(la[i], lb[i], 1e-3 * la[i]) << "step " << i;
}

// ZeRO-1: each rank updates its shard of the parameters; the result is the same training, and
// its checkpoints (gathered) resume on one rank, and the reverse.
TEST_F(DataParallel, ZeroOneMatchesAndResumesAcrossRankCounts) {
  const std::string every4 = " --set train.checkpoint_every=4", zero = " --set train.zero=1";
  const auto one = test::run_hwt(tiny_run(dir, 8, 8, dir / "one") + every4, dir);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto two = mpi_run(2, tiny_run(dir, 4, 8, dir / "two") + every4 + zero, dir);
  ASSERT_EQ(two.exit_code, 0) << two.err;
  expect_same_training(dir / "one", dir / "two", 1e-5);
  const auto run = nlohmann::json::parse(test::slurp(dir / "two/run.json"));
  EXPECT_EQ(run["data_parallel"]["zero"], 1);
  // AdamW's two moments, each over half the (64-aligned) parameters.
  EXPECT_LT(run["data_parallel"]["optimizer_state_bytes_per_rank"].get<double>(),
            0.51 * run["data_parallel"]["optimizer_state_bytes_unsharded"].get<double>());
  const auto a = test::run_hwt(
      tiny_run(dir, 8, 8, dir / "a") + " --resume " + dir / "two/checkpoint-step4.safetensors",
      dir);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto b = mpi_run(2,
                         tiny_run(dir, 4, 8, dir / "b") + zero + " --resume " +
                             dir / "one/checkpoint-step4.safetensors",
                         dir);
  ASSERT_EQ(b.exit_code, 0) << b.err;
  for (const char* resumed : {"a", "b"})
    EXPECT_LT(max_difference(dir / "one/checkpoint.safetensors",
                             dir / (std::string(resumed) + "/checkpoint.safetensors")),
              1e-5)
        << resumed;
}

TEST_F(DataParallel, RanksWithDifferentConfigsStopBeforeTraining) {
  const std::string a = tiny_run(dir, 4, 2, dir / "x");
  const auto r = test::run_hwt_with(
      kMpirun + "-np 1 ",
      a + " --set optim.lr=0.001 : -np 1 " + HWT_BINARY + " " + a + " --set optim.lr=0.002", dir);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("the 2 ranks were given different configs"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "x/checkpoint.safetensors"));
}

struct StoppedJob {
  int exit_code = -1;
  double seconds = 0;  // from the signal to the job's end
  std::string err;
};

// Starts two ranks with a 3 s collective timeout, sends `signal` to the newest rank (or to both)
// once they train, and waits (up to 60 s) for the job to end.
StoppedJob signal_ranks(const TempDir& dir, int signal, bool both = false) {
  const std::string args = tiny_run(dir, 4, 100000, dir / "job") +
                           " --set train.collective_timeout=3 --set train.time_limit=600";
  const std::string launch = "(" + kMpirun + "-np 2 " + HWT_BINARY + " " + args + " >" +
                             dir / "out" + " 2>" + dir / "err" + "; echo $? >" + dir / "rc" + ") &";
  StoppedJob job;
  EXPECT_EQ(std::system(launch.c_str()), 0);
  const auto start = std::chrono::steady_clock::now();
  std::vector<pid_t> ranks;
  while (ranks.size() < (both ? 2u : 1u) &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    if (!std::filesystem::exists(dir / "job/metrics.jsonl")) continue;
    // The ranks (the anchor leaves out mpirun and the shells); -n: the newest only.
    const std::string cmd = "pgrep -f " + std::string(both ? "" : "-n ") + "-- '^" +
                            std::string(HWT_BINARY) + " train .*--out " + dir / "job" + "' >" +
                            dir / "pid";
    ranks.clear();
    if (std::system(cmd.c_str()) != 0) continue;
    std::istringstream pids(test::slurp(dir / "pid"));
    for (pid_t p; pids >> p;) ranks.push_back(p);
  }
  if (ranks.size() < (both ? 2u : 1u)) {
    ADD_FAILURE() << "the ranks never started training";
    return job;
  }
  for (pid_t rank : ranks) EXPECT_EQ(kill(rank, signal), 0);
  const auto sent = std::chrono::steady_clock::now();
  while (!std::filesystem::exists(dir / "rc") &&
         std::chrono::steady_clock::now() - sent < std::chrono::seconds(60))
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  for (pid_t rank : ranks) kill(rank, SIGKILL);
  job.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // rc is written, then closed
  if (std::filesystem::exists(dir / "rc")) job.exit_code = std::stoi(test::slurp(dir / "rc"));
  job.err = test::slurp(dir / "err");
  return job;
}

// SIGTERM to every rank, as a scheduler cancelling the job sends it: the ranks stop together at
// the next logged step, write one checkpoint and run.json marked interrupted, and exit 143; the
// job resumes from there.
TEST_F(DataParallel, SigtermToEveryRankCheckpointsAndExits143) {
  const StoppedJob job = signal_ranks(dir, SIGTERM, true);
  ASSERT_EQ(job.exit_code, 143) << job.err;
  const nlohmann::json run = nlohmann::json::parse(test::slurp(dir / "job/run.json"));
  EXPECT_EQ(run["results"]["stopped_by"], "interrupted");
  EXPECT_EQ(run["results"]["signal"], "SIGTERM");
  const int64_t steps = run["results"]["steps"].get<int64_t>();
  const auto r = mpi_run(2,
                         tiny_run(dir, 4, static_cast<int>(steps) + 2, dir / "job") + " --resume " +
                             dir / "job/checkpoint.safetensors",
                         dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// SIGINT to one rank only: the other stops with it at the next logged step and both exit 130.
TEST_F(DataParallel, SigintToOneRankStopsBothWithItsExitCode) {
  const StoppedJob job = signal_ranks(dir, SIGINT);
  ASSERT_EQ(job.exit_code, 130) << job.err;
  const nlohmann::json run = nlohmann::json::parse(test::slurp(dir / "job/run.json"));
  EXPECT_EQ(run["results"]["signal"], "SIGINT");
  EXPECT_TRUE(std::filesystem::exists(dir / "job/checkpoint.safetensors"));
}

// A rank that stops answering (SIGSTOP: alive but hung): the other's watchdog ends it once
// train.collective_timeout has passed, naming the wait.
TEST_F(DataParallel, AHungRankStopsTheOtherWithinTheTimeout) {
  const StoppedJob job = signal_ranks(dir, SIGSTOP);
  EXPECT_NE(job.exit_code, 0);
  EXPECT_NE(job.exit_code, -1) << "the job did not stop";
  EXPECT_LT(job.seconds, 30.0);
  EXPECT_NE(job.err.find("waited 3 s for the other ranks"), std::string::npos) << job.err;
}

// A rank that dies: the launcher (mpirun) ends the job with an error.
TEST_F(DataParallel, ADeadRankEndsTheJobWithAnError) {
  const StoppedJob job = signal_ranks(dir, SIGKILL);
  EXPECT_NE(job.exit_code, 0);
  EXPECT_NE(job.exit_code, -1) << "the job did not stop";
  EXPECT_LT(job.seconds, 30.0);
}

// One NCCL rank (hwt train --gpus 1) trains as a run without data parallel does, bit for bit:
// the one-rank all-reduce, the buckets, the communication stream and its events change
// nothing, and neither does ZeRO-1's reduce-scatter, shard update and all-gather.
TEST(DataParallelGpu, OneNcclRankMatchesTrainingWithoutDataParallelBitwise) {
  HWT_REQUIRE_GPU();
  TempDir dir("dp_gpu");
  dir.write("train.tsv", test::tiny_sentiment_tsv(300, 11));
  const std::string gpu = " --set train.device=cuda --set train.precision=bf16";
  const auto plain = test::run_hwt(tiny_run(dir, 8, 8, dir / "plain") + gpu, dir);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  for (const std::string& variant :
       {std::string(" --set train.bucket_mb=0.01"), std::string(" --set train.zero=1")}) {
    const auto nccl =
        test::run_hwt(tiny_run(dir, 8, 8, dir / "nccl") + gpu + variant + " --gpus 1", dir);
    ASSERT_EQ(nccl.exit_code, 0) << nccl.err;
    const auto run = nlohmann::json::parse(test::slurp(dir / "nccl/run.json"));
    EXPECT_EQ(run["data_parallel"]["communicator"].get<std::string>().rfind("nccl", 0), 0u);
    EXPECT_EQ(losses(dir / "plain/metrics.jsonl"), losses(dir / "nccl/metrics.jsonl")) << variant;
    EXPECT_EQ(
        max_difference(dir / "plain/checkpoint.safetensors", dir / "nccl/checkpoint.safetensors"),
        0.0)
        << variant;
    std::filesystem::remove_all(dir / "nccl");
  }
  // bf16 gradient sums round the gradients: close, not equal.
  const auto bf16 = test::run_hwt(
      tiny_run(dir, 8, 8, dir / "bf16") + gpu + " --set train.grad_reduce=bf16 --gpus 1", dir);
  ASSERT_EQ(bf16.exit_code, 0) << bf16.err;
  const auto a = losses(dir / "plain/metrics.jsonl"), b = losses(dir / "bf16/metrics.jsonl");
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 2e-2) << "step " << i + 1;
}

TEST(GradientBuckets, CoverTheBufferOnceInTheOrderTheBackwardPassFinishes) {
  ModelConfig m;
  m.vocab_size = 50;
  m.hidden = 32;
  m.heads = 4;
  m.ffn = 64;
  m.layers = 3;
  m.max_seq = 16;
  m.num_labels = 2;
  auto be = make_cpu_backend(1);
  Model model(m, *be);
  const int64_t elements = 1000;
  const auto buckets = gradient_buckets(model, elements);
  std::vector<int> covered(static_cast<size_t>(model.params().count()), 0);
  int64_t last_stage = 0;
  for (const GradientBucket& b : buckets) {
    EXPECT_LE(b.count, elements);
    EXPECT_GE(b.ready_stage, last_stage) << "buckets out of ready order";
    last_stage = b.ready_stage;
    // No bucket straddles the decayed and undecayed parts.
    EXPECT_TRUE(b.offset + b.count <= model.params().n_decay() ||
                b.offset >= model.params().n_decay());
    for (int64_t i = b.offset; i < b.offset + b.count; ++i) ++covered[static_cast<size_t>(i)];
  }
  for (int c : covered) ASSERT_EQ(c, 1);
  // A bucket waits for every parameter it holds: the last block's weights finish at stage 1, the
  // embeddings last.
  const ParamStore& ps = model.params();
  for (size_t i = 0; i < ps.infos().size(); ++i) {
    const ParamInfo& p = ps.infos()[i];
    const int64_t want = p.name.rfind("embed.", 0) == 0      ? m.layers + 1
                         : p.name.rfind("layers.2.", 0) == 0 ? 1
                         : p.name.rfind("layers.0.", 0) == 0 ? 3
                                                             : model.grad_stage(i);
    EXPECT_EQ(model.grad_stage(i), want) << p.name;
    for (const GradientBucket& b : buckets) {
      if (b.offset < p.offset + p.shape.numel() && b.offset + b.count > p.offset) {
        EXPECT_GE(b.ready_stage, want) << p.name;
      }
    }
  }
}

TEST(World, ReadsHwtsOpenMpisAndSlurmsVariables) {
  auto clear = [] {
    for (const char* v : {kRankVar, kWorldSizeVar, "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK",
                          "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
                          "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"})
      unsetenv(v);
  };
  clear();
  EXPECT_FALSE(detect_world().distributed());
  setenv(kRankVar, "1", 1);
  setenv(kWorldSizeVar, "2", 1);
  World w = detect_world();
  EXPECT_EQ(w.launcher, Launcher::Hwt);
  EXPECT_EQ(w.rank, 1);
  EXPECT_EQ(w.size, 2);
  EXPECT_FALSE(w.leader());
  clear();
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
  w = detect_world();
  EXPECT_EQ(w.launcher, Launcher::Mpi);
  EXPECT_EQ(w.rank, 3);
  EXPECT_EQ(w.local_rank, 1);
  clear();
  setenv("SLURM_PROCID", "0", 1);
  setenv("SLURM_NTASKS", "1", 1);  // a batch script's own process: a single run
  EXPECT_FALSE(detect_world().distributed());
  setenv("SLURM_NTASKS", "8", 1);
  setenv("SLURM_PROCID", "5", 1);
  EXPECT_EQ(detect_world().rank, 5);
  setenv("SLURM_PROCID", "9", 1);
  EXPECT_THROW(detect_world(), InputError);
  clear();
}

TEST(DataParallelErrors, GpusWithoutGpusAndCpuRanksWithoutMpiAreClearErrors) {
  TempDir dir("dp_errors");
  // More GPUs than any machine has: the error names the count visible (0 without a GPU).
  auto r = test::run_hwt("train --gpus 64 --out " + dir / "x", dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--gpus 64: only "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" GPU(s) visible"), std::string::npos) << r.err;
  r = test::run_hwt("train --set train.zero=2", dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("train.zero=2 must be 0 or 1"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace hwt
