#!/usr/bin/env bash
# Build tests/bench/gpu/qr_tc (issue 11 item 3: the tensor-core QR against the dispatched FP32
# kernel; docs/kernels/journal.md "Tensor cores") against a CUDA build of rtstap, with the link line
# CMake uses for the GPU tests (no CMakeLists change).
# usage: tests/experiments/build_tc.sh [BUILD_DIR]   (relative to the repository root; default build;
# needs test_gpu_qr built by a Makefile generator, whose link line linkLibs.rsp it reuses)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:-build}" && pwd)
src=$PWD
# test_gpu_qr's link line: the libraries after its "-o test_gpu_qr" (run from build/tests)
link=$build/tests/CMakeFiles/test_gpu_qr.dir/link.txt
[ -f "$link" ] || { echo "build_tc: $link missing: configure the build first" >&2; exit 1; }
libs=$(sed 's/.* -o test_gpu_qr //' "$link")
"${NVCC:-nvcc}" -std=c++17 -O3 -lineinfo --expt-relaxed-constexpr -arch=sm_90 -Xptxas=-v \
    -I"$src/include" -I"$src/include/rtstap" -I"$build/generated" -I"$src/linalg" -I"$src/kernels" \
    -I"$src/tests/support" -c "$src/tests/experiments/qr_tc.cu" -o "$build/qr_tc.o" \
    2> "$build/qr_tc.ptxas.log" || { cat "$build/qr_tc.ptxas.log" >&2; exit 1; }
cd "$build/tests"
g++ "$build/qr_tc.o" -o "$build/qr_tc" $libs \
    -L/usr/local/cuda/targets/x86_64-linux/lib/stubs -L/usr/local/cuda/targets/x86_64-linux/lib
echo "build_tc: $build/qr_tc"
