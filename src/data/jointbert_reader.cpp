// JointBERT layout (ATIS, SNIPS): {train,dev,test}/ with seq.in (whitespace tokens), label
// (intent) and seq.out (one BIO tag per token), line by line.
#include "core/error.h"
#include "data/raw_data.h"
#include "data/text_io.h"

namespace hwt {
namespace {

// A file's lines. Not copied or moved: `lines` points into `text`.
struct LinesFile {
  explicit LinesFile(const std::string& file)
      : path(std::make_shared<const std::string>(file)),
        text(read_text_file(file)),
        lines(split_lines(text)) {
    if (lines.empty()) fail_input("data file {} is empty", file);
  }
  LinesFile(const LinesFile&) = delete;
  LinesFile& operator=(const LinesFile&) = delete;

  std::shared_ptr<const std::string> path;
  std::string text;
  std::vector<std::string_view> lines;
};

void check_same_count(const LinesFile& a, const LinesFile& b) {
  if (a.lines.size() != b.lines.size())
    fail_input("data file {} has {} lines but {} has {}: they must match line by line", *b.path,
               b.lines.size(), *a.path, a.lines.size());
}

std::vector<RawExample> read_split(const std::string& dir, bool intents, bool tags) {
  require_folder(dir, "seq.in, label and seq.out");
  const LinesFile in(dir + "/seq.in");
  std::vector<RawExample> out(in.lines.size());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].text = in.lines[i];
    out[i].line = static_cast<int64_t>(i + 1);
  }
  if (intents) {
    const LinesFile label(dir + "/label");
    check_same_count(in, label);
    for (size_t i = 0; i < out.size(); ++i) {
      const std::vector<std::string_view> name = split_whitespace(label.lines[i]);
      if (name.size() != 1)
        fail_input("data file {} line {}: expected one intent label, got '{}'", *label.path, i + 1,
                   label.lines[i]);
      out[i].label = name[0];
      out[i].label_file = label.path;
    }
  }
  if (tags) {
    const LinesFile seq_out(dir + "/seq.out");
    check_same_count(in, seq_out);
    for (size_t i = 0; i < out.size(); ++i) {
      const std::vector<std::string_view> t = split_whitespace(seq_out.lines[i]);
      const size_t tokens = split_whitespace(in.lines[i]).size();
      if (t.size() != tokens)
        fail_input("data file {} line {}: {} tags for {} tokens in {}", *seq_out.path, i + 1,
                   t.size(), tokens, *in.path);
      out[i].tags.assign(t.begin(), t.end());
      out[i].tags_file = seq_out.path;
    }
  }
  return out;
}

}  // namespace

RawSplits read_jointbert(const DataConfig& c, bool intents, bool tags) {
  if (c.path.empty())
    fail_input(
        "config data.path must name the JointBERT folder (with train/, dev/, test/) for "
        "data.format=jointbert");
  require_folder(c.path, "train/, dev/ and test/ folders");
  RawSplits r;
  r.train = read_split(c.path + "/train", intents, tags);
  r.valid = read_split(c.path + "/dev", intents, tags);
  r.test = read_split(c.path + "/test", intents, tags);
  r.source = "jointbert " + c.path;
  return r;
}

}  // namespace hwt
