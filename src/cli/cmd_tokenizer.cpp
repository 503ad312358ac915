// `hwt tokenizer encode|decode`: text to token ids and back with a ready-made tokenizer;
// `hwt tokenizer train`: a vocabulary learned from a corpus.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <limits>

#include "cli/commands.h"
#include "core/error.h"
#include "core/files.h"
#include "data/hf_tokenizer.h"
#include "data/text_io.h"
#include "data/token_id_text.h"
#include "data/tokenizer.h"
#include "data/tokenizer_training.h"
#include "data/wordpiece_tokenizer.h"
#include "report/progress_meter.h"

namespace hwt {
namespace {

void write_stdout(std::string_view s) {
  std::fwrite(s.data(), 1, s.size(), stdout);
}

struct TokenizerOpts {
  std::string tokenizer = "gpt2";
  std::string vocab;  // wordpiece, hf
  bool lines = false, special = false, cased = false, pair = false;
  std::vector<std::string> files;  // encode
  std::string file;                // decode
};

void add_common_options(CLI::App* cmd, TokenizerOpts& o) {
  cmd->add_option("--tokenizer", o.tokenizer,
                  "Which tokenizer: gpt2 (GPT-2's byte-level BPE), wordpiece (BERT's WordPiece, "
                  "with --vocab) or hf (a Hugging Face tokenizer.json, with --vocab)")
      ->capture_default_str();
  cmd->add_option("--vocab", o.vocab,
                  "wordpiece: BERT's vocab.txt (one token a line, id = line number); hf: the "
                  "tokenizer.json");
  cmd->add_flag("--cased", o.cased,
                "wordpiece: a cased model's normalisation (case and accents kept); default "
                "uncased");
}

std::unique_ptr<Tokenizer> make_tokenizer(const TokenizerOpts& o) {
  PretrainedTokenizerOptions p;
  p.special_in_text = o.special && (o.tokenizer == "gpt2" || o.tokenizer == "hf");
  p.vocab = o.vocab;
  p.lowercase = !o.cased;
  return pretrained_tokenizer(o.tokenizer, p);
}

// InputError naming `flag` unless --tokenizer is wordpiece (checked before the tokenizer is
// made, so the message does not depend on other files).
void require_wordpiece(const TokenizerOpts& o, std::string_view flag) {
  if (o.tokenizer != "wordpiece") fail_input("{} needs --tokenizer wordpiece", flag);
}

const WordPieceTokenizer& as_wordpiece(const Tokenizer& tok) {
  const auto* wp = dynamic_cast<const WordPieceTokenizer*>(&tok);
  HWT_CHECK(wp != nullptr, "--tokenizer wordpiece made another kind");
  return *wp;
}

// --pair: "a<TAB>b" is BERT's sentence pair, a line without a tab one sentence.
std::string pair_json(const WordPieceTokenizer& tok, std::string_view line) {
  const size_t tab = line.find('\t');
  const WordPieceTokenizer::Encoding e =
      tab == std::string_view::npos ? tok.encode_single(line)
                                    : tok.encode_pair(line.substr(0, tab), line.substr(tab + 1));
  return fmt::format("{{\"ids\": {}, \"type_ids\": {}}}", token_ids_json(e.ids),
                     token_ids_json(e.type_ids));
}

std::vector<int32_t> encode_text(const Tokenizer& tok, const TokenizerOpts& o,
                                 std::string_view text) {
  if (o.special && o.tokenizer == "wordpiece")
    return tok.encode_example(text, std::numeric_limits<int64_t>::max());
  if (o.special && o.tokenizer == "hf") {
    const auto* hf = dynamic_cast<const HfTokenizer*>(&tok);
    HWT_CHECK(hf != nullptr, "--tokenizer hf made another kind");
    return hf->add_special_tokens(tok.encode(text));
  }
  return tok.encode(text);
}

struct TrainOpts {
  TokenizerTrainingOptions training;
  bool cased = false, quiet = false;
  // One string split at spaces: CLI11 would read a list item "[PAD]" as the list "PAD".
  std::string special_tokens;
  std::string out;
  std::vector<std::string> files;
};

void add_train_command(CLI::App* cmd) {
  CLI::App* train = cmd->add_subcommand(
      "train",
      "Learn a vocabulary from text files: bpe (byte-level BPE as GPT-2's, written as a "
      "tokenizer.json) or wordpiece (BERT's, written as a vocab.txt)");
  auto o = std::make_shared<TrainOpts>();
  train->add_option("--kind", o->training.kind, "bpe or wordpiece")->required();
  train
      ->add_option("--size", o->training.vocab_size,
                   "Vocabulary size: special tokens, alphabet and learned tokens together")
      ->required();
  train
      ->add_option("--min-count", o->training.min_count,
                   "Never merge a pair seen fewer times than this")
      ->capture_default_str();
  train->add_option("--special-tokens", o->special_tokens,
                    "Special tokens separated by spaces, ids 0.. in order (default: bpe "
                    "\"<|endoftext|>\"; wordpiece \"[PAD] [UNK] [CLS] [SEP] [MASK]\")");
  train->add_flag("--cased", o->cased,
                  "wordpiece: keep case and accents (a cased model); default uncased");
  train->add_option("--out", o->out, "The file to write (tokenizer.json or vocab.txt)")->required();
  train->add_flag("--quiet", o->quiet, "No progress output");
  train->add_option("CORPUS", o->files, "Text files to learn from")->required();
  train->callback([o] {
    if (o->cased && o->training.kind != "wordpiece") fail_input("--cased needs --kind wordpiece");
    o->training.lowercase = !o->cased;
    for (std::string_view t : split_whitespace(o->special_tokens))
      o->training.special_tokens.emplace_back(t);
    std::vector<std::string> texts;
    for (const std::string& f : o->files) texts.push_back(read_file(f, "corpus file"));
    const std::vector<std::string_view> views(texts.begin(), texts.end());
    ProgressMeter meter("tokenizer", "", !o->quiet);
    o->training.progress = [&](std::string_view stage, int64_t done, int64_t total) {
      meter.update(done, total, std::string(stage));
    };
    const TrainedTokenizer t = train_tokenizer_file(views, o->training);
    meter.finish();
    write_file_atomic(o->out, t.file_text);
    fmt::print("wrote {}: {} tokens ({} merges learned)\n", o->out, t.vocab_size, t.merges);
  });
}

}  // namespace

void add_tokenizer_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "tokenizer", "Encode text to token ids, decode them back, or learn a vocabulary");
  cmd->require_subcommand(1);

  CLI::App* encode = cmd->add_subcommand(
      "encode", "Print the token ids of each FILE as one JSON array (with --lines, one per line)");
  auto e = std::make_shared<TokenizerOpts>();
  add_common_options(encode, *e);
  encode->add_flag("--lines", e->lines, "One array per input line (the newline left out)");
  encode->add_flag("--special", e->special,
                   "gpt2: read <|endoftext|> in the text as the end-of-text token, not as "
                   "characters; wordpiece: put [CLS] before and [SEP] after each text; hf: match "
                   "the file's special tokens in the text and add its post-processor's (BOS)");
  encode->add_flag("--pair", e->pair,
                   "wordpiece: each line (as with --lines) is a sentence pair, the two split at "
                   "the first tab; prints {\"ids\": [CLS] a [SEP] b [SEP], \"type_ids\": 0s then "
                   "1s} per line");
  encode->add_option("FILE", e->files, "Text files")->required();
  encode->callback([e] {
    if (e->pair) require_wordpiece(*e, "--pair");
    const auto tok = make_tokenizer(*e);
    const WordPieceTokenizer* wp = e->pair ? &as_wordpiece(*tok) : nullptr;
    for (const std::string& file : e->files) {
      const std::string text = read_file(file, "text file");
      if (wp != nullptr) {
        for (std::string_view line : split_lines(text)) write_stdout(pair_json(*wp, line) + "\n");
      } else if (e->lines) {
        for (std::string_view line : split_lines(text))
          write_stdout(token_ids_json(encode_text(*tok, *e, line)) + "\n");
      } else {
        write_stdout(token_ids_json(encode_text(*tok, *e, text)) + "\n");
      }
    }
  });

  CLI::App* decode = cmd->add_subcommand(
      "decode", "Print the text of the JSON arrays of token ids in FILE, one array per line");
  auto d = std::make_shared<TokenizerOpts>();
  add_common_options(decode, *d);
  decode->add_flag("--lines", d->lines, "End each array's text with a newline");
  decode->add_option("FILE", d->file, "A file of token id arrays")->required();
  decode->callback([d] {
    const auto tok = make_tokenizer(*d);
    for (const std::vector<int32_t>& ids :
         parse_token_id_lines(read_file(d->file, "token id file"), d->file, tok->vocab_size()))
      write_stdout(tok->decode(ids) + (d->lines ? "\n" : ""));
  });

  add_train_command(cmd);
}

}  // namespace hwt
