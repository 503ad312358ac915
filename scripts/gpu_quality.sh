#!/usr/bin/env bash
# One device call (under 10 minutes): the GPU tests, whole-model parity with the machine's
# PyTorch, and `hwt train` quality runs on the GPU (nanoGPT's Shakespeare-character setup in
# bf16 and fp16, ATIS), using binaries packed by scripts/gpu_carry.sh (built here with
# -DHWT_NATIVE=OFF) and the datasets shipped in data/. Run files go into $OUT/runs.tar.gz (the
# device call returns at most 8 files).
#   OUT=/tmp/q [STAGES="tests vocab atis shakespeare_bf16 shakespeare_fp16 shakespeare_bf16_graph"]
#     scripts/gpu_quality.sh
set -uo pipefail
OUT=${OUT:-/tmp/gpu_quality}
STAGES=${STAGES:-tests vocab atis shakespeare_bf16 shakespeare_fp16}
mkdir -p "$OUT/runs"
C=/tmp/hwt-carry
mkdir -p "$C" && tar -xJf build-cuda-carry/carry.tar.xz -C "$C" || exit 1
export LD_LIBRARY_PATH=$C/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export HWT_HOME=$PWD
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit --format=csv >"$OUT/env.txt" 2>&1

shakespeare() {  # run name, precision, extra hwt train arguments
  local name=$1 precision=$2
  shift 2
  timeout 200 "$C/hwt" train --config configs/shakespeare_char.toml --quiet \
    --out "$OUT/runs/$name" \
    --set train.device=cuda --set train.precision="$precision" "$@" >"$OUT/runs/$name.txt" 2>&1
  echo "$name exit $?" >>"$OUT/runs/$name.txt"
  tail -4 "$OUT/runs/$name.txt"
  grep -h '"split":"valid"' "$OUT/runs/$name/metrics.jsonl" |
    python3 -c 'import sys, json; r = [json.loads(l) for l in sys.stdin]; b = min(r, key=lambda x: x["loss"]); print("best valid", b["loss"], "at step", b["step"])'
}

for stage in $STAGES; do
  case $stage in
    tests)  # GPU tests, and whole-model parity with the machine's PyTorch 2.11 (its python3)
      HWT_EXPECT_GPU=1 HWT_TORCH_PYTHON=python3 timeout 150 "$C/hwt_tests" \
        --gtest_filter="${TESTS_FILTER:-*Cuda*:*LossScaler*:*GemmTimer*:*TorchParity*cuda*}" \
        >"$OUT/tests.txt" 2>&1
      echo "tests exit $?" >>"$OUT/tests.txt"
      tail -3 "$OUT/tests.txt" ;;
    vocab)  # GPT-2 steps: vocabulary 50304, GPT-2's 50257 stored padded (default), and unpadded
      for v in "50304" "50257" "50257 --set model.vocab_multiple=1"; do
        # shellcheck disable=SC2086  # $v carries a second --set
        timeout 45 "$C/bench_train_step" --config gpt2_124m --set model.vocab_size=$v --steps 10 \
          >>"$OUT/vocab.jsonl" 2>&1
      done
      cat "$OUT/vocab.jsonl" ;;
    atis)
      timeout 80 "$C/hwt" train --config configs/atis.toml --quiet --out "$OUT/runs/atis" \
        --overwrite --set train.device=cuda >"$OUT/runs/atis.txt" 2>&1
      echo "atis exit $?" >>"$OUT/runs/atis.txt"
      tail -4 "$OUT/runs/atis.txt" ;;
    shakespeare_bf16) shakespeare shakespeare_bf16 bf16 ;;
    shakespeare_fp16) shakespeare shakespeare_fp16 fp16 ;;
    shakespeare_bf16_graph) shakespeare shakespeare_bf16_graph bf16 --set train.cuda_graph=true ;;
    *) echo "unknown stage $stage" ;;
  esac
done
rm -f "$OUT"/runs/*/*.safetensors  # keep what comes back small
tar -czf "$OUT/runs.tar.gz" -C "$OUT" runs && rm -rf "$OUT/runs"
