#!/usr/bin/env bash
# device_step34c.sh: issue 34 step 2, the merge of the apply kernel v3 and the D = 128 Doppler
# filter as defaults, with the CFAR line kernel at 32, 64 or 128 threads a line
# (RTSTAP_CFAR_LINE_THREADS). Checks (test_gpu_cfar each way, bit for bit the CPU detector;
# test_gpu_engine as dispatched and with the old Doppler and CFAR paths; compute-sanitizer),
# then `stream --resident --keep detections` alternated: old (load + cuFFT, 32 threads a
# line) / new (as dispatched) / 64 threads a line; ncu of the CFAR variants; bench's stages
# and columns; one slot host to host. Logs under $OUT; a short table last.
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
for t in 32 64 128; do
    step "test_gpu_cfar tpl $t" "$L/tests.log" 120 env RTSTAP_CFAR_LINE_THREADS=$t "$BIN/test_gpu_cfar"
done
step "test_gpu_doppler" "$L/tests.log" 120 "$BIN/test_gpu_doppler"
step "test_gpu_apply" "$L/tests.log" 120 "$BIN/test_gpu_apply"
S="$BIN/rtstap stream --backend gpu --cpis 6000 --keep detections --resident"
rows=()
for p in hard medium easy; do
    for round in 1 2; do
        step "$p old #$round" "$L/$p-old-$round.log" 60 env RTSTAP_DOPPLER_FUSED=0 RTSTAP_CFAR_LINE_THREADS=32 $S --preset $p
        step "$p new #$round" "$L/$p-new-$round.log" 60 $S --preset $p
        step "$p tpl64 #$round" "$L/$p-t64-$round.log" 60 env RTSTAP_CFAR_LINE_THREADS=64 $S --preset $p
        step "$p cfar32 #$round" "$L/$p-t32-$round.log" 60 env RTSTAP_CFAR_LINE_THREADS=32 $S --preset $p
    done
    rows+=("$(printf '%-6s old %s / %s | new %s / %s | cfar 64 %s / %s | cfar 32 %s / %s' $p \
        "$(rate "$L/$p-old-1.log")" "$(rate "$L/$p-old-2.log")" "$(rate "$L/$p-new-1.log")" \
        "$(rate "$L/$p-new-2.log")" "$(rate "$L/$p-t64-1.log")" "$(rate "$L/$p-t64-2.log")" \
        "$(rate "$L/$p-t32-1.log")" "$(rate "$L/$p-t32-2.log")")")
done
for t in 32 64 128; do
    step "ncu cfar $t" "$L/ncu.log" 90 env RTSTAP_CFAR_LINE_THREADS=$t ncu --clock-control none -k regex:"line_kernel|doppler|apply" \
        --launch-skip 30 --launch-count 9 --section SpeedOfLight --section LaunchStats --section Occupancy \
        --section SchedulerStats --section WarpStateStats -f -o "$OUT/ncu-$t" "$BIN/rtstap" stream --preset hard \
        --resident --cpis 40 --backend gpu --keep detections --quiet
    step "ncu raw $t" "$L/ncu.log" 60 sh -c "ncu --import '$OUT/ncu-$t.ncu-rep' --page raw --csv > '$OUT/ncu-$t.csv'"
done
lat() { grep -h "latency ms" "$1" | tail -1 | sed 's/^ *//'; }
step "hard one slot c64" "$L/hard-one.log" 60 "$BIN/rtstap" stream --backend gpu --preset hard --cpis 2000 --slots 1 --keep detections
step "hard one slot int16" "$L/hard-one16.log" 60 "$BIN/rtstap" stream --backend gpu --preset hard --cpis 2000 --slots 1 --keep detections --format ci16
step "hard link int16" "$L/hard-link16.log" 60 "$BIN/rtstap" stream --backend gpu --preset hard --cpis 6000 --keep detections --format ci16
step "bench" "$L/bench.log" 200 "$BIN/rtstap" bench --workloads easy,medium,hard --backends gpu --cpis 2000 \
    --json "$OUT/bench.json"
step "test_gpu_engine" "$L/tests.log" 200 "$BIN/test_gpu_engine"
step "test_gpu_engine old paths" "$L/tests.log" 200 env RTSTAP_DOPPLER_FUSED=0 RTSTAP_CFAR_LINE_THREADS=64 "$BIN/test_gpu_engine"
for tool in memcheck racecheck synccheck; do
    step "$tool stream" "$L/sanitizer.log" 90 "$cs" --tool $tool --error-exitcode 9 "$BIN/rtstap" stream --preset easy \
        --resident --cpis 4 --slots 1 --backend gpu --keep detections --quiet
    step "$tool stream tpl64" "$L/sanitizer.log" 90 env RTSTAP_CFAR_LINE_THREADS=64 "$cs" --tool $tool --error-exitcode 9 \
        "$BIN/rtstap" stream --preset easy --resident --cpis 4 --slots 1 --backend gpu --keep detections --quiet
done
report_head "$L"
echo "stream --resident --keep detections, CPIs/s, two rounds:"
printf '%s\n' "${rows[@]}"
for t in 32 64 128; do echo "== cfar $t threads a line"; python3 "$(dirname "$0")/ncu_summary.py" "$OUT/ncu-$t.csv" | cut -c1-200; done
echo "hard, one slot (host to host), complex64: $(lat "$L/hard-one.log")"
echo "hard, one slot (host to host), int16:     $(lat "$L/hard-one16.log")"
echo "hard link int16: $(rate "$L/hard-link16.log")"
grep -h "^workload\|^easy\|^medium\|^hard" "$L/bench.log"
printf '%s\n' "${summary[@]}" | grep -v "rc=0 " | head
