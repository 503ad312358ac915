#!/usr/bin/env bash
# hwt import and export of a random Hugging Face folder in a published shape (bf16 weights,
# bench/hf_random_folder.py): seconds, GB/s of the files written and peak memory, beside copying
# the same folder with cp (the disk's own speed) in the same call.
#   bench/interop_import.sh [qwen2.5_0.5b|smollm_135m|llama3_8b] [SCRATCH_DIR]
# Environment: HWT (default build/hwt), PYTHON (with torch; default /usr/bin/python3),
# EXPORT_PRECISION (default fp32; bf16 halves the export, which an 8B model needs to fit a
# 64 GB disk beside its fp32 checkpoint). The bf16 folder is removed before the export for the
# same reason.
# Peak RSS counts the memory-mapped files' pages, which the OS can drop; peak anonymous memory
# (RssAnon, polled every 50 ms) is what the process itself holds.
set -euo pipefail
shape=${1:-qwen2.5_0.5b}
dir=${2:-$(mktemp -d)}
here=$(cd "$(dirname "$0")/.." && pwd)
hwt=${HWT:-$here/build/hwt}
py=${PYTHON:-/usr/bin/python3}
precision=${EXPORT_PRECISION:-fp32}
rm -rf "$dir/hf" "$dir/copy" "$dir/out" "$dir/m.safetensors"
mkdir -p "$dir"
"$py" "$here/bench/hf_random_folder.py" "$dir/hf" "$shape"
sync
# label, output path, command...: wall seconds, GB/s of what the command wrote, peak memory.
measure() {
  local label=$1 written=$2
  shift 2
  local start end pid peak=0 hwm=0 a h
  start=$(date +%s.%N)
  "$@" >/dev/null &
  pid=$!
  while kill -0 $pid 2>/dev/null; do
    a=$(awk '/RssAnon/{print $2}' /proc/$pid/status 2>/dev/null || true)
    h=$(awk '/VmHWM/{print $2}' /proc/$pid/status 2>/dev/null || true)
    [ -n "$a" ] && [ "$a" -gt "$peak" ] && peak=$a
    [ -n "$h" ] && [ "$h" -gt "$hwm" ] && hwm=$h
    sleep 0.05
  done
  wait $pid
  sync
  end=$(date +%s.%N)
  local bytes
  bytes=$(du -sb "$written" | cut -f1)
  awk -v l="$label" -v s="$start" -v e="$end" -v b="$bytes" -v p="$peak" -v m="$hwm" 'BEGIN {
    printf "{\"step\": \"%s\", \"seconds\": %.2f, \"bytes_written\": %d, \"gb_s\": %.2f, ", l, e - s, b, b / (e - s) / 1e9
    printf "\"peak_anon_gb\": %.2f, \"peak_rss_gb\": %.2f}\n", p / 1e6, m / 1e6 }'
}
measure "cp bf16 folder" "$dir/copy" cp -r "$dir/hf" "$dir/copy"
rm -rf "$dir/copy"
measure "hwt import (bf16 folder -> fp32 checkpoint)" "$dir/m.safetensors" \
  "$hwt" import "$dir/hf" --out "$dir/m.safetensors" --quiet
rm -rf "$dir/hf"
measure "hwt export (fp32 checkpoint -> $precision folder)" "$dir/out" \
  "$hwt" export "$dir/m.safetensors" --format hf --out "$dir/out" --precision "$precision" --quiet
ls -l "$dir/m.safetensors" "$dir/out"
