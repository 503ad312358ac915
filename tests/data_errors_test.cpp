// Bad data must raise InputError naming the file (and line), never crash.
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "data/dataset.h"

namespace hwt {
namespace {

namespace fs = std::filesystem;

// A scratch folder for the current test, removed afterwards.
class DataErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("hwt_data_errors_{}_{}", getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string write(const std::string& name, const std::string& content) {
    const fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  DataConfig config(DataFormat format, const std::string& file) const {
    DataConfig c;
    c.format = format;
    c.path = file;
    c.min_freq = 1;
    c.valid_fraction = 0;
    c.test_fraction = 0;
    return c;
  }
  // Writes a JointBERT split folder.
  void split(const std::string& name, const std::string& in, const std::string& label,
             const std::string& out) {
    write("atis/" + name + "/seq.in", in);
    write("atis/" + name + "/label", label);
    write("atis/" + name + "/seq.out", out);
  }

  fs::path dir_;
};

// The InputError message of f(), or a test failure.
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected InputError, got: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected InputError, nothing was thrown";
  return "";
}

#define EXPECT_MENTIONS(msg, text) \
  EXPECT_NE((msg).find(text), std::string::npos) << "message: " << (msg) << "\nmissing: " << (text)

TEST_F(DataErrors, MissingFileAndFolder) {
  const std::string file = path("nope.tsv");
  EXPECT_MENTIONS(input_error([&] { load_dataset(config(DataFormat::Tsv, file), Task::Classify); }),
                  file);
  const std::string folder = path("no_atis");
  EXPECT_MENTIONS(
      input_error([&] { load_dataset(config(DataFormat::JointBert, folder), Task::Classify); }),
      folder);
  EXPECT_MENTIONS(
      input_error([&] { load_dataset(config(DataFormat::Spam, folder), Task::Classify); }), folder);
  EXPECT_MENTIONS(input_error([&] { load_dataset(config(DataFormat::Tsv, ""), Task::Classify); }),
                  "data.path");
}

TEST_F(DataErrors, EmptyFileOrNoExamples) {
  const std::string empty = write("empty.tsv", "");
  EXPECT_MENTIONS(
      input_error([&] { load_dataset(config(DataFormat::Tsv, empty), Task::Classify); }), empty);
  const std::string blank = write("blank.jsonl", "\n  \n");
  EXPECT_MENTIONS(
      input_error([&] { load_dataset(config(DataFormat::Jsonl, blank), Task::Classify); }), blank);
  const std::string header_only = write("header.csv", "text,label\n");
  EXPECT_MENTIONS(
      input_error([&] { load_dataset(config(DataFormat::Csv, header_only), Task::Classify); }),
      header_only);
  fs::create_directories(path("mails/spam-1"));
  EXPECT_MENTIONS(
      input_error([&] { load_dataset(config(DataFormat::Spam, path("mails")), Task::Classify); }),
      path("mails"));
  const std::string text = write("empty.txt", "");
  EXPECT_MENTIONS(input_error([&] { load_dataset(config(DataFormat::Text, text), Task::Lm); }),
                  text);
}

TEST_F(DataErrors, MalformedLines) {
  const std::string csv = write("bad.csv", "text,label\n\"open quote,pos\n");
  EXPECT_MENTIONS(input_error([&] { load_dataset(config(DataFormat::Csv, csv), Task::Classify); }),
                  csv + " line 2");
  const std::string short_row = write("short.csv", "text,label\nonly text\n");
  EXPECT_MENTIONS(
      input_error([&] { load_dataset(config(DataFormat::Csv, short_row), Task::Classify); }),
      short_row + " line 2");
  const std::string json = write("bad.jsonl", "{\"text\": \"a\", \"label\": \"x\"}\n{\"text\": \n");
  EXPECT_MENTIONS(
      input_error([&] { load_dataset(config(DataFormat::Jsonl, json), Task::Classify); }),
      json + " line 2");
  const std::string array = write("array.jsonl", "[1, 2]\n");
  EXPECT_MENTIONS(
      input_error([&] { load_dataset(config(DataFormat::Jsonl, array), Task::Classify); }),
      array + " line 1");
  const std::string tsv = write("bad.tsv", "a\tpos\nno tab here\n");
  EXPECT_MENTIONS(input_error([&] { load_dataset(config(DataFormat::Tsv, tsv), Task::Classify); }),
                  tsv + " line 2");
  const std::string bytes =
      write("bytes.jsonl", std::string("{\"text\": \"\xFF\xFE\", \"label\": 1}\n"));
  EXPECT_MENTIONS(
      input_error([&] { load_dataset(config(DataFormat::Jsonl, bytes), Task::Classify); }),
      bytes + " line 1");
}

TEST_F(DataErrors, MissingField) {
  const std::string jsonl = write("nolabel.jsonl", "{\"text\": \"a\"}\n");
  const std::string msg =
      input_error([&] { load_dataset(config(DataFormat::Jsonl, jsonl), Task::Classify); });
  EXPECT_MENTIONS(msg, jsonl + " line 1");
  EXPECT_MENTIONS(msg, "data.label_field");
  const std::string csv = write("cols.csv", "body,label\nhello,pos\n");
  EXPECT_MENTIONS(input_error([&] { load_dataset(config(DataFormat::Csv, csv), Task::Classify); }),
                  "'text'");
  const std::string empty_label = write("nolabel.tsv", "hello\t\n");
  EXPECT_MENTIONS(
      input_error([&] { load_dataset(config(DataFormat::Tsv, empty_label), Task::Classify); }),
      empty_label + " line 1");
}

TEST_F(DataErrors, JointBertTagAndLineCounts) {
  split("train", "a b\nc d e\n", "x\ny\n", "O O\nO O\n");
  split("dev", "a\n", "x\n", "O\n");
  split("test", "a\n", "x\n", "O\n");
  EXPECT_MENTIONS(
      input_error([&] { load_dataset(config(DataFormat::JointBert, path("atis")), Task::Joint); }),
      path("atis/train/seq.out") + " line 2");
  split("train", "a b\nc d e\n", "x\n", "O O\nO O O\n");
  EXPECT_MENTIONS(
      input_error([&] { load_dataset(config(DataFormat::JointBert, path("atis")), Task::Joint); }),
      path("atis/train/label"));
  // Intent-only tasks do not read seq.out.
  split("train", "a b\nc d e\n", "x\ny\n", "broken");
  EXPECT_NO_THROW(load_dataset(config(DataFormat::JointBert, path("atis")), Task::Classify));
  fs::remove(path("atis/dev/label"));
  EXPECT_MENTIONS(input_error([&] {
                    load_dataset(config(DataFormat::JointBert, path("atis")), Task::Classify);
                  }),
                  path("atis/dev/label"));
}

TEST_F(DataErrors, UnseenLabelNamesFileAndLine) {
  DataConfig c = config(DataFormat::Tsv, write("train.tsv", "a\tpos\nb\tneg\n"));
  c.valid_path = write("valid.tsv", "a\tpos\nc\tmaybe\n");
  const std::string msg = input_error([&] { load_dataset(c, Task::Classify); });
  EXPECT_MENTIONS(msg, "label 'maybe' in " + c.valid_path + " line 2 was not seen in training");
  EXPECT_MENTIONS(msg, "data.unseen_labels=\"unk\"");
  c.unseen_labels = UnseenLabels::Unk;
  const Dataset d = load_dataset(c, Task::Classify);
  EXPECT_EQ(d.labels.names(), (std::vector<std::string>{"neg", "pos", "[UNK]"}));
  EXPECT_EQ(d.valid.examples[1].label, 2);
}

TEST_F(DataErrors, FormatAndHeadMustMatch) {
  const std::string text = write("t.txt", "hello world, hello there\n");
  EXPECT_MENTIONS(
      input_error([&] { load_dataset(config(DataFormat::Text, text), Task::Classify); }),
      "data.format=text");
  EXPECT_MENTIONS(input_error([&] { load_dataset(config(DataFormat::Tsv, text), Task::Lm); }),
                  "model.head=lm");
  EXPECT_MENTIONS(input_error([&] { load_dataset(config(DataFormat::Tsv, text), Task::Tokens); }),
                  "data.format=jointbert");
}

TEST_F(DataErrors, TextTooShortForOneWindow) {
  DataConfig c = config(DataFormat::Text, write("short.txt", "abcdefghijklmnop"));
  c.tokenizer = TokenizerKind::Char;
  c.max_len = 16;  // needs 17 tokens
  EXPECT_MENTIONS(input_error([&] { load_dataset(c, Task::Lm); }), c.path);
  c.max_len = 5;
  EXPECT_NO_THROW(load_dataset(c, Task::Lm));
  c.valid_fraction = 0.2;  // three tokens cannot hold a validation window
  EXPECT_MENTIONS(input_error([&] { load_dataset(c, Task::Lm); }), "validation");
}

TEST_F(DataErrors, BadVocabularyJsonAndSeek) {
  EXPECT_THROW(dataset_from_vocab_json(nlohmann::json::array(), Task::Classify), InputError);
  EXPECT_THROW(dataset_from_vocab_json(nlohmann::json{{"task", "classify"}}, Task::Classify),
               InputError);
  const Dataset d =
      load_dataset(config(DataFormat::Tsv, write("a.tsv", "a\tx\nb\ty\n")), Task::Classify);
  EXPECT_MENTIONS(input_error([&] { dataset_from_vocab_json(d.vocab_json(), Task::Joint); }),
                  "classify");
  BatchIterator it(d, d.train, 1, 8, true, 1);
  EXPECT_THROW(it.seek(0, 3), InputError);
  EXPECT_THROW(it.seek(0, -1), InputError);
}

}  // namespace
}  // namespace hwt
