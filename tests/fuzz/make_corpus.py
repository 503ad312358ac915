#!/usr/bin/env python3
"""Writes the seed corpus of every fuzz target (tests/fuzz/corpus/<target>/) from the project's
own configs, hardware files and test fixtures, cut small so that each input runs quickly.
Standard library only; re-running rewrites the same files. The checkpoint seed
(corpus/checkpoint_fuzz/tiny.safetensors, also in safetensors_fuzz) is a real one, written by

    hwt train --out ck --set data.path=tests/fixtures/data/quoting.csv --set data.format=csv \
      --set model.hidden=4 --set model.heads=1 --set model.layers=1 --set model.ffn=4 \
      --set model.max_seq=8 --set data.max_len=8 --set train.max_steps=1 \
      --set data.valid_fraction=0 --set data.test_fraction=0 --set data.cache_dir=off

with data.path in its config set back to the relative path above.

    tests/fuzz/make_corpus.py
"""
import json
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/fuzz/corpus"
SEP = "\n====\n"  # fuzz_input.h's kSeparator


def text(path):
    return (ROOT / path).read_text(encoding="utf-8")


def head(path, lines):
    return "".join(text(path).splitlines(keepends=True)[:lines])


def write(target, name, content):
    d = OUT / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))


def safetensors(tensors, metadata):
    """A safetensors file (no checksums: hwt opens those with a warning)."""
    header, data = {}, b""
    for name, (dtype, shape, values) in tensors.items():
        fmt = {"F32": "f", "I32": "i"}[dtype]
        raw = struct.pack("<%d%s" % (len(values), fmt), *values)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    header["__metadata__"] = metadata
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


def byte_level(b):
    """GPT-2's printable letter for byte b (encoder.py's bytes_to_unicode)."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    if b in keep:
        return chr(b)
    return chr(256 + [x for x in range(256) if x not in keep].index(b))


def main():
    for name in ["bert_tiny", "shakespeare_char_cpu", "atis", "tt_tiny"]:
        write("toml_config_fuzz", name + ".toml", text(f"configs/{name}.toml"))
    write("config_set_fuzz", "model", "model.hidden=64\nmodel.heads=4\nmodel.layers=2\n")
    write("config_set_fuzz", "train", "train.threads=2\ntrain.precision=bf16\noptim.lr=1e-3\n")
    write("config_set_fuzz", "data", "data.format=csv\ndata.tokenizer=char\ndata.max_len=32\n")

    weights = {"embed.weight": ("F32", [2, 3], [0.5, -1.0, 2.0, 0.0, 1.5, -0.25]),
               "step": ("I32", [], [7])}
    write("safetensors_fuzz", "two_tensors.safetensors", safetensors(weights, {"note": "seed"}))
    write("safetensors_fuzz", "empty.safetensors", safetensors({}, {}))
    catalog = text("hardware/gpus.toml").split("[[gpu]]")
    write("gpu_catalog_fuzz", "two_gpus.toml", "[[gpu]]".join(catalog[:3]))
    for f in sorted((ROOT / "hardware/calibration").glob("*.json")):
        write("calibration_fuzz", f.name, f.read_text())
    for f in sorted((ROOT / "hardware/accel/designs").glob("*.toml")):
        write("accel_config_fuzz", f.name, f.read_text())
    for f in sorted((ROOT / "hardware/accel/spaces").glob("*.toml")):
        write("design_space_fuzz", f.name, f.read_text())
    write("hardware_library_fuzz", "modules_14nm",
          text("hardware/accel/modules_14nm.toml") + SEP + text("hardware/accel/memories.toml"))
    write("model_space_fuzz", "codesign_space.toml", text("configs/codesign_space.toml"))

    for f in sorted((ROOT / "tests/fixtures/data/spam").glob("*/*.txt"))[:3]:
        write("email_clean_fuzz", f.name, f.read_bytes())
    write("csv_reader_fuzz", "quoting.csv", text("tests/fixtures/data/quoting.csv"))
    write("tsv_reader_fuzz", "reviews.tsv", text("tests/fixtures/data/reviews.tsv"))
    write("jsonl_reader_fuzz", "reviews.jsonl", text("tests/fixtures/data/reviews.jsonl"))
    write("text_reader_fuzz", "tiny.txt", text("tests/fixtures/data/tiny.txt"))
    write("text_reader_fuzz", "lm.txt", head("tests/fixtures/golden/lm.txt", 20))
    atis = "tests/fixtures/data/atis_mini/train/"
    write("jointbert_reader_fuzz", "atis_mini",
          SEP.join(head(atis + f, 12) for f in ["seq.in", "label", "seq.out"]))

    sample = "Hello wörld, 12 apples!"
    write("wordpiece_vocab_fuzz", "vocab",
          head("tests/fixtures/wordpiece/vocab.txt", 120) + "hello\n##llo\nworld\n##s\n" + SEP +
          sample)
    # A byte-level vocabulary of the 256 bytes and three merges (GPT-2's layout, cut small).
    tokens = [byte_level(b) for b in range(256)] + ["he", "ll", "hell"]
    encoder = json.dumps({t: i for i, t in enumerate(tokens)}, ensure_ascii=False)
    merges = "#version: 0.2\nh e\nl l\nhe ll\n"
    write("gpt2_vocabulary_fuzz", "tiny", encoder + SEP + merges + SEP + "hello hell")
    llama = json.loads(text("tests/fixtures/hf_tokenizer/llama2.json"))
    keep = dict(list(llama["model"]["vocab"].items())[:300])
    llama["model"]["vocab"] = keep
    llama["model"]["merges"] = [m for m in llama["model"]["merges"]
                                if all(p in keep for p in m.split(" ")) and
                                m.replace(" ", "") in keep]
    write("hf_tokenizer_fuzz", "llama2_small",
          json.dumps(llama, ensure_ascii=False) + SEP + sample)
    byte_level_json = {
        "version": "1.0", "added_tokens": [{"id": 259, "content": "<|endoftext|>",
                                            "special": True}],
        "normalizer": None, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                                              "use_regex": True},
        "post_processor": None, "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "vocab": {t: i for i, t in enumerate(tokens)},
                  "merges": ["h e", "l l", "he ll"]}}
    write("hf_tokenizer_fuzz", "byte_level",
          json.dumps(byte_level_json, ensure_ascii=False) + SEP + "hello<|endoftext|> hell")


if __name__ == "__main__":
    main()
