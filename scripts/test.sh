#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs the whole test suite. Tests that need a GPU
# report "skipped: no GPU" on machines without one; their count is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build=${HWT_BUILD_DIR:-build}
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
skipped=$(grep -c "skipped: no GPU" "$build/Testing/Temporary/LastTest.log" || true)
if [ "$skipped" -gt 0 ]; then
  echo "skipped: no GPU: $skipped GPU tests did not run here (they run on a GPU machine; docs/cuda.md)"
fi
