// train.tensorboard (issue 35): the event file's records are framed as TensorFlow's record format
// frames them and parse with TensorBoard's message definitions (report/tensorboard.proto carries
// their field numbers); a training run writes every metrics.jsonl number as a scalar, the config
// as text and histograms at each evaluation. TensorBoard's own reader runs on the GPU machine.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_util.h"
#include "core/crc32c.h"
#include "report/tensorboard_writer.h"
#include "tensorboard.pb.h"

namespace hwt {
namespace {

namespace fs = std::filesystem;

TEST(Crc32c, KnownValues) {
  // The check value of CRC-32C (RFC 3720, appendix B.4) and of no bytes.
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c("", 0), 0u);
  const std::string zeros(32, '\0');
  EXPECT_EQ(crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);  // RFC 3720 B.4: 32 zero bytes
}

// Every record of an event file, after checking its two checksums.
std::vector<tensorboard::Event> read_events(const fs::path& file) {
  const std::string bytes = test::slurp(file);
  std::vector<tensorboard::Event> events;
  for (size_t at = 0; at < bytes.size();) {
    uint64_t length = 0;
    uint32_t length_crc = 0, data_crc = 0;
    EXPECT_LE(at + 12, bytes.size());
    std::memcpy(&length, bytes.data() + at, 8);
    std::memcpy(&length_crc, bytes.data() + at + 8, 4);
    EXPECT_EQ(length_crc, masked_crc32c(bytes.data() + at, 8));
    const std::string data = bytes.substr(at + 12, length);
    std::memcpy(&data_crc, bytes.data() + at + 12 + length, 4);
    EXPECT_EQ(data_crc, masked_crc32c(data.data(), data.size()));
    tensorboard::Event e;
    EXPECT_TRUE(e.ParseFromString(data));
    events.push_back(e);
    at += 12 + length + 4;
  }
  return events;
}

fs::path event_file(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().starts_with("events.out.tfevents.")) return e.path();
  return {};
}

TEST(TensorBoardWriter, ScalarsHistogramsAndTextParseBack) {
  test::TempDir dir("tb_writer");
  {
    TensorBoardWriter w(dir.path().string());
    w.scalar("train/loss", 3, 2.5);
    const std::vector<float> v = {-1, 0, 0.5f, 1, 1, std::nanf("")};
    w.histogram("weights/w", 3, v);
    w.text("config", 0, "    a = 1\n");
  }
  const std::vector<tensorboard::Event> e = read_events(event_file(dir.path()));
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].file_version(), "brain.Event:2");
  EXPECT_EQ(e[1].step(), 3);
  EXPECT_EQ(e[1].summary().value(0).tag(), "train/loss");
  EXPECT_EQ(e[1].summary().value(0).simple_value(), 2.5f);
  const tensorboard::HistogramProto& h = e[2].summary().value(0).histo();
  EXPECT_EQ(h.num(), 5);  // the NaN left out
  EXPECT_EQ(h.min(), -1);
  EXPECT_EQ(h.max(), 1);
  EXPECT_DOUBLE_EQ(h.sum(), 1.5);
  EXPECT_DOUBLE_EQ(h.sum_squares(), 3.25);
  ASSERT_EQ(h.bucket_size(), 30);
  EXPECT_EQ(h.bucket_limit(29), 1);
  EXPECT_EQ(h.bucket(0), 1);   // -1
  EXPECT_EQ(h.bucket(29), 2);  // both 1s
  double total = 0;
  for (double c : h.bucket()) total += c;
  EXPECT_EQ(total, 5);
  const tensorboard::SummaryValue& t = e[3].summary().value(0);
  EXPECT_EQ(t.metadata().plugin_data().plugin_name(), "text");
  EXPECT_EQ(t.tensor().dtype(), 7);
  EXPECT_EQ(t.tensor().string_val(0), "    a = 1\n");
}

// A short training run with train.tensorboard into dir/run: 8 steps, logged every 2, evaluated
// every 4.
void train_tiny(const test::TempDir& dir) {
  dir.write("train.tsv", test::tiny_sentiment_tsv(80, 3));
  const auto r =
      test::run_hwt("train --out " + dir / "run" + " --set data.path=" + (dir / "train.tsv") + " " +
                        test::kTinyTsvSettings +
                        " --set train.max_steps=8 --set train.log_every=2 "
                        "--set train.eval_every=4 --set train.tensorboard=true",
                    dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

// Calls check(tag, step, value) for each number of the run's metrics.jsonl (tags "train/loss",
// "valid/accuracy", ...); returns how many.
int for_each_metric(const fs::path& run,
                    const std::function<void(const std::string&, int64_t, float)>& check) {
  std::istringstream lines(test::slurp(run / "metrics.jsonl"));
  int count = 0;
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    const std::string prefix = j.value("split", std::string("train")) + "/";
    for (const auto& [key, value] : j.items())
      if (value.is_number() && key != "step" && key != "epoch") {
        check(prefix + key, j["step"].get<int64_t>(), value.get<float>());
        ++count;
      }
  }
  return count;
}

TEST(TensorBoardTraining, EveryMetricAsAScalarTheConfigAndHistograms) {
  test::TempDir dir("tb_train");
  train_tiny(dir);
  const fs::path file = event_file(dir.path() / "run");
  ASSERT_FALSE(file.empty()) << "no event file";
  std::map<std::string, std::map<int64_t, float>> scalars;
  std::map<std::string, double> histogram_counts;
  std::string config;
  for (const tensorboard::Event& e : read_events(file))
    for (const tensorboard::SummaryValue& v : e.summary().value()) {
      if (v.has_histo()) histogram_counts[v.tag()] = v.histo().num();
      if (v.has_tensor()) config = v.tensor().string_val(0);
      if (v.value_case() == tensorboard::SummaryValue::kSimpleValue)
        scalars[v.tag()][e.step()] = v.simple_value();
    }
  // Each metrics.jsonl number is the scalar of its tag and step.
  const int checked =
      for_each_metric(dir.path() / "run", [&](const std::string& tag, int64_t step, float value) {
        EXPECT_EQ(scalars[tag][step], value) << tag;
      });
  EXPECT_GT(checked, 10);
  EXPECT_EQ(scalars["train/loss"].size(), 4u);  // steps 2, 4, 6, 8
  EXPECT_EQ(scalars["valid/accuracy"].size(), 2u);
  EXPECT_NE(config.find("tensorboard = true"), std::string::npos) << config;
  // Weights and gradients of every parameter, at both evaluations' last: 16-wide embeddings.
  ASSERT_TRUE(histogram_counts.contains("weights/embed.tokens"));
  EXPECT_EQ(histogram_counts["weights/embed.tokens"], histogram_counts["gradients/embed.tokens"]);
  EXPECT_EQ(static_cast<int64_t>(histogram_counts["weights/embed.tokens"]) % 16, 0);
}

// TensorBoard's own reader (tests/oracle/tensorboard_read.py; installed on the GPU machine) finds
// the same scalars, the config text and both histogram families.
TEST(TensorBoardTraining, TensorBoardsOwnReaderReadsTheRun) {
  const char* env = std::getenv("HWT_TORCH_PYTHON");
  const std::string python = env ? env : "python3";
  if (std::system((python + " -c 'import tensorboard' >/dev/null 2>&1").c_str()) != 0)
    GTEST_SKIP() << "skipped: " << python << " has no tensorboard";
  test::TempDir dir("tb_reader");
  train_tiny(dir);
  const std::string out = dir / "read.json";
  ASSERT_EQ(std::system((python + " " + HWT_TEST_DIR + "/oracle/tensorboard_read.py " +
                         (dir / "run") + " > " + out)
                            .c_str()),
            0);
  const nlohmann::json read = nlohmann::json::parse(test::slurp(out));
  const int checked =
      for_each_metric(dir.path() / "run", [&](const std::string& tag, int64_t step, float value) {
        ASSERT_TRUE(read["scalars"].contains(tag)) << tag;
        ASSERT_TRUE(read["scalars"][tag].contains(std::to_string(step))) << tag << " step " << step;
        EXPECT_EQ(read["scalars"][tag][std::to_string(step)].get<float>(), value) << tag;
      });
  EXPECT_GT(checked, 10);
  bool config_seen = false;
  for (const auto& [tag, text] : read["text"].items())
    config_seen =
        config_seen || text.get<std::string>().find("tensorboard = true") != std::string::npos;
  EXPECT_TRUE(config_seen) << read["text"].dump();
  ASSERT_TRUE(read["histograms"].contains("weights/embed.tokens")) << read["histograms"].dump();
  EXPECT_EQ(read["histograms"]["weights/embed.tokens"],
            read["histograms"]["gradients/embed.tokens"]);
  EXPECT_EQ(read["histograms"]["weights/embed.tokens"].size(), 2u) << "one per evaluation";
}

}  // namespace
}  // namespace hwt
