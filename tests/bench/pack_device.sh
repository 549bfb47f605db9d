#!/usr/bin/env bash
# Pack what tests/bench/device_all.sh and device_engine.sh need: .gpubin/bin.tgz (rtstap, the tests it runs,
# mkperfect) and .gpulibs.tgz (their non-CUDA shared libraries); both git-ignored.
# usage: tests/bench/pack_device.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
b=${1:?build dir}
bins=("$b/rtstap" "$b/tests/test_gpu_qr" "$b/tests/test_gpu_weights" "$b/tests/test_gpu_cfar"
      "$b/tests/test_gpu_engine" "$b/tests/test_engine"
      "$b/tests/test_pipeline" "$b/tests/test_perfect" "$b/tests/mkperfect")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "${bins[@]}" "$tmp/"
"${RTSTAP_SHARED:-../shared}"/gpu/bundle-libs .gpulibs.tgz "$tmp"/*
rm -rf .gpubin && mkdir -p .gpubin
tar -C "$tmp" -czf .gpubin/bin.tgz .
du -ch .gpubin/bin.tgz .gpulibs.tgz | tail -1
