#!/usr/bin/env bash
# The shape advisor's GPU measurements in one device call (docs/benchmarks.md, issue 4):
# fit the GEMM model on the sweep grid, then measure poorly shaped configs and their top
# suggestion. Uses the carried hwt (build-cuda-carry/carry.tar.xz, from scripts/gpu_carry.sh) when
# it runs there, else builds one. Everything lands in $OUT/shape_h200.tar.gz; the summary prints
# last.
set -uo pipefail
OUT=${OUT:-/tmp/shape_h200}
R=/tmp/shape_r  # only the archive goes to $OUT (a few files come back from there)
rm -rf "$R" && mkdir -p "$R" "$OUT"
export HWT_HOME=$PWD HWT_CACHE_DIR=$R/cache
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv \
  >"$R/nvidia_smi.csv" 2>&1

C=/tmp/hwt-carry
mkdir -p $C && tar xJf build-cuda-carry/carry.tar.xz -C $C 2>"$R/carried.txt"
HWT=$C/hwt
# cuBLAS from the toolkit, else from PyTorch's wheel.
CUBLAS=$(python3 -c 'import nvidia.cublas, os; print(os.path.dirname(nvidia.cublas.__file__) + "/lib")' 2>/dev/null)
export LD_LIBRARY_PATH=$C/lib:/usr/local/cuda/lib64:${CUBLAS:-}:${LD_LIBRARY_PATH:-}
if ! "$HWT" --version >>"$R/carried.txt" 2>&1; then
  echo "carried hwt does not run here; building" | tee -a "$R/carried.txt"
  mkdir -p build-h200 && (cd build-h200 &&
    cmake -DCMAKE_CUDA_ARCHITECTURES=90 -DHWT_TESTS=OFF -DHWT_BENCH=OFF \
      -DCMAKE_CXX_STANDARD_LIBRARIES="-L/usr/local/cuda/lib64 -lcublas" .. >"$R/build.txt" 2>&1 &&
    make -j16 hwt >>"$R/build.txt" 2>&1) || { tail -30 "$R/build.txt"; exit 1; }
  HWT=$PWD/build-h200/hwt
fi
if [ -x $C/hwt_tests ] && [ "$HWT" = $C/hwt ]; then
  $C/hwt_tests --gtest_filter='GemmTimer.*' >"$R/gpu_tests.txt" 2>&1
  tail -3 "$R/gpu_tests.txt"
fi

timeout 240 "$HWT" shape --sweep --gpu H200 --precision bf16 --out "$R/sweep" >"$R/sweep.txt" 2>&1
CAL=$R/sweep/gemm_h200_bf16.json
timeout 120 "$HWT" shape --validate --gpu H200 --precision bf16 --calibration "$CAL" \
  --out "$R/validate" >"$R/validate.txt" 2>&1
LM="--set model.head=lm --set model.causal=true"
run() {  # name, then hwt shape arguments
  local name=$1
  shift
  timeout 120 "$HWT" shape --gpu H200 --precision bf16 --measure --calibration "$CAL" \
    --out "$R/$name" "$@" >"$R/$name.txt" 2>&1
}
run gpt2_vocab $LM --set model.max_seq=1024 --set model.hidden=768 --set model.heads=12 \
  --set model.ffn=3072 --set model.layers=12 --set model.vocab_size=50257 --batch 16 --seq 1024
run gpt3_2p7b_heads $LM --set model.max_seq=2048 --set model.hidden=2560 --set model.heads=32 \
  --set model.ffn=10240 --set model.layers=32 --set model.vocab_size=50304 --batch 4 --seq 2048
run hidden_2600 $LM --set model.max_seq=1024 --set model.hidden=2600 --set model.heads=20 \
  --set model.ffn=10400 --set model.layers=24 --set model.vocab_size=50257 --batch 8 --seq 1024
run ffn_10922 $LM --set model.max_seq=2048 --set model.hidden=4096 --set model.heads=32 \
  --set model.ffn=10922 --set model.layers=8 --set model.vocab_size=50304 --batch 4 --seq 2048
run bert_h1000 --set model.max_seq=128 --set model.hidden=1000 --set model.heads=10 \
  --set model.ffn=4000 --set model.layers=12 --set model.vocab_size=30522 --batch 32 --seq 128

tar czf "$OUT/shape_h200.tar.gz" -C "$(dirname "$R")" "$(basename "$R")"
echo "== sweep"
tail -8 "$R/sweep.txt"
echo "== validate"
tail -5 "$R/validate.txt"
for f in gpt2_vocab gpt3_2p7b_heads hidden_2600 ffn_10922 bert_h1000; do
  echo "== $f"
  grep -E "^  +1\. |top suggestion measured|measured GEMMs|error" "$R/$f.txt"
done
