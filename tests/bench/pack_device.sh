#!/usr/bin/env bash
# Pack what tests/bench/device.sh needs: .gpubin/bin.txz (rtstap,
# the tests that use a GPU, the tools) and .gpulibs.tgz (their non-CUDA shared libraries);
# both git-ignored. xz -9 (a 64 MiB dictionary, so the binaries' shared CUDA code compresses
# once: 5.6 MB against 61 MB with the default -6 at d99a5c4) keeps the two under the 64 MiB
# a device call carries.
# usage: tests/bench/pack_device.sh BUILD_DIR [qr]   (qr: only what the qr-* suites run)
set -euo pipefail
cd "$(dirname "$0")/../.."
b=${1:?build dir}
bins=("$b/rtstap" "$b/tests/test_gpu_qr" "$b/tests/test_gpu_weights" "$b/tests/test_gpu_cfar"
      "$b/tests/test_gpu_engine" "$b/tests/test_gpu_apply" "$b/tests/test_gpu_doppler" "$b/tests/test_engine" "$b/tests/test_pipeline"
      "$b/tests/test_perfect" "$b/tests/test_sinr" "$b/tests/mkperfect" "$b/tests/h5shape"
      "$b/tests/mkcube" "$b/tests/h5attr" "$b/tests/h5same" "$b/tests/mkpartial"
      "$b/tests/relayout" "$b/tests/test_gpu_devices" "$b/tests/test_gpu_detect" "$b/tests/test_detector")
[ -x "$b/gpu_bench" ] && bins+=("$b/gpu_bench") # tests/bench/gpu/build_bench.sh, for device.sh qr-*
[ "${2:-}" = qr ] && bins=("$b/rtstap" "$b/tests/test_gpu_qr" "$b/tests/test_gpu_weights" "$b/tests/test_gpu_engine" "$b/gpu_bench")
[ -x "$b/qr_bounds" ] && bins+=("$b/qr_bounds") # tests/bench/gpu/build_bounds.sh, for device.sh qr-bounds
[ -x "$b/qr_tc" ] && bins+=("$b/qr_tc") # tests/experiments/build_tc.sh, for device.sh qr-tc, qr-lookahead
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "${bins[@]}" "$tmp/"
# rtstap-mpi rides along without its MPI libraries: the GPU machine's own Open MPI (4.1,
# the same ABI, libmpi.so.40) runs it with its own mpirun (device.sh mpi)
mpi_bin=()
if [ -x "$b/rtstap-mpi" ] && [ "${2:-}" != qr ]; then mpi_bin=("$b/rtstap-mpi"); fi
# the GPU backends' library, under its SONAME beside rtstap (where librtstap looks first)
if [ -e "$b/librtstap_gpu.so" ]; then
    so=$(readelf -d "$b/librtstap_gpu.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
    cp -L "$b/librtstap_gpu.so" "$tmp/$so"
fi
"${RTSTAP_SHARED:-../shared}"/gpu/bundle-libs .gpulibs.tgz "$tmp"/*
rm -rf .gpubin && mkdir -p .gpubin
[ ${#mpi_bin[@]} -gt 0 ] && cp "${mpi_bin[@]}" "$tmp/"
XZ_OPT=${XZ_OPT:--9} tar -C "$tmp" -cJf .gpubin/bin.txz .
du -ch .gpubin/bin.txz .gpulibs.tgz | tail -1
