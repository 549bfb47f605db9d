#!/usr/bin/env bash
# device_doppler.sh: issue 34 step 2's one-pass Doppler filter (kernels/pipeline.cu
# doppler_fft_kernel: window, conversion, FFT and layout in one kernel; RTSTAP_DOPPLER_FUSED=1)
# against the load kernel + cuFFT (the default) — test_gpu_doppler (against a double
# DFT), test_gpu_engine, compute-sanitizer memcheck/racecheck/synccheck on test_gpu_doppler
# (quick) and memcheck on a resident int16 stream; `stream --resident --keep detections`
# both ways on the presets and link-bound int16 (hard); ncu of the kernels; bench.
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
step "test_gpu_doppler" "$L/tests.log" 120 "$BIN/test_gpu_doppler"
step "test_gpu_engine" "$L/tests.log" 300 "$BIN/test_gpu_engine"
for tool in memcheck racecheck synccheck; do
    step "$tool test_gpu_doppler" "$L/sanitizer.log" 120 env RTSTAP_GPU_QUICK=1 "$cs" --tool $tool --error-exitcode 9 \
        "$BIN/test_gpu_doppler"
done
step "memcheck stream" "$L/sanitizer.log" 120 "$cs" --tool memcheck --error-exitcode 9 "$BIN/rtstap" stream \
    --preset hard --resident --cpis 40 --backend gpu --format ci16 --keep detections --quiet
S="$BIN/rtstap stream --backend gpu --cpis 6000 --keep detections"
rows=()
for p in hard medium easy; do
    step "$p cufft" "$L/$p-cufft.log" 60 $S --preset $p --resident
    step "$p fused" "$L/$p-fused.log" 60 env RTSTAP_DOPPLER_FUSED=1 $S --preset $p --resident
    rows+=("$(printf '%-6s resident: cuFFT %8s  fused %8s' $p "$(rate "$L/$p-cufft.log")" "$(rate "$L/$p-fused.log")")")
done
step "hard link cufft" "$L/hard-link-cufft.log" 60 $S --preset hard --format ci16
step "hard link fused" "$L/hard-link-fused.log" 60 env RTSTAP_DOPPLER_FUSED=1 $S --preset hard --format ci16
rows+=("$(printf 'hard   int16 link: cuFFT %8s  fused %8s' "$(rate "$L/hard-link-cufft.log")" "$(rate "$L/hard-link-fused.log")")")
for v in cufft fused; do
    env=(); [ $v = fused ] && env=(RTSTAP_DOPPLER_FUSED=1)
    step "ncu $v" "$L/ncu.log" 90 env "${env[@]}" ncu --clock-control none -k regex:"doppler|fft" --launch-skip 20 \
        --launch-count 4 --section SpeedOfLight --section LaunchStats --section Occupancy --section SchedulerStats \
        --section WarpStateStats -f -o "$OUT/ncu-$v" "$BIN/rtstap" stream --preset hard --resident --cpis 40 \
        --backend gpu --keep detections --quiet
    step "ncu $v raw" "$L/ncu.log" 60 sh -c "ncu --import '$OUT/ncu-$v.ncu-rep' --page raw --csv > '$OUT/ncu-$v.csv'"
done
step "bench" "$L/bench.log" 120 "$BIN/rtstap" bench --workloads easy,medium,hard --backends gpu --cpis 1000
echo "---- $(head -1 "$L/device.txt"); $(grep -m1 NVIDIA "$L/device.txt"); $(grep -m1 commit "$L/device.txt")"
grep -h "all passed\|^FAIL\|failure" "$L/tests.log" | sort | uniq -c | head
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|SYNCCHECK SUMMARY" "$L/sanitizer.log" | head -5
printf '%s\n' "${rows[@]}"
for v in cufft fused; do echo "== ncu $v"; python3 "$(dirname "$0")/ncu_summary.py" "$OUT/ncu-$v.csv" | cut -c1-200; done
grep -h "^workload\|^easy\|^medium\|^hard" "$L/bench.log"
printf '%s\n' "${summary[@]}"
