#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang with ASan and UBSan, into build-sanitize) and
# runs each for SECONDS (default 20: the smoke CI runs), each from its committed seed corpus
# (tests/fuzz/corpus/<target>); what a run adds to the corpus stays in the build folder. Ends
# with a table of target, executions and findings, and exits non-zero on any finding; a finding's
# input is kept as build-sanitize/fuzz/<target>/crash-* (leak-*, timeout-*, oom-*) and replays
# with `build-sanitize/tests/fuzz/<target> FILE`.
#   scripts/fuzz.sh                        # 20 s per target
#   scripts/fuzz.sh 600                    # the long campaign: 10 minutes per target
#   HWT_FUZZ_RUNS=1000000 scripts/fuzz.sh 3600   # a million inputs each (or an hour)
#   HWT_FUZZ_TARGETS='csv|tsv' scripts/fuzz.sh   # only the targets whose names match
#   HWT_FUZZ_JOBS=1 scripts/fuzz.sh        # one target at a time (default: one per core)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
source scripts/sanitize_env.sh
build=$HWT_BUILD_DIR
start=$SECONDS
# shellcheck disable=SC2086 # HWT_CMAKE_ARGS is a list of words
cmake -S . -B "$build" $HWT_CMAKE_ARGS >/dev/null
cmake --build "$build" -j "$(nproc)" --target fuzz_targets
echo "fuzz: build took $((SECONDS - start)) s"

targets=()
for f in tests/fuzz/*_fuzz.cpp; do
  t=$(basename "$f" .cpp)
  [[ -z ${HWT_FUZZ_TARGETS:-} || $t =~ $HWT_FUZZ_TARGETS ]] && targets+=("$t")
done

# One target: a finding aborts at once (UBSan without recovery, ASan, LeakSanitizer); an
# input running over 10 s is a hang and one asking for over 2 GiB a runaway allocation. Writes
# "target executions findings" to its folder's result.txt.
run_target() {
  local t=$1 work="$build/fuzz/$1" status=0 runs findings
  mkdir -p "$work/corpus" "$work/tmp"
  rm -f "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* "$work/result.txt"
  TMPDIR="$work/tmp" "$build/tests/fuzz/$t" -max_total_time="$seconds" \
    ${HWT_FUZZ_RUNS:+-runs=$HWT_FUZZ_RUNS} \
    -timeout=10 -rss_limit_mb=2048 -close_fd_mask=3 -print_final_stats=1 \
    -artifact_prefix="$work/" "$work/corpus" "tests/fuzz/corpus/$t" >"$work/log.txt" 2>&1 ||
    status=$?
  runs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$work/log.txt" |
    grep -oE '[0-9]+$' || true)
  findings=$(find "$work" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
    -o -name 'oom-*' \) | wc -l)
  if ((status != 0 && findings == 0)); then findings=1; fi
  if ((findings > 0)); then
    echo "fuzz: $t found a problem ($work/log.txt):"
    grep -m5 -E 'ERROR|SUMMARY|runtime error|terminate' "$work/log.txt" || tail -5 "$work/log.txt"
  fi
  echo "$t ${runs:-?} $findings" >"$work/result.txt"
}

# As many targets side by side as there are cores (HWT_FUZZ_JOBS).
jobs=${HWT_FUZZ_JOBS:-$(nproc)}
for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
  run_target "$t" &
done
wait

failed=0
printf '%-24s %12s %9s\n' target executions findings
for t in "${targets[@]}"; do
  read -r name runs findings <"$build/fuzz/$t/result.txt"
  printf '%-24s %12s %9s\n' "$name" "$runs" "$findings"
  ((findings == 0)) || failed=1
done
echo "fuzz: ${#targets[@]} targets, $seconds s each${HWT_FUZZ_RUNS:+ or $HWT_FUZZ_RUNS runs}," \
  "$jobs at a time, $((SECONDS - start)) s in all"
exit "$failed"
