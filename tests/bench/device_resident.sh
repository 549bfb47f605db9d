#!/usr/bin/env bash
# device_resident.sh: issue 34's compute-only measure — test_gpu_engine (its resident case:
# each slot's cube copied once, then run again from device memory, bit for bit the copied
# run's), compute-sanitizer on a resident stream, then `stream --resident` against `stream`
# (the link-bound rate) on the presets, complex64 and int16 rings, --keep detections and the
# default (weights too), alternated, and `bench` with its resident column. Logs under $OUT.
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
step "test_gpu_engine" "$L/tests.log" 300 "$BIN/test_gpu_engine"
step "memcheck stream --resident" "$L/sanitizer.log" 200 compute-sanitizer --tool memcheck --leak-check full \
    "$BIN/rtstap" stream --preset hard --resident --cpis 50 --backend gpu --format ci16 --quiet
results=()
for preset in hard medium easy; do
    for fmt in cf32 ci16; do
        for keep in detections detections,weights; do
            row="$(printf '%-6s %-4s --keep %-18s' $preset $fmt $keep)"
            for round in 1 2; do
                step "$preset $fmt $keep link #$round" "$L/$preset-$fmt-$keep-link-$round.log" 90 "$BIN/rtstap" stream \
                    --preset $preset --cpis 6000 --format $fmt --keep $keep --backend gpu
                step "$preset $fmt $keep resident #$round" "$L/$preset-$fmt-$keep-res-$round.log" 90 "$BIN/rtstap" stream \
                    --preset $preset --cpis 6000 --format $fmt --keep $keep --backend gpu --resident
                row="$row link $(rate "$L/$preset-$fmt-$keep-link-$round.log") resident $(rate "$L/$preset-$fmt-$keep-res-$round.log") |"
            done
            results+=("$row")
        done
    done
done
step "bench" "$L/bench.log" 300 "$BIN/rtstap" bench --workloads easy,medium,hard --backends gpu,cublas \
    --cpis 2000 --json "$OUT/bench.json"
echo "---- $(head -1 "$L/device.txt"); $(grep -m1 NVIDIA "$L/device.txt"); $(grep -m1 commit "$L/device.txt")"
grep -h "resident\|passed\|FAIL" "$L/tests.log" | tail -4
grep -h "ERROR SUMMARY\|LEAK SUMMARY" "$L/sanitizer.log" | head -2
printf '%s\n' "${results[@]}"
grep -h "^workload\|^easy\|^medium\|^hard" "$L/bench.log"
grep -h "stage medians\|latency ms" "$L/hard-ci16-detections-res-1.log" | head -2
printf '%s\n' "${summary[@]}" | grep -v "rc=0 " | head
