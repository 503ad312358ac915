#!/usr/bin/env bash
# hwt vs PyTorch CPU training-step time, same model and threads, alternating runs in one session.
#   bench/cpu_vs_torch.sh [BUILD_DIR] [extra args for both, e.g. --threads 2 --seq 64]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
# Debian's torch uses the system BLAS; OpenBLAS is selected when libopenblas is installed.
blas=$(readlink -f /etc/alternatives/libblas.so.3-x86_64-linux-gnu 2>/dev/null || echo unknown)
echo "{\"blas\": \"$blas\", \"cpu\": \"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)\", \"date\": \"$(date -u +%FT%TZ)\"}"
for round in 1 2 3; do
  "$build/bench/bench_cpu_train_step" "$@"
  /usr/bin/python3 bench/cpu_train_step.py "$@"
done
