#!/usr/bin/env bash
# device_samples.sh: issue 31's native sample width on the GPU machine — the engine's integer
# paths against its complex64 path (test_engine: every backend, bit for bit; the CLI: an
# int16 recording through the link as stored against --host-decode), memcheck of the int16
# path, then the table: stream replay of a cf32/ci16/ci8 ring, 480-CPI recordings in
# /dev/shm (complex64; int16 interleaved as recorders write it, scale 1/256) through
# `stream --input` and `run --input` (--keep detections,weights and detections), with the
# reference rtstap (REF.txz, optional) in the same call. Logs under $OUT, a table last.
# Here:  bash tests/bench/pack_device.sh BUILD
# There: (device_engine.sh's header) && bash tests/bench/device_samples.sh [.gpuref.txz]
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
ref=""
if [ -n "${1:-}" ]; then
    mkdir -p "$BIN/ref" && tar -xJf "$1" -C "$BIN/ref" && ref=$BIN/ref/rtstap
fi
new=$BIN/rtstap
step "test_engine (integer paths on every backend)" "$L/tests.log" 240 "$BIN/test_engine"
step "test_gpu_engine" "$L/tests.log" 240 "$BIN/test_gpu_engine"
step "memcheck stream ci16" "$L/memcheck.log" 240 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$new" stream --preset hard --format ci16 --cpis 12 --backend gpu --no-graphs --quiet
S="stream --preset hard --slots 3 --backend gpu"
copyin() { grep -h "copy: in" "$1" | tail -1 | sed 's/^ *//' | cut -c1-60; }
results=()
for f in cf32 ci16 ci8; do
    step "new replay $f" "$L/new-replay-$f.log" 90 "$new" $S --cpis 6000 --format $f
    results+=("$(printf '%-46s %8s  %s' "new: stream replay --format $f" "$(rate "$L/new-replay-$f.log")" "$(copyin "$L/new-replay-$f.log")")")
done
D=/dev/shm/rtstap-rec
recordings $D "$L/gen.log"
srow() { printf '%-46s %8s  %s' "$1" "$(rate "$2")" "$(grep -h "reading:" "$2" | tail -1 | cut -c3-110)"; }
for f in c64 i16; do
    if [ -n "$ref" ]; then
        step "ref stream $f" "$L/ref-stream-$f.log" 120 "$ref" $S --input $D/$f.h5 --cpis 4800
        results+=("$(srow "ref 5db9558: stream --input $f" "$L/ref-stream-$f.log")")
    fi
    step "new stream $f" "$L/new-stream-$f.log" 120 "$new" $S --input $D/$f.h5 --cpis 4800
    results+=("$(srow "new: stream --input $f" "$L/new-stream-$f.log")")
done
step "new stream i16 host-decode" "$L/new-stream-i16d.log" 120 "$new" $S --input $D/i16.h5 --cpis 4800 --host-decode
results+=("$(srow "new: stream --input i16 --host-decode" "$L/new-stream-i16d.log")")
runrow() { printf '%-46s %s | %s' "$1" "$(grep -h "CPIs/s over" "$2" | tail -1 | sed 's/^ *//' | cut -c1-40)" \
    "$(grep -h "rates, CPIs/s" "$2" | tail -1 | sed 's/^ *rates, CPIs.s: //' | cut -c1-150)"; }
for f in c64 i16; do
    if [ -n "$ref" ]; then
        step "ref run $f" "$L/ref-run-$f.log" 200 "$ref" run --input $D/$f.h5 -o $D/o-ref-$f.h5 -f --backend gpu
        results+=("$(printf '%-46s %s' "ref 5db9558: run --input $f" "$(grep -h "CPIs/s over" "$L/ref-run-$f.log" | tail -1 | sed 's/^ *//' | cut -c1-40)")")
    fi
    for keep in detections,weights detections; do
        step "new run $f $keep" "$L/new-run-$f-$keep.log" 200 "$new" run --input $D/$f.h5 -o $D/o-new-$f-$keep.h5 -f --backend gpu --keep $keep
        results+=("$(runrow "new: run --input $f --keep $keep" "$L/new-run-$f-$keep.log")")
    done
done
step "new run i16 host-decode" "$L/new-run-i16d.log" 200 "$new" run --input $D/i16.h5 -o $D/o-new-i16d.h5 -f --backend gpu
results+=("$(runrow "new: run --input i16 --host-decode" "$L/new-run-i16d.log")")
# the GPU's int16 path against its complex64 path (the host's decoding), through the CLI
step "same: i16 stored vs host-decode" "$L/same.log" 60 "$BIN/h5same" $D/o-new-i16-detections,weights.h5 $D/o-new-i16d.h5 /weights /detections
if [ -n "$ref" ]; then
    step "same: ref vs new c64" "$L/same.log" 60 "$BIN/h5same" $D/o-ref-c64.h5 $D/o-new-c64-detections,weights.h5 /weights /detections
    step "same: ref vs new i16" "$L/same.log" 60 "$BIN/h5same" $D/o-ref-i16.h5 $D/o-new-i16-detections,weights.h5 /weights /detections
fi
rm -rf $D
echo "---- $(head -1 "$L/device.txt"); $(grep -m1 NVIDIA "$L/device.txt"); $(grep -m1 commit "$L/device.txt")"
grep -h "passed\|FAIL\|failure" "$L/tests.log" | tail -6
grep -h "ERROR SUMMARY" "$L/memcheck.log" | tail -1
printf '%s\n' "${results[@]}"
grep -h "same\|differ" "$L/same.log" 2>/dev/null | head
printf '%s\n' "${summary[@]}"
