#!/usr/bin/env bash
# device_mma2.sh: apply_mma_kernel v2 (each chunk's A fragments split once for the block, in
# shared memory) — test_gpu_apply, test_gpu_engine, compute-sanitizer; `stream --resident`
# against the FP32 tiled kernel (RTSTAP_APPLY_FP32=1) alternated; ncu of the apply kernel;
# and ncu's full set with source counters of the CFAR line kernel and the apply kernel (hard),
# exported per SASS instruction for tests/bench/sass_hot.py.
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
step "test_gpu_apply" "$L/tests.log" 200 "$BIN/test_gpu_apply"
sanitize "$L/sanitizer.log" 120 test_gpu_apply
S="$BIN/rtstap stream --backend gpu --cpis 6000 --keep detections --resident"
rows=()
for p in hard medium; do
    for round in 1 2; do
        step "$p fp32 #$round" "$L/$p-fp32-$round.log" 60 env RTSTAP_APPLY_FP32=1 $S --preset $p
        step "$p mma #$round" "$L/$p-mma-$round.log" 60 $S --preset $p
    done
    rows+=("$(printf '%-6s fp32 %s / %s | mma v2 %s / %s' $p \
        "$(rate "$L/$p-fp32-1.log")" "$(rate "$L/$p-fp32-2.log")" "$(rate "$L/$p-mma-1.log")" "$(rate "$L/$p-mma-2.log")")")
done
for p in hard medium; do
    step "ncu $p" "$L/ncu.log" 90 ncu --clock-control none -k regex:"apply" --launch-skip 10 --launch-count 3 \
        --section SpeedOfLight --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats \
        -f -o "$OUT/ncu-$p" "$BIN/rtstap" stream --preset $p --resident --cpis 20 --backend gpu --keep detections --quiet
    step "ncu raw $p" "$L/ncu.log" 60 sh -c "ncu --import '$OUT/ncu-$p.ncu-rep' --page raw --csv > '$OUT/ncu-$p.csv'"
done
for k in line_kernel apply_mma; do
    step "ncu full $k" "$L/ncu.log" 150 ncu --clock-control none --set full --import-source yes -k regex:$k --launch-skip 5 \
        -c 1 -f -o "$OUT/full-$k" "$BIN/rtstap" stream --preset hard --resident --cpis 20 --backend gpu --keep detections --quiet
    step "ncu sass $k" "$L/ncu.log" 60 sh -c "ncu -i '$OUT/full-$k.ncu-rep' --page source --csv --print-source sass > '$OUT/sass-$k.csv'"
    step "ncu details $k" "$L/ncu.log" 60 sh -c "ncu -i '$OUT/full-$k.ncu-rep' --page details > '$OUT/details-$k.txt'"
done
step "test_gpu_engine" "$L/tests.log" 200 "$BIN/test_gpu_engine"
report_head "$L"
echo "stream --resident --keep detections, CPIs/s, two rounds:"
printf '%s\n' "${rows[@]}"
for p in hard medium; do echo "== $p"; python3 "$(dirname "$0")/ncu_summary.py" "$OUT/ncu-$p.csv" | head -1 | cut -c1-230; done
ls -la "$OUT"/sass-*.csv
printf '%s\n' "${summary[@]}" | grep -v "rc=0 " | head
