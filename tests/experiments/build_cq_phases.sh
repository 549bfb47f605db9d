#!/usr/bin/env bash
# Build tests/experiments/cq_phases.cu (issue 47: the CholeskyQR2 kernel's time by phase) as
# BUILD_DIR/NAME, a standalone program (the CUDA runtime linked statically), with any extra
# nvcc flags (a variant's -DRTK_CQ_... switches; -DRTK_CQ1_ENVSEL: the one-pass kernel's
# variants picked at run time by RTK_CQ1=<PAD><G3><CH>).
# usage: tests/experiments/build_cq_phases.sh [BUILD_DIR] [NAME] [NVCC FLAGS...]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
name=${2:-cq_phases}
shift $(($# >= 2 ? 2 : $#))
"${NVCC:-nvcc}" -std=c++17 -O3 -lineinfo -arch=sm_90 -Xptxas=-v -Ikernels -Iinclude -Iinclude/rtstap \
    "$@" tests/experiments/cq_phases.cu -o "$build/$name" 2> "$build/$name.ptxas.log" ||
    { cat "$build/$name.ptxas.log" >&2; exit 1; }
grep -A4 -E "Compiling entry function .*cholqr[12]_kernel" "$build/$name.ptxas.log" | grep -o "Used [0-9]* registers.*" || true
echo "build_cq_phases: $build/$name"
