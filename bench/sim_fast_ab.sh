#!/usr/bin/env bash
# The fast model's designs per second before and after a change, in one session: two builds of
# bench_sim_fast (e.g. main's and a branch's) run alternately, ROUNDS times each; prints every
# run's BERT-base training-step lines and the medians of wall and CPU time.
#   bench/sim_fast_ab.sh OLD_BENCH NEW_BENCH [ROUNDS (5)]
set -euo pipefail
old=$1 new=$2 rounds=${3:-5}
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores;" \
  "date: $(date -u +%FT%TZ); load: $(cut -d' ' -f1-3 /proc/loadavg)"
run() {  # prints "NAME wall NS" and "NAME cpu NS" per benchmark of the training-step workload
  "$1" --benchmark_filter='BertBaseTrain' --benchmark_min_time=1 --benchmark_format=csv \
    2>/dev/null | awk -F, '/BertBaseTrain/ {gsub(/"/, "", $1); print $1, "wall", $3; print $1, "cpu", $4}'
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for r in $(seq "$rounds"); do
  run "$old" | sed 's/^/old /' | tee -a "$tmp/all"
  run "$new" | sed 's/^/new /' | tee -a "$tmp/all"
done
echo "medians (ns per design; sweep rows: ns per 16,384 designs, cpu of all threads):"
sort -k1,3 -k4,4g "$tmp/all" | awk '
  { key = $1 " " $2 " " $3; v[key, ++n[key]] = $4; keys[key] = 1 }
  END { for (k in keys) { m = n[k]; print k, v[k, int((m + 1) / 2)] } }' | sort
