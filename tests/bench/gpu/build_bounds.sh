#!/usr/bin/env bash
# Build tests/bench/gpu/qr_bounds (the chain-only and update-only bounds of the register QR
# kernels; docs/kernels/journal.md "What limits each target") with the library's CUDA flags.
# usage: tests/bench/gpu/build_bounds.sh [BUILD_DIR]   (default build; writes BUILD_DIR/qr_bounds)
set -euo pipefail
cd "$(dirname "$0")/../../.."
build=${1:-build}
mkdir -p "$build"
"${NVCC:-nvcc}" -std=c++17 -O3 -lineinfo --expt-relaxed-constexpr -arch=sm_90 -Xptxas=-v \
    -Iinclude -Iinclude/rtstap -I"$build/generated" -Ikernels tests/bench/gpu/qr_bounds.cu -o "$build/qr_bounds" \
    2> "$build/qr_bounds.ptxas.log" || { cat "$build/qr_bounds.ptxas.log" >&2; exit 1; }
echo "build_bounds: $build/qr_bounds"
