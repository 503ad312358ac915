#!/usr/bin/env bash
# One device call (under 10 minutes): the GPU tests, whole-model parity with the machine's
# PyTorch, and `hwt train` quality runs on the GPU (nanoGPT's Shakespeare-character setup in
# bf16, ATIS), using binaries packed by scripts/gpu_carry.sh (built here with -DHWT_NATIVE=OFF)
# and data copied into .gpu-data/ (../shared does not travel).
#   OUT=/tmp/q scripts/gpu_quality.sh
set -uo pipefail
OUT=${OUT:-/tmp/gpu_quality}
mkdir -p "$OUT"
C=/tmp/hwt-carry
mkdir -p "$C" && tar -xJf build-cuda-carry/carry.tar.xz -C "$C" || exit 1
export LD_LIBRARY_PATH=$C/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export HWT_HOME=$PWD
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit --format=csv >"$OUT/env.txt" 2>&1
# GPU tests, and whole-model parity with the machine's PyTorch 2.11 (its python3).
HWT_TORCH_PYTHON=python3 timeout 150 "$C/hwt_tests" \
  --gtest_filter='*Cuda*:*LossScaler*:*GemmTimer*:*TorchParity*cuda*' >"$OUT/tests.txt" 2>&1
echo "tests exit $?" >>"$OUT/tests.txt"
# The shape advisor's vocab padding, as whole GPT-2 training steps with hwt.
for v in 50257 50304; do
  timeout 45 "$C/bench_train_step" --model gpt2 --vocab "$v" --steps 10 >>"$OUT/vocab.jsonl" 2>&1
done
timeout 80 "$C/hwt" train --config configs/atis.toml --quiet --out "$OUT/atis" \
  --set data.path=.gpu-data/atis --set train.device=cuda >"$OUT/atis.txt" 2>&1
echo "atis exit $?" >>"$OUT/atis.txt"
timeout 260 "$C/hwt" train --config configs/shakespeare_char.toml --quiet --out "$OUT/shakespeare" \
  --set data.path=.gpu-data/tinyshakespeare/input.txt --set train.device=cuda \
  --set train.precision=bf16 >"$OUT/shakespeare.txt" 2>&1
echo "shakespeare exit $?" >>"$OUT/shakespeare.txt"
rm -f "$OUT"/*/*.safetensors  # keep what comes back small
tail -3 "$OUT/tests.txt"
cat "$OUT/vocab.jsonl"
tail -6 "$OUT/shakespeare.txt" "$OUT/atis.txt"
grep -h '"split":"valid"' "$OUT/shakespeare/metrics.jsonl" | tail -3
