#!/usr/bin/env bash
# The GPT-2 block against Llama's at the same size and steps, both in bf16 on the GPU: by default
# nanoGPT's Shakespeare-character run (configs/shakespeare_char.toml) and the same in Llama's
# block (configs/shakespeare_char_llama.toml); other configs may be named, and hwt options after
# `--` go to every run. Prints one JSON line per run: parameters, best and final validation
# loss, time per step.
#   bench/block_quality.sh HWT [OUT_DIR [CONFIG... [-- HWT_OPTION...]]]
#   bench/block_quality.sh build/hwt /tmp/q sotu_gpt2_124m sotu_llama_124m -- --set train.max_steps=1000
set -euo pipefail
cd "$(dirname "$0")/.."
hwt=$1 out=${2:-/tmp/block_quality}
shift $(($# < 2 ? $# : 2))
configs=() extra=()
while (($#)) && [[ $1 != -- ]]; do configs+=("$1") && shift; done
(($#)) && shift && extra=("$@")
((${#configs[@]})) || configs=(shakespeare_char shakespeare_char_llama)
mkdir -p "$out"
for config in "${configs[@]}"; do
  rm -rf "${out:?}/$config"
  "$hwt" train --config "configs/$config.toml" --quiet --out "$out/$config" \
    --set train.device=cuda --set train.precision=bf16 "${extra[@]}" >/dev/null
  python3 - "$out/$config" "$config" <<'PY'
import json, sys
run = json.load(open(sys.argv[1] + "/run.json"))
evals = [json.loads(l) for l in open(sys.argv[1] + "/metrics.jsonl") if '"split":"valid"' in l]
best = min(evals, key=lambda e: e["loss"])
print(json.dumps({
    "bench": "block_quality", "config": sys.argv[2], "parameters": run["model"]["parameters"],
    "steps": run["results"]["steps"], "ms_per_step": round(run["timing"]["step_ms"], 3),
    "best_valid": round(best["loss"], 4), "best_step": best["step"],
    "final_valid": round(evals[-1]["loss"], 4)}), flush=True)
PY
done
