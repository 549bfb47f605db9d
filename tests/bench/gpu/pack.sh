#!/usr/bin/env bash
# Pack what tests/bench/gpu/run_gpu.sh needs on the GPU machine: .gpubin/bin.tgz (the GPU
# tests, rtstap, and gpu_bench when built) and .gpulibs.tgz (their non-CUDA shared
# libraries). Both paths are git-ignored; carry [".gpubin", ".gpulibs.tgz"] (about
# 45 MB of the device tool's 64 MiB).  usage: tests/bench/gpu/pack.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../../.."
build=${1:-build-gpu}
bins=("$build/tests/test_gpu_qr" "$build/tests/test_gpu_weights" "$build/rtstap")
[ -x "$build/gpu_bench" ] && bins+=("$build/gpu_bench")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "${bins[@]}" "$tmp/"
/work/shared/gpu/bundle-libs .gpulibs.tgz "$tmp"/*
rm -rf .gpubin && mkdir -p .gpubin
tar -C "$tmp" -czf .gpubin/bin.tgz .
du -ch .gpubin/bin.tgz .gpulibs.tgz | tail -1
