#!/usr/bin/env bash
# The long campaign of the kill test (tests/kill_resume_test.cpp): a small CPU run with a
# checkpoint every 4 steps is killed with SIGKILL at random moments TRIALS times (default 50),
# resumed from its newest checkpoint after each kill, and finally compared byte for byte with an
# uninterrupted run. The test suite runs the same test with 3 kills.
#   scripts/kill_test.sh [TRIALS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${HWT_BUILD_DIR:-build}
if [ ! -x "$build/tests/hwt_tests" ]; then
  echo "kill_test: $build/tests/hwt_tests is missing: run scripts/test.sh (or build) first" >&2
  exit 2
fi
HWT_KILL_TRIALS=${1:-50} "$build/tests/hwt_tests" --gtest_filter='KillResume.*'
