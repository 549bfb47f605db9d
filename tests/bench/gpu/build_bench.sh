#!/usr/bin/env bash
# Build tests/bench/gpu/gpu_bench (the kernel-variant tuning driver) against a CUDA build of
# rtstap, with the link line CMake uses for the GPU tests (no CMakeLists change).
# usage: tests/bench/gpu/build_bench.sh [BUILD_DIR]   (default build-gpu; needs test_gpu_qr built)
set -euo pipefail
cd "$(dirname "$0")/../../.."
build=$(cd "${1:-build-gpu}" && pwd)
src=$PWD
# test_gpu_qr's link line: the libraries after its "-o test_gpu_qr" (run from build/tests)
link=$build/tests/CMakeFiles/test_gpu_qr.dir/link.txt
[ -f "$link" ] || { echo "build_bench: $link missing: configure the build first" >&2; exit 1; }
libs=$(sed 's/.* -o test_gpu_qr //' "$link")
gcc -std=c11 -O2 -Wall -Wextra -Wno-unused-parameter -fopenmp -D_GNU_SOURCE -DRTSTAP_HAVE_CUDA=1 \
    -I"$src/include" -I"$src/include/rtstap" -I"$build/generated" -I"$src/linalg" -I"$src/kernels" \
    -I/usr/local/cuda/include \
    -c "$src/tests/bench/gpu/gpu_bench.c" -o "$build/gpu_bench.o"
cd "$build/tests"
g++ "$build/gpu_bench.o" -o "$build/gpu_bench" $libs \
    -L/usr/local/cuda/targets/x86_64-linux/lib/stubs -L/usr/local/cuda/targets/x86_64-linux/lib
echo "build_bench: $build/gpu_bench"
