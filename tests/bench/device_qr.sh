#!/usr/bin/env bash
# device_qr.sh: the GPU machine's share of the QR-kernel work (issue 11), one device call:
# the QR and weights tests (every dispatch row forced at capacity and at an odd shape,
# line-buffered, each under its own timeout), compute-sanitizer racecheck and synccheck over
# the quick QR and weights tests, and gpu_bench --all (every variant that fits each size,
# QR alone and QR + 16 beams, cuBLAS beside them). Logs under $OUT, a short table last.
#
# Here:  bash tests/bench/gpu/build_bench.sh BUILD && bash tests/bench/pack_device.sh BUILD qr
# There: mkdir -p .gpulibs && tar -xzf .gpulibs.tgz -C .gpulibs &&
#        export LD_LIBRARY_PATH=$PWD/.gpulibs:$LD_LIBRARY_PATH &&
#        bash tests/bench/device_qr.sh [all|tests|sanitize|bench] [SIZES]
# (all can exceed one device call's 10 minutes: split it)
what=${1:-all}   # all | tests | sanitize | bench | model | verify | plan | bounds | tc
# verify: the tests (the engine's too), then memcheck, racecheck and synccheck over the quick QR and weights
# tests (every dispatch row, every fused solver; cluster rows at four CTAs): a commit's GPU
# check in one call (≈ 7 minutes, 5.5 of them racecheck)
sizes=${2:-240x66x128,192x96x128,80x16x384,96x16x384,64x24x16384,128x32x512,306x66x128,240x66x1280}
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
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
        --backends gpu --repeat 20 --sizes "${2:-306x66x128,240x66x1280,240x66x264,315x37x1698,199x19x3622,57x39x362,240x66x128,80x16x384,186x75x3495,107x27x1226,233x36x3966,169x17x3324,114x65x203,115x32x231,282x25x3001,46x12x1892}"
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
echo "---- steps"; printf '%s\n' "${summary[@]}"
tar -C "$OUT" -czf "$OUT/logs-qr.tgz" logs && rm -rf "$L"
