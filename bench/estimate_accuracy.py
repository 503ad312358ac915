"""`hwt estimate` against measurement: for each config, the predicted step time on a GPU
(`hwt estimate --json`) and the step time `bench_train_step` measures on that GPU, in the same
call; and the energy of a step: predicted against the GPU power NVML reports while
`bench_train_step --power-seconds` keeps stepping. Configs marked "calib" may be used to fit
constants; the "test" ones must not be. Prints one JSON line per config, then the median and
worst |error| over the test configs.
    python3 bench/estimate_accuracy.py --hwt build-cuda/hwt \
        --bench build-cuda/bench/bench_train_step [--gpu H200] [--power-seconds 3] [--out FILE]
"""
import argparse
import json
import statistics
import subprocess
import sys

DECODER, ENCODER = "gpt2_124m", "bert_base"

# (role, base config, hidden, heads, layers, batch, seq, precision); ffn 4 x hidden, dropout off.
CONFIGS = [
    ("calib", DECODER, 768, 12, 12, 16, 1024, "bf16"),
    ("calib", ENCODER, 768, 12, 12, 32, 128, "bf16"),
    ("calib", DECODER, 1024, 16, 6, 8, 2048, "bf16"),
    ("calib", ENCODER, 512, 8, 6, 64, 256, "tf32"),
    ("calib", DECODER, 384, 6, 6, 32, 256, "bf16"),
    ("calib", ENCODER, 1536, 12, 4, 16, 512, "bf16"),
    ("test", DECODER, 256, 4, 4, 32, 128, "bf16"),
    ("test", DECODER, 512, 8, 6, 16, 512, "bf16"),
    ("test", DECODER, 1024, 16, 8, 8, 1024, "bf16"),
    ("test", DECODER, 1536, 12, 4, 4, 2048, "bf16"),
    ("test", DECODER, 2048, 16, 4, 4, 2048, "bf16"),
    ("test", DECODER, 768, 12, 6, 8, 1024, "tf32"),
    ("test", DECODER, 1024, 8, 4, 8, 512, "tf32"),
    ("test", ENCODER, 256, 4, 4, 64, 128, "bf16"),
    ("test", ENCODER, 1024, 16, 6, 16, 512, "bf16"),
    ("test", ENCODER, 768, 12, 6, 16, 512, "tf32"),
    ("test", ENCODER, 2048, 16, 4, 8, 256, "bf16"),
    ("test", ENCODER, 512, 8, 8, 32, 1024, "bf16"),
]


def settings(base, hidden, heads, layers, seq, precision):
    s = {"model.hidden": hidden, "model.heads": heads, "model.layers": layers,
         "model.ffn": 4 * hidden, "model.max_seq": seq, "data.max_len": seq,
         "model.dropout": 0, "model.attn_dropout": 0, "train.precision": precision}
    if base == DECODER:
        s["model.vocab_size"] = 50304
    return [x for k, v in s.items() for x in ("--set", f"{k}={v}")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hwt", required=True)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--gpu", default="H200")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--power-seconds", type=float, default=3.0)
    ap.add_argument("--out")
    a = ap.parse_args()
    rows = []
    for role, base, hidden, heads, layers, batch, seq, prec in CONFIGS:
        common = ["--config", base, "--batch", str(batch), "--seq", str(seq)] + settings(
            base, hidden, heads, layers, seq, prec)
        est = json.loads(subprocess.run([a.hwt, "estimate", "--gpu", a.gpu, "--json"] + common,
                                        check=True, capture_output=True, text=True).stdout)[0]
        out = subprocess.run([a.bench, "--steps", str(a.steps), "--power-seconds",
                              str(a.power_seconds)] + common, check=True,
                             capture_output=True, text=True).stdout
        meas = json.loads([l for l in out.splitlines() if l.startswith("{")][-1])
        row = {"role": role, "model": "decoder" if base == DECODER else "encoder",
               "hidden": hidden, "heads": heads, "layers": layers, "batch": batch, "seq": seq,
               "precision": prec, "predicted_ms": round(1e3 * est["step_s"], 3),
               "measured_ms": meas["ms"], "gemm_ms": round(1e3 * est["gemm_s"], 3),
               "attention_ms": round(1e3 * est["attention_s"], 3),
               "memory_ms": round(1e3 * est["memory_s"], 3),
               "optimizer_ms": round(1e3 * est["optimizer_s"], 3)}
        row["error"] = round(row["predicted_ms"] / row["measured_ms"] - 1, 4)
        if meas.get("gpu_power_w"):  # the steps of --power-seconds, run back to back
            row["measured_power_w"] = meas["gpu_power_w"]
            row["predicted_power_w"] = round(est["power_w"], 1)
            row["power_error"] = round(est["power_w"] / meas["gpu_power_w"] - 1, 4)
            row["sustained_ms"] = round(1e3 * meas["power_s"] / meas["power_steps"], 3)
            row["measured_j_per_step"] = meas["energy_j_per_step"]
            row["predicted_j_per_step"] = round(est["energy_j"], 4)
            row["energy_error"] = round(est["energy_j"] / meas["energy_j_per_step"] - 1, 4)
        rows.append(row)
        print(json.dumps(row), flush=True)
    errs = [abs(r["error"]) for r in rows if r["role"] == "test"]
    summary = {"test_configs": len(errs), "median_abs_error": round(statistics.median(errs), 4),
               "worst_abs_error": round(max(errs), 4)}
    for key in ("power_error", "energy_error"):
        errs = [abs(r[key]) for r in rows if r["role"] == "test" and key in r]
        if errs:
            summary[key + "_median_abs"] = round(statistics.median(errs), 4)
            summary[key + "_worst_abs"] = round(max(errs), 4)
    print(json.dumps(summary), flush=True)
    if a.out:
        with open(a.out, "w") as f:
            for r in rows + [summary]:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    sys.exit(main())
