#!/usr/bin/env bash
# device_final34.sh: the review fixes of the session's kernels (the TF32 split clamped below
# infinity, the CFAR grid check, the apply description, no cuFFT plan where the Doppler filter
# runs in one kernel) checked and measured: the GPU tests, compute-sanitizer, `stream
# --resident` against the FP32 apply alternated, ncu of the apply kernel. Table last.
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
for t in test_gpu_apply test_gpu_doppler test_gpu_cfar; do step "$t" "$L/tests.log" 200 "$BIN/$t"; done
sanitize "$L/sanitizer.log" 120 test_gpu_apply test_gpu_doppler
S="$BIN/rtstap stream --backend gpu --cpis 6000 --keep detections --resident"
rows=()
for p in hard medium; do
    for round in 1 2; do
        step "$p fp32 #$round" "$L/$p-fp32-$round.log" 60 env RTSTAP_APPLY_FP32=1 $S --preset $p
        step "$p mma #$round" "$L/$p-mma-$round.log" 60 $S --preset $p
    done
    rows+=("$(printf '%-6s fp32 %s / %s | tensor cores %s / %s' $p \
        "$(rate "$L/$p-fp32-1.log")" "$(rate "$L/$p-fp32-2.log")" "$(rate "$L/$p-mma-1.log")" "$(rate "$L/$p-mma-2.log")")")
done
step "ncu hard" "$L/ncu.log" 90 ncu --clock-control none -k regex:"apply|doppler" --launch-skip 10 --launch-count 6 \
    --section SpeedOfLight --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats \
    -f -o "$OUT/ncu-hard" "$BIN/rtstap" stream --preset hard --resident --cpis 20 --backend gpu --keep detections --quiet
step "ncu raw" "$L/ncu.log" 60 sh -c "ncu --import '$OUT/ncu-hard.ncu-rep' --page raw --csv > '$OUT/ncu-hard.csv'"
step "test_gpu_engine" "$L/tests.log" 200 "$BIN/test_gpu_engine"
report_head "$L"
grep -h "engine:" "$L/hard-mma-1.log" "$L/hard-fp32-1.log"
grep -h "memory: engine" "$L/hard-mma-1.log"
echo "stream --resident --keep detections, CPIs/s, two rounds:"
printf '%s\n' "${rows[@]}"
python3 "$(dirname "$0")/ncu_summary.py" "$OUT/ncu-hard.csv" | cut -c1-200
printf '%s\n' "${summary[@]}" | grep -v "rc=0 " | head
