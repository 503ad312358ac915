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

# A finding aborts at once (UBSan without recovery, ASan, LeakSanitizer); an input running
# over 10 s is a hang and one asking for over 2 GiB a runaway allocation.
rows=()
failed=0
for t in "${targets[@]}"; do
  work="$build/fuzz/$t"
  mkdir -p "$work/corpus"
  rm -f "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*
  log="$work/log.txt"
  set +e
  "$build/tests/fuzz/$t" -max_total_time="$seconds" ${HWT_FUZZ_RUNS:+-runs=$HWT_FUZZ_RUNS} \
    -timeout=10 -rss_limit_mb=2048 -close_fd_mask=3 -print_final_stats=1 \
    -artifact_prefix="$work/" "$work/corpus" "tests/fuzz/corpus/$t" >"$log" 2>&1
  status=$?
  set -e
  runs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$' || true)
  findings=$(find "$work" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'leak-*' \
    -o -maxdepth 1 -name 'timeout-*' -o -maxdepth 1 -name 'oom-*' | wc -l)
  if [[ $status -ne 0 && $findings -eq 0 ]]; then findings=1; fi
  ((findings == 0)) || { failed=1; echo "fuzz: $t found a problem ($log):"; grep -m5 -E 'ERROR|SUMMARY|runtime error|terminate' "$log" || tail -5 "$log"; }
  rows+=("$(printf '%-24s %12s %9s' "$t" "${runs:-?}" "$findings")")
done
printf '%-24s %12s %9s\n' target executions findings
printf '%s\n' "${rows[@]}"
echo "fuzz: ${#targets[@]} targets, $seconds s each${HWT_FUZZ_RUNS:+ or $HWT_FUZZ_RUNS runs}, $((SECONDS - start)) s in all"
exit "$failed"
