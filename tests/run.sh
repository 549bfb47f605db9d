#!/usr/bin/env bash
# Build rtstap (Release) and run its test suite with CTest. GPU tests are built when
# nvcc is found and are reported as skipped on a machine without a GPU.
# usage: bash tests/run.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 900
