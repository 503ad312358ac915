#!/usr/bin/env bash
# train.recompute per mode: the device memory `hwt memory` plans (plan.gpu_bytes) and the step
# time and device memory bench_train_step measures, for GPT-2 124M at 16 x 1024 and a
# Llama-3.2-1B-shaped model at 16 x 2048, in bf16. One JSON line per config and mode.
#   bench/recompute_modes.sh build-cuda   (a directory holding hwt and bench/bench_train_step,
#                                          or both side by side)
set -euo pipefail
dir=${1:?usage: bench/recompute_modes.sh BUILD_DIR}
hwt=$dir/hwt
bench=$dir/bench/bench_train_step
[ -x "$bench" ] || bench=$dir/bench_train_step
for spec in "gpt2_124m 16 1024" "llama3.2_1b 16 2048"; do
  read -r config batch seq <<<"$spec"
  for mode in none norm_act attention full; do
    args=(--config "$config" --batch "$batch" --seq "$seq" --set train.precision=bf16
      --set "train.recompute=$mode")
    planned=$("$hwt" memory "${args[@]}" --json |
      python3 -c "import json,sys; print(json.load(sys.stdin)['plan']['gpu_bytes'] / 1e9)")
    "$bench" "${args[@]}" --steps 5 | grep '^{' | tail -1 |
      python3 -c "import json,sys; j=json.load(sys.stdin); print(json.dumps({'config': '$config',
        'recompute': '$mode', 'ms': j['ms'], 'mfu_vs_989': j['mfu_vs_989'],
        'planned_GB': round($planned, 3), 'measured_GB': j['peak_mem_GB'],
        'error': round(($planned - j['peak_mem_GB']) / j['peak_mem_GB'], 4)}))"
  done
done
