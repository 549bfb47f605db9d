#!/usr/bin/env bash
# device_fuse34.sh: the weight application fused with the CA detector (apply_cfar_kernel, the
# engine's path when only detections are kept) against the apply and line-detector kernels
# apart (RTSTAP_APPLY_CFAR=0): test_gpu_apply (the fused hits against apply + line detector,
# bit for bit) and test_gpu_cfar, compute-sanitizer on test_gpu_apply (quick), test_gpu_engine
# (detections with and without the output kept), `stream --resident --keep detections`
# alternated twice a preset, ncu of every kernel of a resident hard and medium CPI both ways.
# Logs under $OUT; table last.
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
step "test_gpu_apply" "$L/tests.log" 200 "$BIN/test_gpu_apply"
step "test_gpu_cfar" "$L/tests.log" 200 "$BIN/test_gpu_cfar"
sanitize "$L/sanitizer.log" 150 test_gpu_apply
S="$BIN/rtstap stream --backend gpu --cpis 6000 --keep detections --resident"
rows=()
for p in hard medium; do
    for round in 1 2; do
        step "$p apart #$round" "$L/$p-apart-$round.log" 60 env RTSTAP_APPLY_CFAR=0 $S --preset $p
        step "$p fused #$round" "$L/$p-fused-$round.log" 60 $S --preset $p
    done
    rows+=("$(printf '%-6s apart %s / %s | fused %s / %s' $p \
        "$(rate "$L/$p-apart-1.log")" "$(rate "$L/$p-apart-2.log")" "$(rate "$L/$p-fused-1.log")" "$(rate "$L/$p-fused-2.log")")")
done
grep -h "GPU:\|gpu:" "$L/hard-fused-1.log" | head -2 > "$L/describe.txt"
for v in apart fused; do
    env=(); [ $v = apart ] && env=(RTSTAP_APPLY_CFAR=0)
    for p in hard medium; do
        step "ncu $v $p" "$L/ncu.log" 90 env "${env[@]}" ncu --clock-control none -k regex:"apply|line_kernel" \
            --launch-skip 10 --launch-count 4 --section SpeedOfLight --section LaunchStats --section Occupancy \
            --section SchedulerStats --section WarpStateStats -f -o "$OUT/ncu-$v-$p" "$BIN/rtstap" stream --preset $p \
            --resident --cpis 20 --backend gpu --keep detections --quiet
        step "ncu raw $v $p" "$L/ncu.log" 60 sh -c "ncu --import '$OUT/ncu-$v-$p.ncu-rep' --page raw --csv > '$OUT/ncu-$v-$p.csv'"
    done
done
step "test_gpu_engine" "$L/tests.log" 200 "$BIN/test_gpu_engine"
report_head "$L"
grep -h "FAIL\|differ" "$L/tests.log" | head -5
grep -h "fused .*hits" "$L/tests.log" | head -3
grep -h "detections only" "$L/tests.log" | sort | uniq -c | head -4
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$L/sanitizer.log" | sort | uniq -c
echo "stream --resident --keep detections, CPIs/s, two rounds:"
printf '%s\n' "${rows[@]}"
for v in apart fused; do for p in hard medium; do echo "== $v $p"; python3 "$(dirname "$0")/ncu_summary.py" "$OUT/ncu-$v-$p.csv" | cut -c1-200; done; done
printf '%s\n' "${summary[@]}" | grep -v "rc=0 " | head
