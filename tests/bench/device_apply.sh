#!/usr/bin/env bash
# device_apply.sh: issue 34 step 2's register-tiled apply kernel (kernels/pipeline.cu
# apply_tiled_kernel) and the Doppler load without 64-bit divisions, against the apply
# kernel they replace (RTSTAP_APPLY_ROWS=1) — test_gpu_apply (both kernels against the
# double reference), test_gpu_engine, compute-sanitizer memcheck/racecheck/synccheck on
# test_gpu_apply and memcheck on a resident stream; then `stream --resident --keep
# detections` rows / tiled alternated (PRESETS, default hard medium), bench, and ncu of the new
# kernels (--clock-control none). Logs under $OUT.
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
step "test_gpu_apply" "$L/tests.log" 300 "$BIN/test_gpu_apply"
step "test_gpu_engine" "$L/tests.log" 300 "$BIN/test_gpu_engine"
for tool in memcheck racecheck synccheck; do
    step "$tool test_gpu_apply" "$L/sanitizer.log" 200 env RTSTAP_GPU_QUICK=1 "$cs" --tool $tool --error-exitcode 9 \
        "$BIN/test_gpu_apply"
done
step "memcheck stream" "$L/sanitizer.log" 200 "$cs" --tool memcheck --error-exitcode 9 "$BIN/rtstap" stream \
    --preset hard --resident --cpis 40 --backend gpu --format ci16 --keep detections --quiet
results=()
for preset in ${PRESETS:-hard medium}; do
    row="$(printf '%-6s' $preset)"
    for round in 1 2; do
        step "$preset rows #$round" "$L/$preset-rows-$round.log" 90 env RTSTAP_APPLY_ROWS=1 "$BIN/rtstap" stream \
            --preset $preset --cpis 6000 --keep detections --backend gpu --resident
        step "$preset tiled #$round" "$L/$preset-tiled-$round.log" 90 "$BIN/rtstap" stream \
            --preset $preset --cpis 6000 --keep detections --backend gpu --resident
        row="$row rows $(rate "$L/$preset-rows-$round.log") tiled $(rate "$L/$preset-tiled-$round.log") |"
    done
    results+=("$row")
done
step "bench tiled" "$L/bench-tiled.log" 200 "$BIN/rtstap" bench --workloads easy,medium,hard,perfect-large \
    --backends gpu --cpis 2000
for p in ${NCU_PRESETS:-hard}; do
    step "ncu $p" "$L/ncu-$p.log" 120 ncu --clock-control none -k regex:"apply|doppler_load" --launch-skip 20 \
        --launch-count 4 --section SpeedOfLight --section LaunchStats --section Occupancy --section SchedulerStats \
        --section WarpStateStats -f -o "$OUT/ncu-apply-$p" "$BIN/rtstap" stream --preset $p --resident --cpis 60 \
        --backend gpu --keep detections --quiet
    step "ncu $p raw" "$L/ncu-$p.log" 60 sh -c "ncu --import '$OUT/ncu-apply-$p.ncu-rep' --page raw --csv > '$OUT/ncu-apply-$p.csv'"
done
echo "---- $(head -1 "$L/device.txt"); $(grep -m1 NVIDIA "$L/device.txt"); $(grep -m1 commit "$L/device.txt")"
grep -h "all passed\|^FAIL\|failure" "$L/tests.log" | sort | uniq -c | head
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|SYNCCHECK SUMMARY" "$L/sanitizer.log" | head -5
echo "stream --resident --keep detections, CPIs/s (RTSTAP_APPLY_ROWS=1 vs the tiled kernel):"
printf '%s\n' "${results[@]}"
echo "bench:"; grep -h "^workload\|^easy\|^medium\|^hard\|^perfect" "$L/bench-tiled.log"
for p in ${NCU_PRESETS:-hard}; do echo "== ncu $p"; python3 "$(dirname "$0")/ncu_summary.py" "$OUT/ncu-apply-$p.csv" | cut -c1-230; done
printf '%s\n' "${summary[@]}"
