// hwt estimate --gpus N --link: ring collectives, gradient buckets, the overlap of bucketed
// all-reduces with the backward pass, ZeRO-1, the link figures and the command's bad input.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "analysis/data_parallel.h"
#include "analysis/gemm_calibration.h"
#include "cli/estimate_data_parallel.h"
#include "cli_util.h"
#include "core/error.h"
#include "workload/memory_plan.h"

namespace hwt {
namespace {

LinkSpec link(double bus_gbs, double latency_us) {
  LinkSpec l;
  l.line_gbs = bus_gbs;
  l.bus_gbs = bus_gbs;
  l.latency_us = latency_us;
  return l;
}

// Gradients of the given elements, ready at the given times (ms), named g0, g1, ...
std::vector<GradientReady> grads(const std::vector<std::pair<int64_t, double>>& sizes_ready) {
  std::vector<GradientReady> out;
  for (const auto& [elements, ready_ms] : sizes_ready)
    out.push_back({fmt::format("g{}", out.size()), elements, ready_ms * 1e-3});
  return out;
}

TEST(DpEstimateRing, AllReduceIsTwiceReduceScatterPlusStepLatency) {
  // 1 GB over 8 GPUs at 100 GB/s: 2·7/8 · 10 ms = 17.5 ms plus 14 ring steps of 5 µs.
  EXPECT_NEAR(ring_all_reduce_seconds(1e9, 8, link(100, 5)), 17.5e-3 + 14 * 5e-6, 1e-15);
  EXPECT_NEAR(ring_reduce_scatter_seconds(1e9, 8, link(100, 5)), 8.75e-3 + 7 * 5e-6, 1e-15);
  EXPECT_NEAR(ring_all_gather_seconds(1e9, 8, link(100, 5)), 8.75e-3 + 7 * 5e-6, 1e-15);
  EXPECT_NEAR(ring_all_reduce_seconds(1e9, 2, link(100, 0)), 10e-3, 1e-15);  // 2·1/2
  EXPECT_EQ(ring_all_reduce_seconds(1e9, 1, link(100, 5)), 0.0);
  EXPECT_EQ(ring_reduce_scatter_seconds(1e9, 1, link(100, 5)), 0.0);
}

TEST(DpEstimateBuckets, PacksInReadyOrderUpToTheCapAndIsolatesLargeGradients) {
  // Sizes 4 4 3 25 2 2 bytes, cap 10: [4 4] [3] [25] [2 2].
  const auto b = form_buckets(grads({{4, 1}, {4, 2}, {3, 3}, {25, 4}, {2, 5}, {2, 6}}), 1, 10);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0].params, (std::vector<std::string>{"g0", "g1"}));
  EXPECT_EQ(b[0].bytes, 8);
  EXPECT_DOUBLE_EQ(b[0].ready_s, 2e-3);  // its last gradient
  EXPECT_EQ(b[1].params, std::vector<std::string>{"g2"});
  EXPECT_EQ(b[2].params, std::vector<std::string>{"g3"});  // larger than a bucket: alone
  EXPECT_EQ(b[2].bytes, 25);
  EXPECT_EQ(b[3].params, (std::vector<std::string>{"g4", "g5"}));
  EXPECT_DOUBLE_EQ(b[3].ready_s, 6e-3);
  // Half a byte an element: 2 2 1.5 12.5 1 1 bytes -> [2 2 1.5] [12.5] [1 1].
  const auto h = form_buckets(grads({{4, 1}, {4, 2}, {3, 3}, {25, 4}, {2, 5}, {2, 6}}), 0.5, 10);
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].bytes, 5.5);
  EXPECT_EQ(h[1].bytes, 12.5);
  EXPECT_EQ(h[2].bytes, 2);
}

// A step whose forward and backward take `backward_ms` and whose optimizer takes 1 ms (0.9 ms of
// work, 0.1 ms of gaps); a gradient of 100 MB (25 M fp32 elements) ready at each time given.
StepTimeline synthetic(double backward_ms, const std::vector<double>& ready_ms) {
  StepTimeline t;
  t.backward_end_s = backward_ms * 1e-3;
  t.optimizer_sharded_s = 0.9e-3;
  t.optimizer_fixed_s = 0.1e-3;
  for (double r : ready_ms) t.gradients.push_back({"w", 25'000'000, r * 1e-3});
  t.parameters = 25e6 * static_cast<double>(ready_ms.size());
  return t;
}

TEST(DpEstimateOverlap, FastLinkHidesEveryBucketBehindTheBackwardPass) {
  DataParallelOptions o;
  o.gpus = 2;
  o.link = link(100, 0);  // 100 MB over 2 GPUs: 2·1/2 · 1e8 / 1e11 = 1 ms a bucket
  o.bucket_bytes = 1e8;   // one gradient a bucket
  const DataParallelEstimate e = estimate_ddp(synthetic(10, {4, 7, 9}), o);
  // Buckets run 4-5, 7-8 and 9-10 ms: the last ends with the backward pass.
  EXPECT_EQ(e.buckets, 3u);
  EXPECT_NEAR(e.comm_s, 3e-3, 1e-15);
  EXPECT_NEAR(e.exposed_s, 0, 1e-15);
  EXPECT_NEAR(e.step_s, 11e-3, 1e-15);
  EXPECT_NEAR(e.scaling, 1.0, 1e-12);
}

TEST(DpEstimateOverlap, SlowLinkQueuesBucketsAndExposesThem) {
  DataParallelOptions o;
  o.gpus = 2;
  o.link = link(10, 0);  // 10 ms a bucket
  o.bucket_bytes = 1e8;
  // Tiny compute: the buckets are ready at 0.5, 0.8 and 1 ms and queue on the link:
  // 0.5-10.5, 10.5-20.5, 20.5-30.5 ms; the backward pass ended at 1 ms.
  const DataParallelEstimate e = estimate_ddp(synthetic(1, {0.5, 0.8, 1}), o);
  EXPECT_NEAR(e.comm_s, 30e-3, 1e-15);
  EXPECT_NEAR(e.exposed_s, 29.5e-3, 1e-15);
  EXPECT_NEAR(e.step_s, 31.5e-3, 1e-15);  // + the 1 ms optimizer
  EXPECT_NEAR(e.scaling, 2e-3 / 31.5e-3, 1e-12);
  // Four GPUs with 10 µs ring steps: each bucket 2·3/4 · 10 ms + 6 · 10 µs = 15.06 ms.
  o.gpus = 4;
  o.link = link(10, 10);
  const DataParallelEstimate f = estimate_ddp(synthetic(1, {0.5, 0.8, 1}), o);
  EXPECT_NEAR(f.comm_s, 3 * 15.06e-3, 1e-14);
  EXPECT_NEAR(f.step_s, 0.5e-3 + 3 * 15.06e-3 + 1e-3, 1e-14);
}

TEST(DpEstimateZero, ReduceScatterShardedOptimizerAllGather) {
  DataParallelOptions o;
  o.gpus = 4;
  o.link = link(100, 0);
  o.optimizer_state_bytes = 6e8;
  // 75 M fp32 gradients, 300 MB: reduce-scatter 3/4 · 3 ms, all-gather of fp32 parameters the
  // same; the optimizer's 0.9 ms of work on a quarter, its 0.1 ms of gaps whole.
  const DataParallelEstimate e = estimate_zero1(synthetic(10, {4, 7, 9}), o);
  EXPECT_TRUE(e.zero);
  EXPECT_NEAR(e.comm_s, 4.5e-3, 1e-15);
  EXPECT_NEAR(e.exposed_s, 4.5e-3, 1e-15);
  EXPECT_NEAR(e.optimizer_s, 0.325e-3, 1e-15);
  EXPECT_NEAR(e.step_s, 10e-3 + 4.5e-3 + 0.325e-3, 1e-15);
  EXPECT_DOUBLE_EQ(e.optimizer_state_saved_bytes, 4.5e8);  // 3/4 of it
  o.grad_bytes = 2;  // bf16 gradients: the reduce-scatter halves
  EXPECT_NEAR(estimate_zero1(synthetic(10, {4, 7, 9}), o).comm_s, 0.75 * 1.5e-3 + 2.25e-3, 1e-15);
  o.gpus = 1;
  const DataParallelEstimate one = estimate_zero1(synthetic(10, {4, 7, 9}), o);
  EXPECT_EQ(one.comm_s, 0);
  EXPECT_EQ(one.optimizer_state_saved_bytes, 0);
  EXPECT_NEAR(one.step_s, 11e-3, 1e-15);
}

struct Traced {
  StepSpec spec;
  Workload w;
  StepEstimate e;
};

Traced gpt2() {
  Traced t{step_spec(load_run_config("gpt2_124m", {})), {}, {}};
  t.w = trace_step(t.spec);
  static const GpuCatalog catalog = load_gpu_catalog();  // the model keeps a reference
  const GpuSpec& h200 = catalog.find("H200");
  t.e = estimate_step(t.w, GemmModel(h200, Precision::Bf16,
                                     resolve_constants(h200, Precision::Bf16, "").constants));
  return t;
}

TEST(DpEstimateTimeline, OneGpuIsTheSingleGpuEstimate) {
  const Traced g = gpt2();
  const StepTimeline t = step_timeline(g.w, g.e);
  EXPECT_NEAR(t.single_s(), g.e.seconds(), 1e-12 * g.e.seconds());
  DataParallelOptions o;
  o.link = load_gpu_catalog().find("H200").link(LinkKind::NvLink);
  for (const DataParallelEstimate& e : {estimate_ddp(t, o), estimate_zero1(t, o)}) {
    EXPECT_NEAR(e.step_s, g.e.seconds(), 1e-12 * g.e.seconds());
    EXPECT_EQ(e.comm_s, 0);
    EXPECT_EQ(e.exposed_s, 0);
    EXPECT_DOUBLE_EQ(e.scaling, 1.0);
  }
}

TEST(DpEstimateTimeline, GradientsAreReadyInReverseLayerOrder) {
  const Traced g = gpt2();
  const StepTimeline t = step_timeline(g.w, g.e);
  ASSERT_EQ(t.gradients.size(), g.w.params.size());
  auto at = [&](const std::string& name) {
    for (const GradientReady& r : t.gradients)
      if (r.name == name) return r.ready_s;
    ADD_FAILURE() << name;
    return 0.0;
  };
  // The last block first, its MLP before its attention and layernorms, the embedding last.
  EXPECT_EQ(t.gradients.front().name.rfind("final_ln.", 0), 0u) << t.gradients.front().name;
  EXPECT_LT(at("layers.11.mlp.fc2.weight"), at("layers.11.attn.qkv.weight"));
  EXPECT_EQ(at("layers.11.ln1.weight"), at("layers.11.attn.qkv.weight"));  // block's end
  EXPECT_LT(at("layers.11.attn.qkv.weight"), at("layers.10.mlp.fc1.weight"));
  EXPECT_LT(at("layers.0.ln2.bias"), at("embed.tokens"));
  EXPECT_EQ(t.gradients.back().name, "embed.tokens");  // tied to the LM head, written last
  EXPECT_DOUBLE_EQ(at("embed.tokens"), t.backward_end_s);
  for (size_t i = 1; i < t.gradients.size(); ++i)
    EXPECT_LE(t.gradients[i - 1].ready_s, t.gradients[i].ready_s);
  // GPT-2's 124,439,808 parameters with 47 more token rows of 768 (vocabulary 50304, no
  // further padding).
  EXPECT_EQ(t.parameters, 124'439'808.0 + 47 * 768);
  const std::vector<GradBucket> b = form_buckets(t.gradients, 4, 25.0 * 1024 * 1024);
  for (const GradBucket& x : b)
    EXPECT_TRUE(x.bytes <= 25.0 * 1024 * 1024 || x.params.size() == 1) << x.bytes;
  EXPECT_EQ(b.back().params, std::vector<std::string>{"embed.tokens"});  // 154.5 MB alone
  EXPECT_DOUBLE_EQ(b.back().bytes, 50304.0 * 768 * 4);
}

TEST(DpEstimateCatalog, LinksOfEveryGpuWithSources) {
  const GpuCatalog c = load_gpu_catalog();
  const GpuSpec& h200 = c.find("H200");
  EXPECT_EQ(h200.link(LinkKind::NvLink).line_gbs, 450);
  EXPECT_EQ(h200.link(LinkKind::NvLink).bus_gbs, 370);
  EXPECT_EQ(h200.link(LinkKind::Pcie).line_gbs, 64);
  EXPECT_EQ(h200.link(LinkKind::Pcie).bus_gbs, 52);
  EXPECT_EQ(h200.link(LinkKind::Ib).line_gbs, 50);
  EXPECT_NE(h200.link(LinkKind::NvLink).source.find("nccl-tests/issues/212"), std::string::npos);
  EXPECT_EQ(c.find("H100-SXM").link(LinkKind::NvLink).bus_gbs, 370);
  EXPECT_THROW(c.find("H100-PCIe").link(LinkKind::NvLink), InputError);
  // Issue 35: every catalogued GPU has its PCIe figures (TPU chips reach each other over ICI
  // only); NVLink where the GPU has it.
  for (const GpuSpec& g : c.gpus()) {
    if (g.arch != GpuArch::Tpu) {
      EXPECT_GT(g.link(LinkKind::Pcie).line_gbs, 0) << g.name;
    }
    for (const auto& [kind, link] : g.links) {
      EXPECT_FALSE(link.source.empty()) << g.name << " " << link_name(kind);
      EXPECT_LE(link.bus_gbs, link.line_gbs) << g.name << " " << link_name(kind);
    }
  }
  EXPECT_EQ(c.find("A100-80GB").link(LinkKind::NvLink).line_gbs, 300);
  EXPECT_EQ(c.find("V100").link(LinkKind::NvLink).line_gbs, 150);
  EXPECT_THROW(c.find("A10").link(LinkKind::NvLink), InputError);
  EXPECT_THROW(c.find("RTX4090").link(LinkKind::NvLink), InputError);
  EXPECT_TRUE(parse_link_kind("ib") == LinkKind::Ib);
  EXPECT_FALSE(parse_link_kind("ethernet"));
  GpuCatalog mine;
  EXPECT_THROW(
      mine.load_string("[[gpu]]\nname = \"X\"\narch = \"ampere\"\nsms = 1\nboost_clock_mhz = 1\n"
                       "memory_gb = 1\nmemory_bandwidth_gbs = 1\nl2_mb = 1\ntdp_w = 1\n"
                       "price_per_hour = 0\ncuda_core_tflops = { fp32 = 1 }\nsource = \"s\"\n"
                       "price_source = \"p\"\n[gpu.links.smoke]\nline_gbs = 1\nbus_gbs = 1\n"
                       "latency_us = 1\nsource = \"s\"\n",
                       "mine.toml"),
      InputError);
}

TEST(DpEstimateGpuCounts, ACountAndTheDeprecatedListsAndRanges) {
  EXPECT_EQ(parse_gpu_counts("4"), (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(parse_gpu_counts("6"), (std::vector<int64_t>{1, 2, 4, 6}));
  EXPECT_EQ(parse_gpu_counts("1"), std::vector<int64_t>{1});
  // Earlier releases' lists and ranges: exactly the counts named (with a warning).
  EXPECT_EQ(parse_gpu_counts("8,1,2,4,2"), (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(parse_gpu_counts("1-4,8"), (std::vector<int64_t>{1, 2, 3, 4, 8}));
  for (const char* bad : {"0", "4-2", "x", "2-", "-3", "1.5", ",", "99999"})
    EXPECT_THROW(parse_gpu_counts(bad), InputError) << bad;
}

TEST(DpEstimateCommand, PrintsBothModesAndTheMemoryZeroSaves) {
  test::TempDir tmp("dp_cli");
  const test::CliResult one = test::run_hwt("estimate --config gpt2_124m --json", tmp);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const test::CliResult r =
      test::run_hwt("estimate --config gpt2_124m --gpus 8 --link nvlink --json", tmp);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 8u);  // 1, 2, 4 and 8 GPUs, ZeRO 0 and 1
  const double single = nlohmann::json::parse(one.out)[0]["step_s"].get<double>();
  EXPECT_NEAR(j[0]["step_s"].get<double>(), single, 1e-12 * single);
  EXPECT_EQ(j[0]["comm_s"].get<double>(), 0);
  EXPECT_EQ(j[3]["gpus"], 8);
  EXPECT_GT(j[3]["comm_s"].get<double>(), 0);
  EXPECT_LE(j[3]["scaling_efficiency"].get<double>(), 1.0);
  EXPECT_EQ(j[7]["zero"], 1);
  // AdamW keeps two fp32 buffers: 8 bytes for each of the 124,475,904 parameters (vocabulary
  // 50304), 7/8 of them off each of 8 ranks.
  EXPECT_DOUBLE_EQ(j[7]["optimizer_state_saved_bytes"].get<double>(), 124'475'904.0 * 8 * 7 / 8);
  EXPECT_EQ(j[3]["optimizer_state_saved_bytes"].get<double>(), 0);
  const test::CliResult all = test::run_hwt("estimate --config bert_base --gpus --json", tmp);
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(nlohmann::json::parse(all.out).size(), 8u);  // --gpus alone: up to 8, both modes
  EXPECT_EQ(nlohmann::json::parse(all.out)[3]["link"], "nvlink");
  // The list form of earlier releases still works, with one deprecation line.
  const test::CliResult list =
      test::run_hwt("estimate --config bert_base --gpus 1,8 --json", tmp);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(nlohmann::json::parse(list.out).size(), 4u);
  EXPECT_NE(list.err.find("hwt: warning: --gpus 1,8: lists and ranges are deprecated"),
            std::string::npos)
      << list.err;
  const test::CliResult table = test::run_hwt("estimate --config bert_base --link pcie", tmp);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("H200 over pcie"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("not been checked against NCCL"), std::string::npos);
}

TEST(DpEstimateCommand, BadInputIsOneLineAndExitTwo) {
  test::TempDir tmp("dp_cli_bad");
  for (const char* args :
       {"--gpus 0", "--gpus 8 --link ethernet", "--gpu a10 --gpus 2 --link nvlink",
        "--gpu h100-pcie --link nvlink", "--gpus two", "--gpus 2 --epoch-tokens 1e9"}) {
    const test::CliResult r =
        test::run_hwt(std::string("estimate --config bert_base ") + args, tmp);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_TRUE(r.out.empty()) << args << ": " << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
  const test::CliResult r =
      test::run_hwt("estimate --config bert_base --gpu h200 --gpu l4 --gpus 2", tmp);
  EXPECT_NE(r.err.find("L4 has no nvlink figures"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace hwt
