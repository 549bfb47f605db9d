#!/usr/bin/env bash
# run_gpu.sh: the GPU machine's script for the linalg GPU backends — the GPU tests,
# compute-sanitizer (memcheck, racecheck, synccheck on the quick test mode), the
# kernel-variant tuning driver and `rtstap bench-qr`; logs under $OUT, a short table last.
#
# Here (no GPU):  cmake --build build-gpu -j2 --target test_gpu_qr test_gpu_weights rtstap
#                 bash tests/bench/gpu/build_bench.sh            # optional: tests/bench/gpu/gpu_bench
#                 bash tests/bench/gpu/pack.sh                   # .gpubin/bin.tgz, .gpulibs.tgz
# There (device run tool, carry [".gpubin", ".gpulibs.tgz"]):
#   mkdir -p .gpulibs && tar -xzf .gpulibs.tgz -C .gpulibs &&
#   export LD_LIBRARY_PATH=$PWD/.gpulibs:$LD_LIBRARY_PATH && bash tests/bench/gpu/run_gpu.sh [STAGES]
# STAGES: any of tests tune profile bench sanitize (default: all but profile, in that order). Files under $OUT:
# device.txt tests.log sanitize.log tune.log profile.log bench.log bench.json (<= 8 come back).
set -uo pipefail
OUT=${OUT:-$PWD/out-gpu}
BIN=${GPUBIN:-$PWD/.gpubin}
mkdir -p "$OUT"
if [ -f "$BIN/bin.tgz" ]; then tar -xzf "$BIN/bin.tgz" -C "$BIN" || exit 1; fi
stages=${*:-tests tune bench sanitize}
summary=()

have() { [[ " $stages " == *" $1 "* ]]; }
# step NAME LOG TIMEOUT CMD...: run, append to LOG, remember rc and seconds
step() {
    local name=$1 log=$2 limit=$3
    shift 3
    local t0=$SECONDS
    echo "==== $name: $*" >> "$log"
    timeout "$limit" "$@" >> "$log" 2>&1
    local rc=$?
    echo "==== $name: rc=$rc, $((SECONDS - t0)) s" >> "$log"
    summary+=("$(printf '%-28s rc=%-3s %4ss' "$name" "$rc" "$((SECONDS - t0))")")
    return $rc
}

{
    date -u +%Y-%m-%dT%H:%M:%SZ
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu \
        --format=csv 2>&1
    nproc
} > "$OUT/device.txt"

if have tests; then
    step test_gpu_qr "$OUT/tests.log" 400 "$BIN/test_gpu_qr"
    step test_gpu_weights "$OUT/tests.log" 400 "$BIN/test_gpu_weights"
fi

if have tune && [ -x "$BIN/gpu_bench" ]; then
    step "gpu_bench --all" "$OUT/tune.log" 300 "$BIN/gpu_bench" --all --repeat 20
fi

if have profile && [ -x "$BIN/gpu_bench" ]; then
    ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
    for size in 240x66x128 80x16x384; do
        [ -n "$ncu" ] && step "ncu $size" "$OUT/profile.log" 120 "$ncu" -k regex:qr_reg_kernel \
            --launch-skip 2 --launch-count 2 --section WarpStateStats --section SchedulerStats \
            --section LaunchStats --section ComputeWorkloadAnalysis \
            "$BIN/gpu_bench" --sizes "$size" --repeat 1
    done
fi

if have bench; then
    rm -f "$OUT/bench.json"
    step "rtstap bench-qr" "$OUT/bench.log" 300 "$BIN/rtstap" bench-qr \
        --sizes 240x66x128,80x16x384,192x96x128,240x66x1280 --backends gpu,cublas \
        --repeat 20 --weights 16 --json "$OUT/bench.json"
fi

if have sanitize; then
    cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
    if [ -z "$cs" ]; then
        echo "compute-sanitizer not found" >> "$OUT/sanitize.log"
        summary+=("compute-sanitizer           not found")
    else
        for tool in memcheck racecheck synccheck; do
            for t in test_gpu_qr test_gpu_weights; do
                RTSTAP_GPU_QUICK=1 step "$tool $t" "$OUT/sanitize.log" ${SAN_LIMIT:-120} \
                    "$cs" --tool "$tool" --error-exitcode 9 "$BIN/$t"
            done
        done
    fi
fi

echo
echo "---- failures and sanitizer verdicts"
grep -h -E "^FAIL|ERROR SUMMARY|RACECHECK SUMMARY|cases, .* failures" "$OUT"/tests.log "$OUT"/sanitize.log 2>/dev/null | sort | uniq -c | head -40
if [ -f "$OUT/tune.log" ]; then
    echo "---- variants (gpu_bench)"
    grep -v "^====" "$OUT/tune.log" | grep -v adaptive | head -80
fi
if [ -f "$OUT/bench.log" ]; then
    echo "---- rtstap bench-qr"
    grep -v "^====" "$OUT/bench.log" | tail -14
fi
echo "---- steps"
printf '%s\n' "${summary[@]}"
