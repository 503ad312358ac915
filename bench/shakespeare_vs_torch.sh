#!/usr/bin/env bash
# hwt against PyTorch (torch.compile) on nanoGPT's Shakespeare-character run, one after the other
# on the same GPU: `hwt train --config configs/shakespeare_char.toml` in bf16, then
# bench/shakespeare_char.py (the same model, batch, optimizer, schedule and evaluations; its
# compilation is done before its clock starts). Prints one JSON line for each.
#   bench/shakespeare_vs_torch.sh HWT DATA_FILE [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
hwt=$1 data=$2 out=${3:-/tmp/shakespeare_vs_torch}
rm -rf "$out/hwt"
mkdir -p "$out"
"$hwt" train --config configs/shakespeare_char.toml --quiet --out "$out/hwt" \
  --set data.path="$data" --set train.device=cuda --set train.precision=bf16 >/dev/null
python3 - "$out/hwt" <<'PY'
import json, sys
run = json.load(open(sys.argv[1] + "/run.json"))
evals = [json.loads(l) for l in open(sys.argv[1] + "/metrics.jsonl") if '"split":"valid"' in l]
t, best = run["timing"], min(evals, key=lambda e: e["loss"])
print(json.dumps({
    "bench": "shakespeare_char", "impl": "hwt", "steps": run["results"]["steps"],
    "total_s": round(t["total_s"], 2), "train_s": round(t["train_s"], 2),
    "eval_s": round(t["eval_s"], 2), "setup_s": round(t["data_load_s"] + t["setup_s"], 2),
    "checkpoint_s": round(t["checkpoint_s"], 2), "ms_per_step": round(t["step_ms"], 3),
    "best_valid": round(best["loss"], 4), "best_step": best["step"],
    "final_valid": round(evals[-1]["loss"], 4),
    "curve": [(e["step"], round(e["loss"], 4)) for e in evals]}), flush=True)
PY
python3 bench/shakespeare_char.py --data "$data"
