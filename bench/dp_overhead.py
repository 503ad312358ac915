#!/usr/bin/env python3
"""What data parallel's machinery costs on one GPU: `hwt train` of the same run without data
parallel, with `--gpus 1` (one NCCL rank: bucketed all-reduce on a communication stream), and
with `--gpus 1 --set train.zero=1` (reduce-scatter, shard update, all-gather), alternating
so that clock drift hits every variant alike. Each run's figure is the median step time of its
log intervals after the first (metrics.jsonl's tokens_per_s), so start-up and autotuning stay
out.

  python3 bench/dp_overhead.py --hwt build/hwt --data input.txt --out /tmp/dp [--rounds 2]
"""
import argparse
import json
import os
import statistics
import subprocess

VARIANTS = [("no data parallel", []), ("--gpus 1", ["--gpus", "1"]),
            ("--gpus 1, ZeRO-1", ["--gpus", "1", "--set", "train.zero=1"])]


def run(hwt, config, data, out, extra, steps, log_every):
    cmd = [hwt, "train", "--quiet", "--overwrite", "--config", config, "--out", out,
           "--set", f"data.path={data}", "--set", "train.batch_size=16",
           "--set", "train.precision=bf16", "--set", f"train.max_steps={steps}",
           "--set", f"train.log_every={log_every}", "--set", f"train.eval_every={steps}",
           "--set", "train.eval_batches=1", "--set", "train.telemetry=false"] + extra
    subprocess.run(cmd, check=True)
    lines = [json.loads(l) for l in open(os.path.join(out, "metrics.jsonl"))]
    tps = [l["tokens_per_s"] for l in lines if "tokens_per_s" in l][1:]
    tokens_per_step = 16 * 1024
    return statistics.median(1e3 * tokens_per_step / t for t in tps)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--hwt", required=True)
    p.add_argument("--data", required=True, help="a text file (character tokens)")
    p.add_argument("--config", default="configs/gpt2_124m.toml")
    p.add_argument("--out", required=True)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--log-every", type=int, default=25)
    a = p.parse_args()
    times = {name: [] for name, _ in VARIANTS}
    for r in range(a.rounds):
        for i, (name, extra) in enumerate(VARIANTS):
            out = os.path.join(a.out, f"r{r}_v{i}")
            times[name].append(run(a.hwt, a.config, a.data, out, extra, a.steps, a.log_every))
            print(f"round {r + 1}: {name}: {times[name][-1]:.3f} ms/step", flush=True)
    base = statistics.median(times[VARIANTS[0][0]])
    print("\n| variant | ms/step (median of rounds) | runs | vs no data parallel |")
    print("|---|---|---|---|")
    for name, _ in VARIANTS:
        m = statistics.median(times[name])
        runs = ", ".join(f"{t:.3f}" for t in times[name])
        print(f"| {name} | {m:.3f} | {runs} | {100 * (m / base - 1):+.2f}% |")


if __name__ == "__main__":
    main()
