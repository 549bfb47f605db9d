#!/usr/bin/env bash
# device_apply_mma.sh: the weight application on the tensor cores (apply_mma_kernel, the
# default for N > 16) against the register-tiled FP32 kernel (RTSTAP_APPLY_FP32=1; both
# measured 2026-11-27 09:12 UTC with the tensor-core kernel opt-in): test_gpu_apply (every kernel
# against the double reference), compute-sanitizer on it (quick), `stream --resident --keep
# detections` alternated twice a preset, ncu of both kernels. Logs under $OUT; table last.
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
step "test_gpu_apply" "$L/tests.log" 200 "$BIN/test_gpu_apply"
sanitize "$L/sanitizer.log" 120 test_gpu_apply
S="$BIN/rtstap stream --backend gpu --cpis 6000 --keep detections --resident"
rows=()
for p in hard medium easy; do
    for round in 1 2; do
        step "$p tiled #$round" "$L/$p-tiled-$round.log" 60 env RTSTAP_APPLY_FP32=1 $S --preset $p
        step "$p mma #$round" "$L/$p-mma-$round.log" 60 $S --preset $p
    done
    rows+=("$(printf '%-6s tiled/rows %s / %s | mma %s / %s' $p \
        "$(rate "$L/$p-tiled-1.log")" "$(rate "$L/$p-tiled-2.log")" "$(rate "$L/$p-mma-1.log")" "$(rate "$L/$p-mma-2.log")")")
done
for v in tiled mma; do
    env=(); [ $v = tiled ] && env=(RTSTAP_APPLY_FP32=1)
    for p in hard medium; do
        step "ncu $v $p" "$L/ncu.log" 90 env "${env[@]}" ncu --clock-control none -k regex:"apply" \
            --launch-skip 10 --launch-count 3 --section SpeedOfLight --section LaunchStats --section Occupancy \
            --section SchedulerStats --section WarpStateStats -f -o "$OUT/ncu-$v-$p" "$BIN/rtstap" stream --preset $p \
            --resident --cpis 20 --backend gpu --keep detections --quiet
        step "ncu raw $v $p" "$L/ncu.log" 60 sh -c "ncu --import '$OUT/ncu-$v-$p.ncu-rep' --page raw --csv > '$OUT/ncu-$v-$p.csv'"
    done
done
step "test_gpu_engine" "$L/tests.log" 200 "$BIN/test_gpu_engine"
report_head "$L"
grep -h "FAIL" "$L/tests.log" | head -5
grep -h "mma .*worst" "$L/tests.log" | sort -t'f' -k1 | tail -3
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$L/sanitizer.log" | sort | uniq -c
grep -h "vs double reference" "$L/tests.log" | sort | uniq -c | sort -rn | head -3
grep -h "vs double reference" "$L/tests.log" | awk '{print $7}' | sort -n | head -3
echo "stream --resident --keep detections, CPIs/s, two rounds:"
printf '%s\n' "${rows[@]}"
for v in tiled mma; do for p in hard medium; do echo "== $v $p"; python3 "$(dirname "$0")/ncu_summary.py" "$OUT/ncu-$v-$p.csv" | head -1 | cut -c1-230; done; done
printf '%s\n' "${summary[@]}" | grep -v "rc=0 " | head
