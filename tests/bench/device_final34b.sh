#!/usr/bin/env bash
# device_final34b.sh: issue 34's targets re-measured with the apply fused with the detector
# (the engine's default when only detections are kept): `stream` hard with int16 over the
# link and resident at 3 and 4 slots, medium resident, one slot with int16 (the single-CPI
# latency), alternated twice; then ncu of every kernel of a resident hard CPI (the device time
# a CPI, ncu_summary.py's sum). Logs under $OUT; table last.
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
S="$BIN/rtstap stream --backend gpu --cpis 6000 --keep detections"
runs=("hard-ci16-3:--preset hard --format ci16 --slots 3" "hard-ci16-4:--preset hard --format ci16 --slots 4"
      "hard-res-3:--preset hard --resident --slots 3" "hard-res-4:--preset hard --resident --slots 4"
      "medium-res-3:--preset medium --resident --slots 3" "hard-ci16-1:--preset hard --format ci16 --slots 1")
for round in 1 2; do
    for r in "${runs[@]}"; do
        step "${r%%:*} #$round" "$L/${r%%:*}-$round.log" 60 $S ${r#*:}
    done
done
step "ncu hard" "$L/ncu.log" 200 ncu --clock-control none --launch-skip 200 --launch-count 20 --section SpeedOfLight \
    --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats -f -o "$OUT/ncu-hard" \
    "$BIN/rtstap" stream --preset hard --resident --cpis 60 --backend gpu --keep detections --quiet
step "ncu raw" "$L/ncu.log" 60 sh -c "ncu --import '$OUT/ncu-hard.ncu-rep' --page raw --csv > '$OUT/ncu-hard.csv'"
echo "---- $(head -1 "$L/device.txt"); $(grep -m1 NVIDIA "$L/device.txt"); $(grep -m1 commit "$L/device.txt")"
grep -h "engine:\|GPU:" "$L/hard-res-3-1.log" | head -1
for r in "${runs[@]}"; do
    n=${r%%:*}
    printf '%-14s %s / %s   latency %s\n' "$n" "$(rate "$L/$n-1.log")" "$(rate "$L/$n-2.log")" \
        "$(grep -h "latency" "$L/$n-1.log" | head -1 | cut -c1-120)"
done
python3 "$(dirname "$0")/ncu_summary.py" "$OUT/ncu-hard.csv" | cut -c1-200
printf '%s\n' "${summary[@]}" | grep -v "rc=0 " | head
