#!/usr/bin/env bash
# hwt vs PyTorch CPU training-step time, same model and threads, alternating runs in one
# session: three rounds, each running both programs with their default OpenMP wait policy and
# then both with OMP_WAIT_POLICY=passive. One JSON line per run, then the ratios.
#   bench/cpu_vs_torch.sh [BUILD_DIR] [args for both, e.g. --threads 2 --seq 64]
#   bench/cpu_vs_torch.sh build --config configs/shakespeare_char_llama_cpu.toml --vocab 65
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
# Debian's torch uses the system BLAS (libblas.so.3); hwt links OpenBLAS's OpenMP build.
blas=$(readlink -f /etc/alternatives/libblas.so.3-x86_64-linux-gnu 2>/dev/null || echo unknown)
echo "{\"torch_blas\": \"$blas\", \"cpu\": \"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)\", \"date\": \"$(date -u +%FT%TZ)\", \"args\": \"$*\"}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for round in 1 2 3; do
  for policy in default passive; do
    env=()
    [[ $policy == passive ]] && env=(OMP_WAIT_POLICY=passive)
    env "${env[@]}" "$build/bench/bench_cpu_train_step" "$@" | tee -a "$log"
    env "${env[@]}" /usr/bin/python3 bench/cpu_train_step.py --hwt "$build/hwt" "$@" | tee -a "$log"
  done
done
/usr/bin/python3 - "$log" <<'EOF'
import json, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
for policy in ("default", "passive"):
    pairs = [(h, t) for h, t in zip(runs[0::2], runs[1::2]) if h["omp_wait_policy"] == policy]
    ratios = [t["median_ms"] / h["median_ms"] for h, t in pairs]
    print(json.dumps({"omp_wait_policy": policy,
                      "hwt_ms": [round(h["median_ms"], 1) for h, _ in pairs],
                      "torch_ms": [round(t["median_ms"], 1) for _, t in pairs],
                      "torch_over_hwt": [round(r, 2) for r in ratios]}))
EOF
