#!/usr/bin/env bash
# fp8 training's quality against bf16 (issue 33): the same run of a config in bf16 and in fp8 with
# every linear product in fp8 (train.fp8_products = "all", so a small model that the per-GEMM
# choice would keep in bf16 is still trained in fp8), for each seed, on the GPU where there is
# one. Runs up to PARALLEL at once (small models leave the GPU idle between kernels). Prints one
# JSON line per run (best and final validation loss, time per step), then one per precision (mean,
# lowest, highest) and the fp8 - bf16 difference of the mean best validation loss. hwt options
# after `--` go to every run.
#   [SEEDS="1 2 3"] [PARALLEL=1] bench/fp8_quality.sh HWT OUT_DIR CONFIG [-- HWT_OPTION...]
#   PARALLEL=3 bench/fp8_quality.sh build/hwt /tmp/q shakespeare_char
#   bench/fp8_quality.sh build/hwt /tmp/q sotu_gpt2_124m -- --set train.max_steps=2000
set -euo pipefail
cd "$(dirname "$0")/.."
hwt=$1 out=$2 config=$3
shift 3
(($#)) && [[ $1 == -- ]] && shift
extra=("$@")
mkdir -p "$out"
runs=()
for seed in ${SEEDS:-1 2 3}; do
  for precision in bf16 fp8; do
    name="$config-$precision-seed$seed"
    runs+=("$name")
    rm -rf "${out:?}/$name"
    while (($(jobs -rp | wc -l) >= ${PARALLEL:-1})); do wait -n; done
    "$hwt" train --config "configs/$config.toml" --quiet --out "$out/$name" \
      --set train.precision=$precision --set train.seed="$seed" \
      --set train.fp8_products=all "${extra[@]}" >"$out/$name.log" 2>&1 &
  done
done
wait
python3 - "$out" "${runs[@]}" <<'PY'
import json, statistics, sys
out, names = sys.argv[1], sys.argv[2:]
best = {}
for name in names:
    evals = [json.loads(l) for l in open(f"{out}/{name}/metrics.jsonl") if '"split":"valid"' in l]
    run = json.load(open(f"{out}/{name}/run.json"))
    b = min(evals, key=lambda e: e["loss"])
    precision = name.split("-")[-2]
    best.setdefault(precision, []).append(b["loss"])
    print(json.dumps({"bench": "fp8_quality", "run": name, "steps": run["results"]["steps"],
                      "ms_per_step": round(run["timing"]["step_ms"], 3),
                      "best_valid": round(b["loss"], 4), "best_step": b["step"],
                      "final_valid": round(evals[-1]["loss"], 4)}), flush=True)
for precision, losses in best.items():
    print(json.dumps({"bench": "fp8_quality", "precision": precision,
                      "mean_best_valid": round(statistics.mean(losses), 4),
                      "min": round(min(losses), 4), "max": round(max(losses), 4)}))
if "fp8" in best and "bf16" in best:
    d = statistics.mean(best["fp8"]) - statistics.mean(best["bf16"])
    print(json.dumps({"bench": "fp8_quality", "fp8_minus_bf16": round(d, 4),
                      "relative": round(d / statistics.mean(best["bf16"]), 5)}))
PY
