"""`hwt memory` against measurement: for each config, the device memory `hwt memory --json`
predicts for a training step on a GPU (`plan.gpu_bytes`: parameters, gradients, optimizer state,
the activation arena, the cuBLASLt workspace and cudaMalloc's page rounding) and the memory
`bench_train_step` measures (`peak_mem_GB`: the device's used memory after building the model
and optimizer and running the timed steps, less what was used before the backend existed; so
the CUDA context is in neither). Prints one JSON line per config, then the worst |error|
(target: within 10%).
    python3 bench/memory_vs_measured.py --hwt build-cuda/hwt \
        --bench build-cuda/bench/bench_train_step [--steps 3] [--out FILE]
"""
import argparse
import json
import subprocess
import sys

# (name, config, batch, seq, settings): a dense small encoder, BERT-base, GPT-2 small, the TT toy
# and the paper's TT ATIS model at BERT-base depth.
CONFIGS = [
    ("bert_tiny", "bert_tiny", 32, 128, {}),
    ("bert_base_bf16", "bert_base", 32, 128, {"train.precision": "bf16"}),
    ("gpt2_124m_bf16", "gpt2_124m", 8, 1024, {"train.precision": "bf16"}),
    ("tt_tiny", "tt_tiny", 16, 64, {"model.vocab_size": 1200}),
    ("tt_atis_12_layers", "tt_atis", 32, 32, {"model.vocab_size": 1000, "model.layers": 12}),
]
TARGET = 0.10


def run_json(cmd):
    """The JSON object of the command's last stdout line; exits with a clear message otherwise."""
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"memory_vs_measured: {' '.join(cmd)} failed ({p.returncode}): "
                 f"{p.stderr.strip() or p.stdout.strip()}")
    # hwt memory prints one indented object; bench_train_step may print notices before its line.
    lines = p.stdout.strip().splitlines() or [""]
    for text in (p.stdout, lines[-1]):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            pass
    sys.exit(f"memory_vs_measured: no JSON from {' '.join(cmd)}:\n{p.stdout[-2000:]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hwt", required=True)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--out")
    a = ap.parse_args()
    rows = []
    for name, config, batch, seq, settings in CONFIGS:
        args = ["--config", config, "--batch", str(batch), "--seq", str(seq)]
        for k, v in settings.items():
            args += ["--set", f"{k}={v}"]
        predicted = run_json([a.hwt, "memory", *args, "--json"])
        measured = run_json([a.bench, *args, "--steps", str(a.steps)])
        if "skipped" in measured:
            sys.exit(f"memory_vs_measured: bench_train_step skipped ({measured['skipped']}); "
                     "run on a machine with a GPU and a CUDA build")
        plan = predicted["plan"]
        want = plan["gpu_bytes"] / 1e9
        got = measured["peak_mem_GB"]
        row = {"name": name, "precision": predicted["precision"], "batch": batch, "seq": seq,
               "parameters": plan["parameter_count"], "planned_GB": round(plan["allocated"] / 1e9, 4),
               "runtime_GB": round(plan["runtime"]["total"] / 1e9, 4),
               "predicted_GB": round(want, 4), "measured_GB": got,
               "error": round((want - got) / got, 4) if got > 0 else None}
        rows.append(row)
        print(json.dumps(row), flush=True)
    errors = [abs(r["error"]) for r in rows if r["error"] is not None]
    worst = max(errors) if errors else float("nan")
    print(f"worst |error| {worst:.1%} over {len(errors)} configs (target {TARGET:.0%}): "
          f"{'within' if worst <= TARGET else 'OUTSIDE'}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
