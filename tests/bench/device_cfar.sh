#!/usr/bin/env bash
# device_cfar.sh: issue 34 step 2's one-pass CA/GO/SO CFAR (kernels/cfar.cu line_kernel:
# each power read once, the prefix sums in shared memory) against the two passes it replaces
# (RTSTAP_CFAR_TWO_PASS=1) — test_gpu_cfar both ways (bit for bit the CPU detector),
# test_gpu_engine, compute-sanitizer memcheck and racecheck on a resident stream, then
# `stream --resident` and `bench`'s detect stage, one pass and two, alternated.
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
step "test_gpu_cfar (one pass)" "$L/tests.log" 300 "$BIN/test_gpu_cfar"
step "test_gpu_cfar (two passes)" "$L/tests.log" 300 env RTSTAP_CFAR_TWO_PASS=1 "$BIN/test_gpu_cfar"
step "test_gpu_engine" "$L/tests.log" 300 "$BIN/test_gpu_engine"
step "memcheck" "$L/sanitizer.log" 200 compute-sanitizer --tool memcheck "$BIN/rtstap" stream --preset hard \
    --resident --cpis 40 --backend gpu --keep detections --quiet
step "racecheck" "$L/sanitizer.log" 300 compute-sanitizer --tool racecheck "$BIN/rtstap" stream --preset easy \
    --resident --cpis 4 --slots 1 --backend gpu --keep detections --quiet
det() { grep -h "stage medians\|detect" "$1" | head -1; }
results=()
for preset in hard medium easy; do
    row="$(printf '%-6s' $preset)"
    for round in 1 2; do
        step "$preset two-pass #$round" "$L/$preset-two-$round.log" 90 env RTSTAP_CFAR_TWO_PASS=1 "$BIN/rtstap" stream \
            --preset $preset --cpis 6000 --keep detections --backend gpu --resident
        step "$preset one-pass #$round" "$L/$preset-one-$round.log" 90 "$BIN/rtstap" stream \
            --preset $preset --cpis 6000 --keep detections --backend gpu --resident
        row="$row two $(rate "$L/$preset-two-$round.log") one $(rate "$L/$preset-one-$round.log") |"
    done
    results+=("$row")
done
step "bench two-pass" "$L/bench-two.log" 200 env RTSTAP_CFAR_TWO_PASS=1 "$BIN/rtstap" bench --workloads medium,hard \
    --backends gpu --cpis 2000
step "bench one-pass" "$L/bench-one.log" 200 "$BIN/rtstap" bench --workloads medium,hard --backends gpu --cpis 2000
echo "---- $(head -1 "$L/device.txt"); $(grep -m1 NVIDIA "$L/device.txt"); $(grep -m1 commit "$L/device.txt")"
grep -h "passed\|FAIL\|bit for bit" "$L/tests.log" | tail -6
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$L/sanitizer.log" | head -3
echo "stream --resident --keep detections, CPIs/s (RTSTAP_CFAR_TWO_PASS=1 vs one pass):"
printf '%s\n' "${results[@]}"
echo "bench, two passes:"; grep -h "^workload\|^medium\|^hard" "$L/bench-two.log"
echo "bench, one pass:"; grep -h "^medium\|^hard" "$L/bench-one.log"
printf '%s\n' "${summary[@]}" | grep -v "rc=0 " | head
