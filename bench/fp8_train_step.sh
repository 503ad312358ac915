#!/usr/bin/env bash
# Training steps in fp8 against bf16 (issue 33's step-time targets): bench_train_step on
# GPT-2 124M (16 x 1024), GPT-2 XL (4 x 1024) and Llama-3.2-1B (4 x 2048), each shape in bf16
# and fp8 one after the other, twice (bf16, fp8, bf16, fp8; ROUNDS=1 once), on the same GPU. One
# JSON line per measurement; compare each fp8 line with the bf16 line next to it.
#   [ROUNDS=N] bench/fp8_train_step.sh BENCH_TRAIN_STEP
set -uo pipefail
cd "$(dirname "$0")/.."
bench=$1
shapes=("--config gpt2_124m --batch 16 --seq 1024"
  "--config gpt2_xl --batch 4 --seq 1024"
  "--config llama3.2_1b --batch 4 --seq 2048")
for shape in "${shapes[@]}"; do
  for ((round = 1; round <= ${ROUNDS:-2}; round++)); do
    for precision in bf16 fp8; do
      # shellcheck disable=SC2086 # the shape is a list of arguments
      timeout 180 "$bench" $shape --set train.precision=$precision --steps 20
    done
  done
done
