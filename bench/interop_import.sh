#!/usr/bin/env bash
# hwt import and export of a random Hugging Face folder in a published shape (bf16 weights):
# seconds and peak memory, beside copying the same bytes with cp (the disk's own time) in the
# same call. Peak RSS counts the memory-mapped file's pages, which the OS can drop; peak
# anonymous memory (RssAnon, polled every 50 ms) is what the process itself holds. usage: bench/interop_import.sh [qwen2.5_0.5b|smollm_135m] [SCRATCH_DIR]
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
peak_anon() {  # command...: its peak RssAnon
  "$@" >/dev/null &
  local pid=$! peak=0 a
  while kill -0 $pid 2>/dev/null; do
    a=$(awk '/RssAnon/{print $2}' /proc/$pid/status 2>/dev/null || true)
    [ -n "$a" ] && [ "$a" -gt "$peak" ] && peak=$a
    sleep 0.05
  done
  wait $pid
  echo "  peak anonymous memory $peak KB"
}
measure "cp (bf16 folder)" cp -r "$dir/hf" "$dir/copy"
measure "hwt import (bf16 -> fp32 checkpoint)" "$hwt" import "$dir/hf" --out "$dir/m.safetensors"
measure "cp (fp32 checkpoint)" cp "$dir/m.safetensors" "$dir/copy/m.safetensors"
measure "hwt export (fp32 folder)" "$hwt" export "$dir/m.safetensors" --format hf --out "$dir/out"
rm -rf "$dir/out2"
echo "again, for memory:"
peak_anon "$hwt" import "$dir/hf" --out "$dir/m2.safetensors"
peak_anon "$hwt" export "$dir/m.safetensors" --format hf --out "$dir/out2"
ls -l "$dir/hf/model.safetensors" "$dir/m.safetensors" "$dir/out/model.safetensors"
