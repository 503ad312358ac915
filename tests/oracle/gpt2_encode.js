// Token ids of a UTF-8 file by the npm package gpt-3-encoder's own encoder, as one JSON array,
// for tests/gpt2_tokenizer_test.cpp (and, through encode_in_chunks, bench/tokenizer_baselines.js).
//   node tests/oracle/gpt2_encode.js PACKAGE_DIR FILE
// The package's encode() grows its result with concat, quadratic in the text's length, so the
// text goes in chunks of at least kMinChunk characters, cut before a whitespace character that
// follows a non-space one: no piece of the regex holds a non-space character followed by a
// space, and the regex looks only forward, so every chunk's pieces are the whole text's.
const fs = require('fs');
const path = require('path');

const kMinChunk = 4096;

function encode_in_chunks(encode, text) {
  const ids = [];
  let start = 0;
  for (let i = 1; i <= text.length; i++) {
    if (i === text.length ||
        (i - start >= kMinChunk && /\s/u.test(text[i]) && !/\s/u.test(text[i - 1]))) {
      for (const id of encode(text.slice(start, i))) ids.push(id);
      start = i;
    }
  }
  return ids;
}

if (require.main === module) {
  const { encode } = require(path.resolve(process.argv[2]));
  const text = fs.readFileSync(process.argv[3], 'utf8');
  process.stdout.write(JSON.stringify(encode_in_chunks(encode, text)) + '\n');
}

module.exports = { encode_in_chunks };
