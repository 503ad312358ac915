#!/usr/bin/env python3
"""Reads the output of llm.c's train_gpt2cu (as bench/llmc_vs_hwt.sh runs it) and prints one
JSON line: the median of its per-step times after the warm-up steps, tokens per second from that
median and the batch it reports, and the settings it printed.
  python3 bench/llmc_parse.py LOG [--warmup 5] [--variant plain|cudnn] [--cudnn VERSION]
"""
import argparse
import json
import math
import re
import statistics
import sys

STEP = re.compile(r"^step\s+(\d+)/(\d+) \| loss (\S+) .*\| ([0-9.]+) ms \|")
TABLE = re.compile(r"^\| (.+?)\s+\| (.+?)\s+\|$")


def parse(text, warmup):
    steps, table, extra = [], {}, {}
    for line in text.splitlines():
        line = line.rstrip()
        m = STEP.match(line)
        if m:
            steps.append((int(m.group(1)), int(m.group(2)), float(m.group(3)), float(m.group(4))))
            continue
        m = TABLE.match(line)
        if m:
            table[m.group(1).strip()] = m.group(2).strip()
            continue
        m = re.match(r"^device memory usage: (\d+) MiB / (\d+) MiB", line)
        if m:
            extra["device_mem_MiB"] = int(m.group(1))
        m = re.match(r"^=> setting grad_accum_steps=(\d+)", line)
        if m:
            extra["grad_accum"] = int(m.group(1))
    if not steps:
        raise ValueError("no step lines in llm.c's output")
    total = steps[-1][1]
    if [s[0] for s in steps] != list(range(1, total + 1)):
        raise ValueError(f"llm.c printed steps {[s[0] for s in steps]}, expected 1..{total}")
    timed = [s[3] for s in steps if s[0] > warmup]
    if not timed:
        raise ValueError(f"{total} steps, all within the {warmup} warm-up steps")
    B, T = int(table["micro batch size B"]), int(table["sequence length T"])
    ms = statistics.median(timed)
    tokens = B * T * extra.get("grad_accum", 1)
    loss = steps[-1][2]
    return {
        "ms_per_step": round(ms, 3),
        "tokens_per_s": round(tokens * 1000.0 / ms),
        "steps_timed": len(timed),
        "ms_min": min(timed),
        "ms_max": max(timed),
        "batch": B,
        "seq": T,
        "vocab": int(table.get("vocab_size V", 0)),
        "stored_vocab": int(table.get("padded_vocab_size Vp", 0)),
        "params": int(table.get("num_parameters", 0)),
        "recompute": int(table.get("recompute", -1)),
        "gelu_fusion": int(table.get("gelu_fusion", -1)),
        "precision": table.get("precision", ""),
        "device": table.get("device", ""),
        "device_mem_MiB": extra.get("device_mem_MiB"),
        "loss_last": loss,
        "loss_finite": math.isfinite(loss),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--variant", default="plain")
    ap.add_argument("--cudnn", default="")
    a = ap.parse_args()
    r = parse(open(a.log, errors="replace").read(), a.warmup)
    head = {"bench": "llmc_vs_hwt", "impl": "llm.c",
            "attention": "cudnn" if a.variant == "cudnn" else "llm.c kernels"}
    if a.cudnn:
        head["cudnn"] = a.cudnn
    print(json.dumps({**head, **r}), flush=True)
    return 0 if r["loss_finite"] else 1


if __name__ == "__main__":
    sys.exit(main())
