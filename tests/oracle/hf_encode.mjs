// Token ids of each line of a UTF-8 file, and of the whole file, by Hugging Face's pure-JS
// tokenizer.json implementation (npm @huggingface/tokenizers), for tests/hf_tokenizer_test.cpp
// and tests/fixtures/hf_tokenizer/make_expected.py.
//   node tests/oracle/hf_encode.mjs PACKAGE_DIR TOKENIZER_JSON TEXT_FILE
// Prints one JSON object a line: {"ids": [...], "with_special": [...], "decoded": "..."} per
// line of the file, then the same for the whole file. ids: add_special_tokens = false;
// with_special: the post-processor's tokens added; decoded: decode(ids) without the cleanup of
// spaces before punctuation. Special tokens written in the text are matched, as the package
// always does.
import fs from 'fs';
import path from 'path';
import { pathToFileURL } from 'url';

const [pkg, tokenizerPath, textPath] = process.argv.slice(2);
const { Tokenizer } = await import(
  pathToFileURL(path.join(path.resolve(pkg), 'dist', 'tokenizers.mjs')).href);
const tokenizer = new Tokenizer(JSON.parse(fs.readFileSync(tokenizerPath, 'utf8')), {});
const text = fs.readFileSync(textPath, 'utf8');
const lines = text.split('\n');
if (lines[lines.length - 1] === '') lines.pop();
const out = [];
for (const t of [...lines, text]) {
  const ids = tokenizer.encode(t, { add_special_tokens: false }).ids;
  const withSpecial = tokenizer.encode(t).ids;
  const decoded = ids.length ? tokenizer.decode(ids, { clean_up_tokenization_spaces: false }) : '';
  out.push(JSON.stringify({ ids, with_special: withSpecial, decoded }));
}
process.stdout.write(out.join('\n') + '\n');
