# device_common.sh: what the GPU-machine scripts (device_engine.sh, device_qr.sh,
# device_all.sh, device_samples.sh, device_devices.sh: `recordings` below) share; sourced, not run. Sets OUT (default ./out-device) and BIN (.gpubin,
# unpacked from bin.txz), exports RTSTAP_SOURCE_DIR, and defines
#   step NAME LOG LIMIT CMD...  run CMD under `timeout LIMIT`, line-buffered, appending its
#                               output to LOG between "==== NAME" lines, and add a line
#                               (name, exit status, seconds) to the summary array;
#   device_facts FILE           date, GPU, clocks, CPUs and `rtstap --version` into FILE.
set -uo pipefail
OUT=${OUT:-$PWD/out-device}
BIN=$PWD/.gpubin
mkdir -p "$OUT"
tar -xJf "$BIN/bin.txz" -C "$BIN" || exit 1
export RTSTAP_SOURCE_DIR=$PWD
summary=()
# compute-sanitizer (on PATH or in the toolkit); rate LOG: the CPIs/s of a stream's report
cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
rate() { grep -h "CPIs:" "$1" | tail -1 | sed 's/.*: \([0-9.]*\) CPIs\/s/\1/'; }
step() {
    local name=$1 log=$2 limit=$3; shift 3
    local t0=$SECONDS
    echo "==== $name: $*" >> "$log"
    timeout "$limit" stdbuf -oL -eL "$@" >> "$log" 2>&1
    local rc=$?
    echo "==== $name: rc=$rc" >> "$log"
    summary+=("$(printf '%-44s rc=%-3s %4ss' "$name" "$rc" "$((SECONDS - t0))")")
}
# recordings DIR LOG: the hard preset's 480-CPI recordings in DIR — complex64 as gen writes
# it (c64.h5) and interleaved int16, scale 1/256, (cpi, C, P, R, iq) as digitizers write it
# (i16.h5) — for device_samples.sh and device_devices.sh
recordings() {
    mkdir -p "$1"
    step "gen 480 CPIs" "$2" 200 "$BIN/rtstap" gen --preset hard --cpis 480 --no-clutter --no-jammers \
        --seed 3 --target 200:0:40:0 -o "$1/c64.h5" -f --quiet
    step "relayout int16" "$2" 200 "$BIN/relayout" "$1/c64.h5" "$1/i16.h5" C,P,R ds i16
    ls -la "$1" >> "$2"
}
sanitize() {
    local log=$1 limit=$2 tool t; shift 2
    for tool in memcheck racecheck synccheck; do
        for t in "$@"; do
            step "$tool $t" "$log" "$limit" env RTSTAP_GPU_QUICK=1 "$cs" --tool $tool --error-exitcode 9 "$BIN/$t"
        done
    done
}
report_head() {
    echo "---- $(head -1 "$1/device.txt"); $(grep -m1 NVIDIA "$1/device.txt"); $(grep -m1 commit "$1/device.txt")"
    grep -h "all passed\|^FAIL\|failure" "$1/tests.log" | sort | uniq -c | head
    [ -f "$1/sanitizer.log" ] && grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$1/sanitizer.log" | sort | uniq -c
    return 0
}
device_facts() {
    { date -u +%Y-%m-%dT%H:%M:%SZ
      nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
      nproc
      "$BIN/rtstap" --version; } > "$1" 2>&1
}
