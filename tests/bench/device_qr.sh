# device_qr.sh: the qr-* suites of tests/bench/device.sh (the QR kernels: tests, sanitizers,
# gpu_bench, the dispatch plan and model, the bounds, the tensor-core and lookahead
# experiments). Sourced by device.sh, which provides step, $L, $BIN, $R and the settings
# SIZES, BENCH_TIMEOUT, TC_SAN, TC_NCU, ROUND3_NCU, ROUND3_SASS; not run alone.
# shellcheck shell=bash disable=SC2086,SC2154
suite_qr_lookahead() {
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
    [ -f "$L/sass-la.csv" ] && python3 "$here/sass_hot.py" "$L/sass-la.csv" 30 > "$L/sass-la.txt" 2>&1
}
qr_run() { # the QR-kernel work (issue 11): what = all, tests, sanitize, bench, verify, plan, bounds, tc, model
    local what=$1
    sizes=${SIZES:-240x66x128,192x96x128,80x16x384,96x16x384,64x24x16384,128x32x512,306x66x128,240x66x1280}
    touch "$L/tests.log" "$L/sanitize.log" "$L/bench.log"
    if [ "$what" = all ] || [ "$what" = tests ] || [ "$what" = verify ]; then
        for t in test_gpu_qr test_gpu_weights; do
            step "$t" "$L/tests.log" 150 "$BIN/$t"
        done
        [ "$what" = verify ] && step test_gpu_engine "$L/tests.log" 150 "$BIN/test_gpu_engine"
    fi
    if [ "$what" = all ] || [ "$what" = sanitize ]; then
        for tool in racecheck synccheck memcheck; do
            for t in test_gpu_qr test_gpu_weights; do
                RTSTAP_GPU_QUICK=1 step "$tool $t" "$L/sanitize.log" 120 "$cs" --tool "$tool" --error-exitcode 9 "$BIN/$t"
            done
        done
    fi
    if [ "$what" = verify ]; then
        for tool in racecheck synccheck memcheck; do
            for t in test_gpu_qr test_gpu_weights; do
                lim=60; [ "$tool" = racecheck ] && lim=260 # racecheck took 144 and 200 s (2026-11-26)
                RTSTAP_GPU_QUICK=1 step "$tool $t" "$L/sanitize.log" $lim "$cs" --tool "$tool" --error-exitcode 9 "$BIN/$t"
            done
        done
    fi
    if [ "$what" = all ] || [ "$what" = tests ] || [ "$what" = bench ]; then
        step "gpu_bench --all" "$L/bench.log" "${BENCH_TIMEOUT:-240}" "$BIN/gpu_bench" --all --repeat 20 --sizes "$sizes"
    fi
    if [ "$what" = plan ]; then # fused or not (docs/kernels/journal.md "Fused or not"): the tests, every
        # variant fused and as its QR + the weight kernel at shapes where the plans differ and at 8
        # random ones (seed 20261127), and the stream at K = 306 and 240 against the fused-only plan
        for t in test_gpu_weights test_gpu_qr test_gpu_engine; do
            step "$t" "$L/tests.log" 200 "$BIN/$t"
        done
        step "bench-qr --model plan" "$L/benchqr.log" 280 "$BIN/rtstap" bench-qr --model --weights 16 \
            --backends gpu --repeat 20 --sizes "${SIZES:-306x66x128,240x66x1280,240x66x264,315x37x1698,199x19x3622,57x39x362,240x66x128,80x16x384,186x75x3495,107x27x1226,233x36x3966,169x17x3324,114x65x203,115x32x231,282x25x3001,46x12x1892}"
        S="$BIN/rtstap stream --preset hard --cpis 3000"
        for r in 1 2; do
            for d in plan fused; do
                e=; [ $d = fused ] && e=fused
                RTSTAP_QR_DISPATCH=$e step "stream hard K=306 ($d, run $r)" "$L/stream.log" 60 $S --training 306
                RTSTAP_QR_DISPATCH=$e step "stream hard K=240 ($d, run $r)" "$L/stream.log" 60 $S
            done
        done
        echo "---- bench-qr --model"; grep -v "^bench-qr" "$L/benchqr.log" | grep -v "^====" | head -150
        echo "---- stream"; grep -E "^==== stream.*: /|engine:|CPIs:" "$L/stream.log" | sed 's/^==== //; s/: \/.*//' | cut -c1-150
    fi
    if [ "$what" = bounds ]; then # what limits each target (docs/kernels/journal.md "What limits each
        # target"): the dispatched kernel, its chain alone and its update alone (qr_bounds, twice),
        # then ncu's issue, pipe and stall counters of each dispatched kernel (one launch each)
        for r in 1 2; do step "qr_bounds run $r" "$L/bounds.log" 120 "$BIN/qr_bounds" --repeat 20; done
        ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
        step "ncu qr_bounds --once" "$L/ncu.csv" 400 "$ncu" --clock-control none --csv --page raw \
            -k regex:qr_reg_kernel --metrics "gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.avg.per_cycle_active,smsp__warps_active.avg.per_cycle_active,smsp__warps_eligible.avg.per_cycle_active,smsp__inst_executed.sum,sm__inst_executed_pipe_fma.sum,sm__inst_executed_pipe_alu.sum,regex:^sm__pipe_.*_cycles_active.avg.pct_of_peak_sustained_active$,regex:^smsp__average_warps_issue_stalled_.*_per_issue_active.ratio$" \
            "$BIN/qr_bounds" --once
        echo "---- qr_bounds"; grep -v "^====" "$L/bounds.log"
        echo "---- ncu (raw csv: $L/ncu.csv)"; grep -c qr_reg_kernel "$L/ncu.csv"
        cp "$L/ncu.csv" "$OUT/ncu.csv"
    fi
    if [ "$what" = tc ]; then # issue 11 item 3: the tensor-core QR (tests/experiments/qr_tc.cu) against the
        # dispatched FP32 kernel, accuracy and time (twice), then ncu's tensor-pipe and issue counters
        for r in 1 2; do step "qr_tc run $r" "$L/tc.log" 240 "$BIN/qr_tc" --repeat 20; done
        [ -n "${TC_SAN-1}" ] && for tool in memcheck racecheck synccheck; do
            step "qr_tc --quick $tool" "$L/sanitize.log" 200 "$cs" --tool "$tool" --error-exitcode 9 "$BIN/qr_tc" --quick
        done
        ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
        # ncu (TC_NCU=1): the tensor-core kernel (3xTF32, 1xTF32; barrier and dataflow panels) and
        # the FP32 kernel at 240x66 and 192x96 x 128, one launch each on random input (the
        # program's own output goes to the log, the csv to ncu_tc.csv)
        [ -n "${TC_NCU:-}" ] && for sz in 240x66x128 192x96x128; do
            for panel in barrier dataflow; do
                step "ncu qr_tc $sz $panel" "$L/ncu_tc_run.log" 200 "$ncu" --clock-control none --csv --page raw \
                    --log-file "$L/ncu_tc_${sz}_$panel.csv" -k regex:"tc_qr_kernel|qr_reg_kernel" -c 3 --metrics "gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__warps_eligible.avg.per_cycle_active,sm__inst_executed_pipe_fma.sum,regex:^sm__pipe_.*_cycles_active.avg.pct_of_peak_sustained_active$,regex:^smsp__average_warps_issue_stalled_.*_per_issue_active.ratio$" \
                    "$BIN/qr_tc" --repeat 1 --size $sz --panel $panel
            done
        done
        echo "---- qr_tc"; grep -v "^====" "$L/tc.log" | grep -v "^accuracy.*ok$"
        grep "FAIL" "$L/tc.log" | head
        for f in "$L"/ncu_tc_*.csv; do [ -f "$f" ] && cp "$f" "$OUT/"; done
    fi
    if [ "$what" = model ]; then # the performance model (issue 11 item 5), out of sample
        # 20 random shapes (fixed seed; docs/kernels/journal.md "A predictive model"): every variant timed
        step "gpu_bench --all random" "$L/bench.log" 420 "$BIN/gpu_bench" --all --repeat 20 --sizes "$sizes"
        step "bench-qr --model" "$L/benchqr.log" 200 "$BIN/rtstap" bench-qr --model --weights 16 \
            --backends gpu,cublas --repeat 20 --sizes 80x16x384,80x16x3840,240x66x128,192x96x128,240x66x1280,120x9x3840
        for t in test_gpu_qr test_gpu_weights test_gpu_engine; do
            [ -x "$BIN/$t" ] && step "$t" "$L/tests.log" 200 "$BIN/$t"
        done
        S="$BIN/rtstap stream --keep detections"
        for d in table model; do
            RTSTAP_QR_DISPATCH=$d step "stream easy sliding 16 ($d)" "$L/stream.log" 60 $S --cpis 400 --preset easy --training-window sliding --block 16
            RTSTAP_QR_DISPATCH=$d step "stream hard 3 slots ($d)" "$L/stream.log" 60 $S --cpis 3000 --preset hard
            RTSTAP_QR_DISPATCH=$d step "stream medium sliding 16 ($d)" "$L/stream.log" 60 $S --cpis 400 --preset medium --training-window sliding --block 16
        done
        echo "---- bench-qr --model"; grep -v "^bench-qr" "$L/benchqr.log" | grep -v "^====" | head -80
        echo "---- stream"; grep -E "^==== stream.*: rtstap|CPIs:" "$L/stream.log" | sed 's/--keep.*preset/preset/' | cut -c1-160
    fi
    echo "---- verdicts"
    grep -h -E "^FAIL|RACECHECK SUMMARY|SYNCCHECK SUMMARY|ERROR SUMMARY|all passed|failure" "$L"/tests.log "$L"/sanitize.log | sort | uniq -c | sort -rn | head -20
    if [ "$what" != model ] && [ "$what" != verify ] && [ "$what" != plan ] && [ "$what" != bounds ] && [ "$what" != tc ]; then
        echo "---- gpu_bench (size, variant, QR us, QR+16 beams us, weights %, GFLOP/s)"
        grep -v "^====" "$L/bench.log" | grep -E "x[0-9]+ " | head -120
    fi
}
suite_qr_tests() { qr_run tests; }
suite_qr_sanitize() { qr_run sanitize; }
suite_qr_bench() { qr_run bench; }
suite_qr_verify() { qr_run verify; }
suite_qr_plan() { qr_run plan; }
suite_qr_model() { qr_run model; }
suite_qr_bounds() { qr_run bounds; }
suite_qr_tc() { qr_run tc; }
suite_qr() { qr_run all; }
