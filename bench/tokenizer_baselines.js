// GPT-2 encoders under node, timed on the text hwt's bench_tokenizer_gpt2 encoded, and checked
// id for id against hwt's ids of it: the npm packages gpt-3-encoder (JavaScript) and tiktoken
// 1.0.22 (tiktoken's Rust core compiled to WASM, encoding "gpt2").
//   node bench/tokenizer_baselines.js NODE_MODULES TEXT HWT_IDS [REPEATS]
// HWT_IDS: hwt's ids of TEXT, little-endian int32. Each figure is the wall time of encoding the
// whole text, after one warm-up encode (loading the encoder is not timed), median of REPEATS
// (default 3); cpu_mb_s divides by the process's CPU time instead (node's own helper threads, such
// as the garbage collector's, included). Prints one JSON line per encoder.
const fs = require('fs');
const path = require('path');
const { encode_in_chunks } = require('../tests/oracle/gpt2_encode.js');

const [modules, textFile, idsFile] = process.argv.slice(2, 5);
const repeats = Number(process.argv[5] || 3);
const bytes = fs.statSync(textFile).size;
const text = fs.readFileSync(textFile, 'utf8');
const buf = fs.readFileSync(idsFile);
const hwtIds = new Int32Array(buf.buffer, buf.byteOffset, buf.length / 4);

function sameIds(ids) {
  if (ids.length !== hwtIds.length) return false;
  for (let i = 0; i < ids.length; i++) if (ids[i] !== hwtIds[i]) return false;
  return true;
}

function time(name, encode) {
  let ids = encode();  // warm-up: JIT and the encoder's own caches
  const wall = [], cpu = [];
  for (let r = 0; r < repeats; r++) {
    const start = process.hrtime.bigint();
    const cpuStart = process.cpuUsage();
    ids = encode();
    const used = process.cpuUsage(cpuStart);
    wall.push(Number(process.hrtime.bigint() - start) / 1e9);
    cpu.push((used.user + used.system) / 1e6);
  }
  const median = (v) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)];
  const s = median(wall);
  console.log(JSON.stringify({ encoder: name, file: textFile, bytes, tokens: ids.length,
                               seconds: s, mb_s: bytes / 1e6 / s,
                               cpu_mb_s: bytes / 1e6 / median(cpu),
                               ids_equal_hwt: sameIds(ids) }));
}

// gpt-3-encoder's encode() grows its result with concat, quadratic in the text's length: it is
// given the text in chunks of about 4 KB (the test oracle's, which keep the whole text's pieces).
const gpt3 = require(path.resolve(modules, 'gpt-3-encoder'));
time('gpt-3-encoder (JavaScript, 4 KB chunks)', () => encode_in_chunks(gpt3.encode, text));

const { get_encoding } = require(path.resolve(modules, 'tiktoken'));
const tiktoken = get_encoding('gpt2');
time('tiktoken 1.0.22 (WASM)', () => tiktoken.encode(text));
tiktoken.free();
