#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs the whole test suite. Tests that need a GPU
# report "skipped: no GPU" on machines without one.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir "${HWT_BUILD_DIR:-build}" --output-on-failure -j "$(nproc)"
