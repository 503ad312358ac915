#!/usr/bin/env bash
# hwt import and export of a random Hugging Face folder in a published shape (bf16 weights):
# seconds and peak memory, beside copying the same bytes with cp (the disk's own time) in the
# same call. usage: bench/interop_import.sh [qwen2.5_0.5b|smollm_135m] [SCRATCH_DIR]
set -euo pipefail
shape=${1:-qwen2.5_0.5b}
dir=${2:-$(mktemp -d)}
here=$(cd "$(dirname "$0")/.." && pwd)
hwt=$here/build/hwt
/usr/bin/python3 "$here/bench/hf_random_folder.py" "$dir/hf" "$shape"
rm -rf "$dir/copy" "$dir/out" "$dir/m.safetensors"
sync
measure() {  # label, command...: wall seconds and peak resident memory
  local label=$1
  shift
  /usr/bin/time -f "$label: %e s, peak RSS %M KB" "$@" >/dev/null
}
measure "cp (bf16 folder)" cp -r "$dir/hf" "$dir/copy"
measure "hwt import (bf16 -> fp32 checkpoint)" "$hwt" import "$dir/hf" --out "$dir/m.safetensors"
measure "cp (fp32 checkpoint)" cp "$dir/m.safetensors" "$dir/copy/m.safetensors"
measure "hwt export (fp32 folder)" "$hwt" export "$dir/m.safetensors" --format hf --out "$dir/out"
ls -l "$dir/hf/model.safetensors" "$dir/m.safetensors" "$dir/out/model.safetensors"
