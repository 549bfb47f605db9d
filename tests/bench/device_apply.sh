#!/usr/bin/env bash
# device_apply.sh: issue 34 step 2's apply kernel — 16 beams a thread (each snapshot entry
# loaded once per cell) against the earlier 4 (RTSTAP_APPLY_BPT=4): test_gpu_engine both
# ways, the two outputs bit for bit (run --keep-output on the presets, h5same), memcheck, then
# bench's apply stage and `stream --resident`, alternated. Logs under $OUT.
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
step "test_gpu_engine (16 beams a thread)" "$L/tests.log" 300 "$BIN/test_gpu_engine"
step "test_gpu_engine (4)" "$L/tests.log" 300 env RTSTAP_APPLY_BPT=4 "$BIN/test_gpu_engine"
W=$(mktemp -d)
for preset in hard medium easy; do
    step "run $preset (16)" "$L/same.log" 60 "$BIN/rtstap" run --preset $preset --backend gpu -o $W/$preset-16.h5 --keep-output --quiet
    step "run $preset (4)" "$L/same.log" 60 env RTSTAP_APPLY_BPT=4 "$BIN/rtstap" run --preset $preset --backend gpu -o $W/$preset-4.h5 --keep-output --quiet
    step "same $preset" "$L/same.log" 60 "$BIN/h5same" $W/$preset-4.h5 $W/$preset-16.h5 /output/iq /weights /detections
done
step "memcheck" "$L/sanitizer.log" 200 compute-sanitizer --tool memcheck "$BIN/rtstap" stream --preset hard \
    --resident --cpis 40 --backend gpu --keep detections --quiet
rate() { grep -h "CPIs:" "$1" | tail -1 | sed 's/.*: \([0-9.]*\) CPIs\/s/\1/'; }
results=()
for preset in hard medium easy; do
    row="$(printf '%-6s' $preset)"
    for round in 1 2; do
        step "$preset 4 #$round" "$L/$preset-4-$round.log" 90 env RTSTAP_APPLY_BPT=4 "$BIN/rtstap" stream \
            --preset $preset --cpis 6000 --keep detections --backend gpu --resident
        step "$preset 16 #$round" "$L/$preset-16-$round.log" 90 "$BIN/rtstap" stream \
            --preset $preset --cpis 6000 --keep detections --backend gpu --resident
        row="$row bpt4 $(rate "$L/$preset-4-$round.log") bpt16 $(rate "$L/$preset-16-$round.log") |"
    done
    results+=("$row")
done
step "bench 4" "$L/bench-4.log" 200 env RTSTAP_APPLY_BPT=4 "$BIN/rtstap" bench --workloads medium,hard --backends gpu --cpis 2000
step "bench 16" "$L/bench-16.log" 200 "$BIN/rtstap" bench --workloads medium,hard --backends gpu --cpis 2000
echo "---- $(head -1 "$L/device.txt"); $(grep -m1 NVIDIA "$L/device.txt"); $(grep -m1 commit "$L/device.txt")"
grep -h "all passed\|FAIL" "$L/tests.log" | tail -4
grep -h "same\|differ" "$L/same.log" | head -12
grep -h "ERROR SUMMARY" "$L/sanitizer.log" | head -1
echo "stream --resident --keep detections, CPIs/s:"
printf '%s\n' "${results[@]}"
echo "bench, 4 beams a thread:"; grep -h "^workload\|^medium\|^hard" "$L/bench-4.log"
echo "bench, 16:"; grep -h "^medium\|^hard" "$L/bench-16.log"
printf '%s\n' "${summary[@]}" | grep -v "rc=0 " | head
