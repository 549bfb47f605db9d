# shellcheck shell=bash
# device_common.sh: device.sh's library (sourced, not run). Sets OUT (default ./out-device)
# and BIN (.gpubin, unpacked from bin.txz), exports RTSTAP_SOURCE_DIR, and defines
#   step NAME LOG LIMIT CMD...  run CMD under `timeout LIMIT`, line-buffered, appending its
#                               output to LOG between "==== NAME" lines, and add a line
#                               (name, exit status, seconds) to the summary array;
#   device_facts FILE           date, GPU, clocks, CPIs and `rtstap --version` into FILE;
#   recordings, sanitize, report_head, alternate, ncu_kernels, ncu_table: below.
set -uo pipefail
OUT=${OUT:-$PWD/out-device}
BIN=$PWD/.gpubin
mkdir -p "$OUT"
tar -xJf "$BIN/bin.txz" -C "$BIN" || exit 1
export RTSTAP_SOURCE_DIR=$PWD
summary=()
# compute-sanitizer (on PATH or in the toolkit); rate LOG: the CPIs/s of a stream's report
# shellcheck disable=SC2012 # a glob over the toolkits, first match
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
# (i16.h5) — for device.sh's recordings, samples, devices and mpi suites
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
# alternate TAG PRESETS VARIANT...: `$S --preset P` (S set by the caller) under each VARIANT,
# NAME:ENV (ENV: VAR=VALUE words, or nothing: as dispatched), the variants alternated twice a
# preset so that drift shows as spread; one row a preset in the rows array
# shellcheck disable=SC2086 # $S is a command line
alternate() {
    local tag=$1 presets=$2 p round v row envs; shift 2
    for p in $presets; do
        row=$(printf '%-10s %-6s' "$tag" "$p")
        for round in 1 2; do
            for v in "$@"; do
                read -ra envs <<< "${v#*:}"
                step "$tag $p ${v%%:*} #$round" "$L/$tag-$p-${v%%:*}-$round.log" 60 env "${envs[@]}" $S --preset "$p"
            done
        done
        for v in "$@"; do
            row="$row | ${v%%:*} $(rate "$L/$tag-$p-${v%%:*}-1.log") / $(rate "$L/$tag-$p-${v%%:*}-2.log")"
        done
        rows+=("$row")
    done
}
# ncu_kernels NAME REGEX SKIP COUNT PRESET CPIS [ENV]: ncu's sections (the GPU's own clocks)
# over the kernels REGEX matches in a resident stream, under ENV (VAR=VALUE words);
# the report and its raw page as $OUT/ncu-NAME.ncu-rep and .csv; ncu_table NAME [LINES] prints
# ncu_summary.py's table of it
ncu_kernels() {
    local name=$1 re=$2 skip=$3 count=$4 p=$5 cpis=$6 envs
    read -ra envs <<< "${7:-}"
    step "ncu $name" "$L/ncu.log" 120 env "${envs[@]}" ncu --clock-control none -k "regex:$re" --launch-skip "$skip" \
        --launch-count "$count" --section SpeedOfLight --section LaunchStats --section Occupancy \
        --section SchedulerStats --section WarpStateStats -f -o "$OUT/ncu-$name" "$BIN/rtstap" stream --preset "$p" \
        --resident --cpis "$cpis" --backend gpu --keep detections --quiet
    step "ncu raw $name" "$L/ncu.log" 60 sh -c "ncu --import '$OUT/ncu-$name.ncu-rep' --page raw --csv > '$OUT/ncu-$name.csv'"
}
ncu_table() {
    echo "== ncu $1"
    python3 "$(dirname "${BASH_SOURCE[0]}")/ncu_summary.py" "$OUT/ncu-$1.csv" | head -"${2:-40}" | cut -c1-200
}
