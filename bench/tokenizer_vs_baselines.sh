#!/usr/bin/env bash
# GPT-2 encoders in one call on the same texts: hwt (bench_tokenizer_gpt2: 1 thread and
# encode_documents on --threads), gpt-3-encoder and tiktoken 1.0.22 (WASM) under node
# (bench/tokenizer_baselines.js, which checks their ids against hwt's), and optionally an
# earlier build of bench_tokenizer_gpt2 (BEFORE) to compare with. Texts: tiny Shakespeare and the
# 233 State of the Union addresses joined (in file-name order, as they are on disk).
#   bench/tokenizer_vs_baselines.sh HWT_BENCH [REPEATS] [THREADS]
# Environment: BEFORE=path to another bench_tokenizer_gpt2 (its JSON line is printed first).
# Prints JSON lines; every figure is wall time of the whole text after a warm-up, loading
# excluded, median of REPEATS (default 5).
set -euo pipefail
bench="$(realpath "$1")"
repeats="${2:-5}"
threads="${3:-2}"
source "$(dirname "$0")/tokenizer_texts.sh"
for text in "${texts[@]}"; do
  if [[ -n "${BEFORE:-}" ]]; then
    echo "before: $("$BEFORE" --file "$text" --repeats "$repeats")"
  fi
  "$bench" --file "$text" --repeats "$repeats" --threads "$threads" --ids-out "$work/ids.bin"
  node "$here/tokenizer_baselines.js" "$modules" "$text" "$work/ids.bin" "$repeats"
done
