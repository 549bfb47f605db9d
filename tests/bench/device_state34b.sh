#!/usr/bin/env bash
# device_state34b.sh: issue 34 at the session's end — the D = 128 Doppler kernel with 16-cell
# blocks (the default) against 32 (RTSTAP_DOPPLER_TILE=32), checked and measured, then the
# yardsticks for docs/benchmarks.md: `stream --resident --keep detections` (3 presets, with
# the apply kernels as dispatched and RTSTAP_APPLY_FP32=1), link-bound int16, one slot host
# to host, bench's stages and columns, ncu of every kernel of a resident hard CPI.
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
step "test_gpu_doppler" "$L/tests.log" 120 "$BIN/test_gpu_doppler"
step "test_gpu_apply" "$L/tests.log" 120 "$BIN/test_gpu_apply"
S="$BIN/rtstap stream --backend gpu --cpis 6000 --keep detections"
rows=()
for p in hard medium easy; do
    for round in 1 2; do
        step "$p t32 #$round" "$L/$p-t32-$round.log" 60 env RTSTAP_DOPPLER_TILE=32 $S --resident --preset $p
        step "$p t16 #$round" "$L/$p-t16-$round.log" 60 $S --resident --preset $p
    done
    step "$p fp32 apply" "$L/$p-fp32.log" 60 env RTSTAP_APPLY_FP32=1 $S --resident --preset $p
    step "$p resident int16" "$L/$p-res16.log" 60 $S --resident --preset $p --format ci16
    step "$p link int16" "$L/$p-link16.log" 60 $S --preset $p --format ci16
    step "$p link c64" "$L/$p-link.log" 60 $S --preset $p
    rows+=("$(printf '%-6s resident tile 32 %s / %s | tile 16 %s / %s | fp32 apply %s | int16 ring %s | link int16 %s c64 %s' $p \
        "$(rate "$L/$p-t32-1.log")" "$(rate "$L/$p-t32-2.log")" "$(rate "$L/$p-t16-1.log")" "$(rate "$L/$p-t16-2.log")" \
        "$(rate "$L/$p-fp32.log")" "$(rate "$L/$p-res16.log")" "$(rate "$L/$p-link16.log")" "$(rate "$L/$p-link.log")")")
done
lat() { grep -h "latency ms" "$1" | tail -1 | sed 's/^ *//'; }
step "hard one slot c64" "$L/hard-one.log" 60 $S --preset hard --cpis 2000 --slots 1
step "hard one slot int16" "$L/hard-one16.log" 60 $S --preset hard --cpis 2000 --slots 1 --format ci16
step "bench" "$L/bench.log" 200 "$BIN/rtstap" bench --workloads easy,medium,hard --backends gpu --cpis 2000 \
    --json "$OUT/bench.json"
step "ncu hard" "$L/ncu.log" 120 ncu --clock-control none --launch-skip 60 --launch-count 24 --section SpeedOfLight \
    --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats -f -o "$OUT/ncu-hard" \
    "$BIN/rtstap" stream --preset hard --resident --cpis 40 --backend gpu --keep detections --quiet
step "ncu raw" "$L/ncu.log" 60 sh -c "ncu --import '$OUT/ncu-hard.ncu-rep' --page raw --csv > '$OUT/ncu-hard.csv'"
step "ncu t32" "$L/ncu.log" 90 env RTSTAP_DOPPLER_TILE=32 ncu --clock-control none -k regex:doppler --launch-skip 5 \
    --launch-count 3 --section SpeedOfLight --section LaunchStats --section Occupancy --section SchedulerStats \
    --section WarpStateStats -f -o "$OUT/ncu-t32" "$BIN/rtstap" stream --preset hard --resident --cpis 20 --backend gpu \
    --keep detections --quiet
step "ncu t32 raw" "$L/ncu.log" 60 sh -c "ncu --import '$OUT/ncu-t32.ncu-rep' --page raw --csv > '$OUT/ncu-t32.csv'"
step "test_gpu_engine" "$L/tests.log" 200 "$BIN/test_gpu_engine"
sanitize "$L/sanitizer.log" 90 test_gpu_doppler
report_head "$L"
echo "CPIs/s, --keep detections, 6 000 CPIs, 3 slots:"
printf '%s\n' "${rows[@]}"
echo "hard, one slot (host to host), complex64: $(lat "$L/hard-one.log")"
echo "hard, one slot (host to host), int16:     $(lat "$L/hard-one16.log")"
grep -h "^workload\|^easy\|^medium\|^hard" "$L/bench.log"
python3 "$(dirname "$0")/ncu_summary.py" "$OUT/ncu-hard.csv" | cut -c1-150
python3 "$(dirname "$0")/ncu_summary.py" "$OUT/ncu-t32.csv" | head -1 | cut -c1-150
printf '%s\n' "${summary[@]}" | grep -v "rc=0 " | head
