#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs the whole test suite. Tests that need a GPU
# report "skipped: no GPU" on machines without one. Always ends with one summary line,
# "N passed, N failed, N skipped", and exits non-zero when any test failed.
#   scripts/test.sh
#   HWT_TEST_REGEX='Golden|Shape' scripts/test.sh   # only the tests whose names match
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build=${HWT_BUILD_DIR:-build}
log="$build/Testing/test-output.txt"
mkdir -p "$(dirname "$log")"

set +e
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" ${HWT_TEST_REGEX:+-R "$HWT_TEST_REGEX"} |
  tee "$log"
status=${PIPESTATUS[0]}
set -e

# ctest prints one line per test: "  12/477 Test  #12: Suite.Name ...   Passed    0.01 sec".
# grep -c prints 0 and exits 1 when nothing matches; that is a count, not an error.
result_lines() { grep -cE "^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*$1" "$log" || true; }
passed=$(result_lines ' Passed +[0-9.]+ sec$')
skipped=$(result_lines 'Skipped +[0-9.]+ sec$')
failed=$(result_lines '\*\*\*(Failed|Timeout|Exception|Not Run)')
gpu_skipped=$(grep -c "skipped: no GPU" "$build/Testing/Temporary/LastTest.log" || true)
if [ "$gpu_skipped" -gt 0 ]; then
  echo "skipped: no GPU: $gpu_skipped GPU tests did not run here (they run on a GPU machine; docs/cuda.md)"
fi
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  echo "test: ctest exited with status $status without a failed test (no tests found or ctest stopped)"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$status" -eq 0 ]
