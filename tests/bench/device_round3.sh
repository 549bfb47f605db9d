#!/usr/bin/env bash
# device_round3.sh: issue 34 item 3, the QR's round 3 (tests/experiments/qr_la.cuh) on one GPU:
# accuracy (LAPACK's ratios) and times of the lookahead kernel against the dispatched FP32
# kernel (qr_tc --panel lookahead, twice), compute-sanitizer over `qr_tc --quick --panel
# lookahead` and test_gpu_apply (the apply kernel shares kernels/rtk_mma.cuh), then ncu's issue,
# pipe and stall counters of the lookahead kernel at 240x66 and 192x96 (ROUND3_NCU=0 skips
# them) and its SASS stall profile at 192x96 (ROUND3_SASS=0 skips it). Needs qr_tc
# (tests/experiments/build_tc.sh) in the pack.
# usage (on the GPU host, repository root): OUT=DIR bash tests/bench/device_round3.sh
source "$(dirname "$0")/device_common.sh"
L=$OUT/logs; mkdir -p "$L"
device_facts "$L/device.txt"
for r in 1 2; do step "qr_tc lookahead run $r" "$L/round3.log" 200 "$BIN/qr_tc" --repeat 20 --panel lookahead; done
# the apply kernel shares rtk_mma.cuh with the experiment: its test on every run
step "test_gpu_apply" "$L/tests.log" 120 "$BIN/test_gpu_apply"
for tool in memcheck racecheck synccheck; do
    step "qr_tc --quick lookahead $tool" "$L/sanitizer.log" 200 "$cs" --tool "$tool" --error-exitcode 9 \
        "$BIN/qr_tc" --quick --panel lookahead
done
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
if [ "${ROUND3_NCU:-1}" = 1 ] && [ -n "$ncu" ]; then
    for sz in 240x66x128 192x96x128; do
        step "ncu lookahead $sz" "$L/ncu_run.log" 150 "$ncu" --clock-control none --csv --page raw \
            --log-file "$L/ncu_la_$sz.csv" -k regex:"la_qr_kernel|qr_reg_kernel" -c 4 --metrics "gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__warps_eligible.avg.per_cycle_active,regex:^sm__pipe_.*_cycles_active.avg.pct_of_peak_sustained_active$,regex:^smsp__average_warps_issue_stalled_.*_per_issue_active.ratio$" \
            "$BIN/qr_tc" --repeat 1 --size "$sz" --panel lookahead
    done
    if [ "${ROUND3_SASS:-1}" = 1 ]; then
        # the 192x96 (UW = 8) build's SASS, warp-stall samples per instruction (tests/bench/sass_hot.py)
        step "ncu full 192x96" "$L/ncu_run.log" 200 "$ncu" --clock-control none --set full --import-source yes \
            -k regex:la_qr_kernel -c 1 -f -o "$L/full-la" "$BIN/qr_tc" --repeat 1 --size 192x96x128 --panel lookahead
        step "ncu sass 192x96" "$L/ncu_run.log" 60 sh -c "'$ncu' -i '$L/full-la.ncu-rep' --page source --csv --print-source sass > '$L/sass-la.csv'"
        rm -f "$L/full-la.ncu-rep"
    fi
fi
echo "---- $(head -1 "$L/device.txt"); $(grep -m1 NVIDIA "$L/device.txt"); $(grep -m1 commit "$L/device.txt")"
grep -h "FAIL\|error\|Error" "$L/round3.log" | head
grep -h "^timeline 192x96" "$L/round3.log" | tail -1
grep -h "^|" "$L/round3.log" | tail -8
grep -h "all passed\|^FAIL\|failure" "$L/tests.log"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$L/sanitizer.log" | sort | uniq -c
grep -h "tc 3xTF32" "$L/round3.log" | sort -k8 -g | tail -3
[ -f "$L/sass-la.csv" ] && python3 "$(dirname "$0")/sass_hot.py" "$L/sass-la.csv" 30 > "$L/sass-la.txt" 2>&1
printf '%s\n' "${summary[@]}"
