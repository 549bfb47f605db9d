#!/usr/bin/env bash
# CTest gpu_tools_build (CUDA builds): the GPU machine's measurement tools, which are not
# tests (they need a GPU and measure), must keep compiling against the library: gpu_bench
# (build_bench.sh), qr_bounds (build_bounds.sh) and qr_tc (tests/experiments/build_tc.sh), built into BUILD_DIR
# as the device scripts build them.
# usage: tests/bench/gpu/build_tools.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")"
b=${1:?build dir}
bash build_bench.sh "$b"
bash build_bounds.sh "$b"
bash ../../experiments/build_tc.sh "$b"
