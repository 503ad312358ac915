// `hwt tokenizer encode|decode`: text to token ids and back with a ready-made tokenizer.
#include <cstdio>

#include "cli/commands.h"
#include "core/files.h"
#include "data/text_io.h"
#include "data/token_id_text.h"
#include "data/tokenizer.h"

namespace hwt {
namespace {

void write_stdout(std::string_view s) {
  std::fwrite(s.data(), 1, s.size(), stdout);
}

struct TokenizerOpts {
  std::string tokenizer = "gpt2";
  bool lines = false, special = false;
  std::vector<std::string> files;  // encode
  std::string file;                // decode
};

void add_common_options(CLI::App* cmd, TokenizerOpts& o) {
  cmd->add_option("--tokenizer", o.tokenizer, "Which tokenizer: gpt2 (GPT-2's byte-level BPE)")
      ->capture_default_str();
}

}  // namespace

void add_tokenizer_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("tokenizer", "Encode text to token ids and decode them back");
  cmd->require_subcommand(1);

  CLI::App* encode = cmd->add_subcommand(
      "encode", "Print the token ids of each FILE as one JSON array (with --lines, one per line)");
  auto e = std::make_shared<TokenizerOpts>();
  add_common_options(encode, *e);
  encode->add_flag("--lines", e->lines, "One array per input line (the newline left out)");
  encode->add_flag("--special", e->special,
                   "Read <|endoftext|> in the text as the end-of-text token, not as characters");
  encode->add_option("FILE", e->files, "Text files")->required();
  encode->callback([e] {
    const auto tok = pretrained_tokenizer(e->tokenizer, e->special);
    for (const std::string& file : e->files) {
      const std::string text = read_file(file, "text file");
      if (e->lines) {
        for (std::string_view line : split_lines(text))
          write_stdout(token_ids_json(tok->encode(line)) + "\n");
      } else {
        write_stdout(token_ids_json(tok->encode(text)) + "\n");
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
    const auto tok = pretrained_tokenizer(d->tokenizer, false);
    for (const std::vector<int32_t>& ids :
         parse_token_id_lines(read_file(d->file, "token id file"), d->file, tok->vocab_size()))
      write_stdout(tok->decode(ids) + (d->lines ? "\n" : ""));
  });
}

}  // namespace hwt
