#!/usr/bin/env bash
# device_recordings.sh: issue 31's table — recorded data through the engine, hard preset,
# 480-CPI recordings in /dev/shm (page cache, no disk): complex64 and int16 interleaved
# (scale 1/256), `stream --input` and `run --input` (weights and detections written), the
# reader threads 1..N, against the pinned replay and plain parallel reads; the packed build
# and, when given, a reference rtstap (REF.txz) in the same call. Logs under $OUT, a table.
# Here:  bash tests/bench/pack_device.sh BUILD [; tar -cJf .gpuref.txz -C REF_BUILD rtstap]
# There: (device_engine.sh's header) && bash tests/bench/device_recordings.sh [.gpuref.txz]
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
ref=""
if [ -n "${1:-}" ]; then
    mkdir -p "$BIN/ref" && tar -xJf "$1" -C "$BIN/ref" && ref=$BIN/ref/rtstap
fi
new=$BIN/rtstap
D=/dev/shm/rtstap-rec
mkdir -p $D
step "gen 480 CPIs" "$L/gen.log" 200 "$new" gen --preset hard --cpis 480 --no-clutter --no-jammers --seed 3 \
    --target 200:0:40:0 -o $D/c64.h5 -f --quiet
step "relayout int16" "$L/gen.log" 200 "$BIN/relayout" $D/c64.h5 $D/i16.h5 C,P,R ds i16
ls -la $D >> "$L/gen.log"
S="stream --preset hard --slots 3 --backend gpu"
rate() { grep -h "CPIs:" "$1" | tail -1 | sed 's/.*: \([0-9.]*\) CPIs\/s/\1/'; }
row() { # NAME LOG: CPIs/s and the reading line
    printf '%-44s %10s  %s\n' "$1" "$(rate "$2")" "$(grep -h "reading:" "$2" | tail -1 | cut -c3-150)"
}
runrate() { grep -h "CPIs/s over" "$1" | tail -1 | sed 's/^ *//' | cut -c1-60; }
results=()
step "new replay" "$L/new-replay.log" 60 "$new" $S --cpis 4000
results+=("$(row "new: stream replay (pinned ring)" "$L/new-replay.log")")
for f in c64 i16; do
    if [ -n "$ref" ]; then
        step "ref stream $f" "$L/ref-stream-$f.log" 120 "$ref" $S --input $D/$f.h5 --cpis 4800
        results+=("$(row "ref 5db9558: stream --input $f" "$L/ref-stream-$f.log")")
    fi
    for n in 1 16; do
        step "new stream $f readers $n" "$L/new-stream-$f-$n.log" 120 "$new" $S --input $D/$f.h5 --cpis 4800 --readers $n
        results+=("$(row "new: stream --input $f --readers $n" "$L/new-stream-$f-$n.log")")
    done
    step "new stream $f default" "$L/new-stream-$f.log" 120 "$new" $S --input $D/$f.h5 --cpis 4800 --json "$L/new-stream-$f.json" -f
    results+=("$(row "new: stream --input $f (default readers)" "$L/new-stream-$f.log")")
    for who in ref new; do
        b=$new; [ $who = ref ] && b=$ref
        [ -z "$b" ] && continue
        step "$who run $f" "$L/$who-run-$f.log" 200 "$b" run --input $D/$f.h5 -o $D/o-$who-$f.h5 -f --backend gpu
        results+=("$(printf '%-44s %s' "$who: run --input $f" "$(runrate "$L/$who-run-$f.log")")")
        grep -h "reader:" "$L/$who-run-$f.log" | tail -1 >> "$L/summary-run.txt"
    done
done
if [ -n "$ref" ]; then
    step "same results c64" "$L/same.log" 60 "$BIN/h5same" $D/o-ref-c64.h5 $D/o-new-c64.h5 /weights /detections
    step "same results i16" "$L/same.log" 60 "$BIN/h5same" $D/o-ref-i16.h5 $D/o-new-i16.h5 /weights /detections
fi
rm -rf $D
echo "---- $(head -1 "$L/device.txt"); $(grep -m1 NVIDIA "$L/device.txt")"
printf '%s\n' "${results[@]}"
cat "$L/summary-run.txt" 2>/dev/null
grep -h "same\|differ" "$L/same.log" 2>/dev/null | head
printf '%s\n' "${summary[@]}"
