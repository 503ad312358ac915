#!/usr/bin/env bash
# The whole CPU test suite under AddressSanitizer (with LeakSanitizer) and
# UndefinedBehaviorSanitizer: scripts/test.sh on the sanitizer build that scripts/fuzz.sh uses
# too (build-sanitize, clang, CPU only). Any report fails its test. Ends with test.sh's summary
# line and the time taken.
#   scripts/sanitize.sh
#   HWT_TEST_REGEX='Safetensors|Csv' scripts/sanitize.sh   # only the tests whose names match
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/sanitize_env.sh
start=$SECONDS
status=0
scripts/test.sh || status=$?
echo "sanitize: build and tests took $((SECONDS - start)) s"
exit "$status"
