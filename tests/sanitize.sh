#!/usr/bin/env bash
# Build rtstap and its tests with AddressSanitizer + UndefinedBehaviorSanitizer (CMake
# preset asan: CPU only, -O1 -g) and run the whole test suite under them. Any finding
# fails a test; tests/sanitizers/README.md describes the options and the suppressions.
# usage: bash tests/sanitize.sh [BUILD_DIR]   (default build-asan)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-asan}
jobs=$(nproc 2>/dev/null || echo 2)
start=$SECONDS
cmake --preset asan -B "$build"
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 1500
echo "sanitize.sh: passed in $((SECONDS - start)) s"
