#!/usr/bin/env bash
# device_profile.sh: issue 34's stage profile — ncu (--clock-control none: the GPU's own
# clocks) of every kernel of a resident hard and medium stream (the stages as they run with
# S CPIs in flight, graphs), summarized per kernel by ncu_summary.py: time, SM and memory
# throughput, DRAM and L2 bytes, issue activity, occupancy, registers and the top stall
# reasons. Then bench's stage medians and resident rate for the same presets.
# usage (device): OUT=... bash tests/bench/device_profile.sh [presets]   (default hard,medium)
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
presets=${1:-hard,medium}
SECTIONS=(--section SpeedOfLight --section LaunchStats --section Occupancy --section SchedulerStats
          --section WarpStateStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis)
for p in ${presets//,/ }; do
    step "ncu $p" "$L/ncu-$p.log" 240 ncu --clock-control none --launch-skip 400 --launch-count 40 \
        "${SECTIONS[@]}" -f -o "$OUT/ncu-$p" "$BIN/rtstap" stream --preset "$p" --resident --cpis 120 \
        --backend gpu --keep detections --quiet
    step "ncu $p raw" "$L/ncu-$p.log" 120 sh -c "ncu --import '$OUT/ncu-$p.ncu-rep' --page raw --csv > '$OUT/ncu-$p.csv'"
done
step "bench" "$L/bench.log" 200 "$BIN/rtstap" bench --workloads "$presets" --backends gpu --cpis 2000
echo "---- $(head -1 "$L/device.txt"); $(grep -m1 NVIDIA "$L/device.txt"); $(grep -m1 commit "$L/device.txt")"
for p in ${presets//,/ }; do
    echo "== $p"; python3 "$(dirname "$0")/ncu_summary.py" "$OUT/ncu-$p.csv" 2>&1 | tee "$OUT/summary-$p.txt"
done
grep -h "^workload\|^easy\|^medium\|^hard" "$L/bench.log"
printf '%s\n' "${summary[@]}" | grep -v "rc=0 " | head
