#!/usr/bin/env bash
# device_next34.sh (branch issue34-next): one call that checks and measures the two kernels
# prepared without a GPU — apply_tiled_kernel v3 (row offsets once a block, weight copies
# without divisions) against the row kernel (RTSTAP_APPLY_ROWS=1; v2's figures are in
# docs/benchmarks.md), and doppler_fft128_kernel (the D = 128 Doppler filter in registers,
# RTSTAP_DOPPLER_FUSED=1) against the load kernel + cuFFT. Tests and compute-sanitizer
# first; then `stream --resident --keep detections` alternated; ncu of the kernels.
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
step "test_gpu_apply" "$L/tests.log" 200 "$BIN/test_gpu_apply"
step "test_gpu_doppler" "$L/tests.log" 120 "$BIN/test_gpu_doppler"
step "test_gpu_engine" "$L/tests.log" 300 "$BIN/test_gpu_engine"
step "test_gpu_engine fused" "$L/tests.log" 300 env RTSTAP_DOPPLER_FUSED=1 "$BIN/test_gpu_engine"
S="$BIN/rtstap stream --backend gpu --cpis 6000 --keep detections --resident"
rows=()
for p in hard medium easy; do
    for round in 1 2; do
        step "$p base #$round" "$L/$p-base-$round.log" 60 env RTSTAP_APPLY_ROWS=1 $S --preset $p
        step "$p apply #$round" "$L/$p-apply-$round.log" 60 $S --preset $p
        step "$p both #$round" "$L/$p-both-$round.log" 60 env RTSTAP_DOPPLER_FUSED=1 $S --preset $p
    done
    rows+=("$(printf '%-6s rows+cuFFT %s / %s | tiled+cuFFT %s / %s | tiled+fused %s / %s' $p \
        "$(rate "$L/$p-base-1.log")" "$(rate "$L/$p-base-2.log")" "$(rate "$L/$p-apply-1.log")" \
        "$(rate "$L/$p-apply-2.log")" "$(rate "$L/$p-both-1.log")" "$(rate "$L/$p-both-2.log")")")
done
step "ncu" "$L/ncu.log" 90 env RTSTAP_DOPPLER_FUSED=1 ncu --clock-control none -k regex:"apply|doppler" \
    --launch-skip 20 --launch-count 6 --section SpeedOfLight --section LaunchStats --section Occupancy \
    --section SchedulerStats --section WarpStateStats -f -o "$OUT/ncu-next" "$BIN/rtstap" stream --preset hard \
    --resident --cpis 40 --backend gpu --keep detections --quiet
step "ncu raw" "$L/ncu.log" 60 sh -c "ncu --import '$OUT/ncu-next.ncu-rep' --page raw --csv > '$OUT/ncu-next.csv'"
sanitize "$L/sanitizer.log" 80 test_gpu_apply test_gpu_doppler
report_head "$L"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|SYNCCHECK SUMMARY" "$L/sanitizer.log" | sort | uniq -c
echo "stream --resident --keep detections, CPIs/s, two rounds:"
printf '%s\n' "${rows[@]}"
python3 "$(dirname "$0")/ncu_summary.py" "$OUT/ncu-next.csv" | cut -c1-220
printf '%s\n' "${summary[@]}"
