# device_cholqr.sh: issue 47's suites of tests/bench/device.sh (the CholeskyQR factors:
# cholqr2, cholqr, engine-qr, cqfuse, cqauto). Sourced by device.sh, which provides step, report_head, $L,
# $BIN, $R, $OUT, $cs and the settings CQ_SAN, CQ_NCU, EQ_SAN, EQ_RACE; not run alone.
# shellcheck shell=bash disable=SC2086,SC2154
# factor_table DIR "F1 F2 ..." TAG=NAME...: a markdown table of the streams' CPIs/s, a row a TAG
# and a column a factor F, from DIR/TAG-F-1.json and DIR/TAG-F-2.json ("run 1 / run 2"; 0 when
# missing); one_cpi DIR F...: p50 and p99 of DIR/one-F.json
factor_table() {
    python3 - "$@" <<'PY'
import json, sys
L, fs, rows = sys.argv[1], sys.argv[2].split(), [a.split("=", 1) for a in sys.argv[3:]]
def rate(p):
    try:
        d = json.load(open(p)); return d.get("cpis_per_s") or d.get("rate") or 0
    except Exception: return 0
print("| workload | " + " | ".join(f.replace("-", " ") for f in fs) + " |")
for tag, name in rows:
    print(f"| {name} | " + " | ".join(" / ".join("%.0f" % rate(f"{L}/{tag}-{f}-{r}.json") for r in (1, 2)) for f in fs) + " |")
PY
}
one_cpi() {
    python3 - "$@" <<'PY'
import json, sys
for f in sys.argv[2:]:
    try:
        lat = json.load(open(f"{sys.argv[1]}/one-{f}.json")).get("latency_ms", {})
        print(f"one CPI int16 {f}: p50 {lat.get('p50')} p99 {lat.get('p99')} ms")
    except Exception as e: print(f, e)
PY
}
suite_cholqr2() { # issue 47: the GPU CholeskyQR2 (kernels/cholqr.cu); CQ_SAN=0 skips the
    # sanitizers, CQ_NCU=1 adds ncu of the kernel at the hard shape (--clock-control none)
    step "test_gpu_qr" "$L/tests.log" 200 "$BIN/test_gpu_qr"
    step "bench-qr cholqr2" "$L/bench-qr.log" 150 "$R" bench-qr --sizes 240x66x128,240x66x1280,192x96x128,80x16x384 \
        --backends gpu,cublas --qr householder,cholqr2 --json "$OUT/bench-qr-cholqr2.json"
    if [ "${CQ_SAN:-1}" = 1 ]; then
        step "memcheck test_gpu_qr" "$L/sanitizer.log" 150 env RTSTAP_GPU_QUICK=1 "$cs" --tool memcheck --error-exitcode 9 "$BIN/test_gpu_qr"
        # racecheck, synccheck, initcheck over the CholeskyQR2 kernel alone: bench-qr --qr cholqr2
        # at small batches (with --kernel-name kns=cholqr2_kernel, test_gpu_qr's Householder
        # cases stop at an internal sanitizer error before any cholqr2 case, 2026-12-04)
        for tool in racecheck synccheck initcheck; do
            step "$tool bench-qr cholqr2" "$L/sanitizer.log" 240 "$cs" --tool $tool --error-exitcode 9 \
                "$R" bench-qr --backends gpu --qr cholqr2 --repeat 1 \
                --sizes 240x66x4,192x96x2,80x16x8,96x16x4,306x66x2,33x32x4,7x5x4,1x1x4,100x1x4,300x7x4,512x128x2
        done
    fi
    ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
    if [ "${CQ_NCU:-0}" = 1 ] && [ -n "$ncu" ]; then
        step "ncu cholqr2 240x66x128" "$L/ncu.log" 150 "$ncu" --clock-control none --csv --page raw -k regex:cholqr2_kernel -c 2 \
            --metrics "gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio" \
            "$R" bench-qr --sizes 240x66x128 --backends gpu --qr cholqr2
    fi
    report_head "$L"
    grep -h "cholqr2" "$L/tests.log" | grep -v " ok$" | head -20
    grep -h -E "^ +[0-9]+ +[0-9]+ +[0-9]+ " "$L/bench-qr.log" | cut -c1-120
    [ -f "$L/ncu.log" ] && grep -h "cholqr2_kernel" "$L/ncu.log" | cut -c1-400 | tail -2
    return 0
}
suite_cholqr() { # issue 47: the GPU cholqr, one pass with the Gram and the Cholesky in FP64
    # (kernels/cholqr.cu cholqr1_kernel); CQ_SAN=0 skips the sanitizers, CQ_NCU=1 adds ncu
    step "test_gpu_qr" "$L/tests.log" 200 "$BIN/test_gpu_qr"
    step "test_gpu_weights" "$L/tests.log" 150 "$BIN/test_gpu_weights"
    step "bench-qr cholqr" "$L/bench-qr.log" 150 "$R" bench-qr --sizes 240x66x128,240x66x1280,192x96x128,80x16x384 \
        --backends gpu --qr householder,cholqr2,cholqr --json "$OUT/bench-qr-cholqr.json"
    if [ "${CQ_SAN:-1}" = 1 ]; then
        for tool in memcheck racecheck; do
            step "$tool bench-qr cholqr" "$L/sanitizer.log" 150 "$cs" --tool $tool --error-exitcode 9 \
                "$R" bench-qr --backends gpu --qr cholqr --repeat 1 --sizes 240x66x4,80x16x8,33x32x3
        done
    fi
    ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
    if [ "${CQ_NCU:-0}" = 1 ] && [ -n "$ncu" ]; then
        step "ncu cholqr 240x66x128" "$L/ncu.log" 120 "$ncu" --clock-control none --csv --page raw -k regex:cholqr1_kernel -c 2 \
            --metrics "gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,launch__registers_per_thread,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio" \
            "$R" bench-qr --sizes 240x66x128 --backends gpu --qr cholqr --repeat 1
        step "ncu cholqr pipes" "$L/ncu-pipes.log" 120 "$ncu" --clock-control none --csv --page raw -k regex:cholqr1_kernel -c 1 \
            --metrics "gpu__time_duration.sum,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active" \
            "$R" bench-qr --sizes 240x66x128 --backends gpu --qr cholqr --repeat 1
    fi
    report_head "$L"
    grep -h -E "cholqr|failures|passed" "$L/tests.log" | grep -v " ok$" | head -40
    grep -h -E "^ +[0-9]+ +[0-9]+ +[0-9]+ " "$L/bench-qr.log" | cut -c1-120
    [ -f "$L/ncu.log" ] && grep -h -E "Metric Name|^\"ID|cholqr1_kernel" "$L/ncu.log" | cut -c1-900 | tail -3
    [ -f "$L/ncu-pipes.log" ] && grep -h -E "cholqr1_kernel|ERR|rror" "$L/ncu-pipes.log" | cut -c1-600 | tail -3
    return 0
}
suite_engine_qr() { # issue 47: the engine factoring by CholeskyQR (cholqr: gather, factor and weights
    # fused, the guard's Householder in the same kernel; cholqr2: materialized
    # training, the kernel, the guard, the weight kernel) against its Householder default; cholqr
    # with the fused weights by substitution (RTSTAP_FUSED_SOLVER=subst) beside it
    step "test_gpu_weights (cholqr fused)" "$L/tests.log" 120 env RTSTAP_WEIGHTS_CASES=cqfuse "$BIN/test_gpu_weights"
    step "test_gpu_engine (CholeskyQR cases)" "$L/tests.log" 240 env RTSTAP_ENGINE_CASES=cholesky "$BIN/test_gpu_engine"
    local q rep e S="$R stream --backend gpu --keep detections"
    for rep in 1 2; do
        for q in householder cholqr cholqr2 cholqr-subst; do
            e=(); [ "$q" = cholqr-subst ] && e=(env RTSTAP_FUSED_SOLVER=subst)
            step "hard resident $q #$rep" "$L/stream.log" 60 "${e[@]}" $S --preset hard --resident --cpis 4000 --qr ${q%-subst} --json "$L/hr-$q-$rep.json"
            [ "$q" = cholqr-subst ] || step "hard int16 link $q #$rep" "$L/stream.log" 60 $S --preset hard --format ci16 --cpis 4000 --qr $q --json "$L/hi-$q-$rep.json"
            step "medium resident $q #$rep" "$L/stream.log" 60 "${e[@]}" $S --preset medium --resident --cpis 3000 --qr ${q%-subst} --json "$L/mr-$q-$rep.json"
        done
    done
    for q in householder cholqr; do
        step "one CPI int16 $q" "$L/stream.log" 60 $S --preset hard --format ci16 --slots 1 --cpis 2000 --qr $q --json "$L/one-$q.json"
    done
    if [ "${EQ_SAN:-1}" = 1 ]; then
        for tool in memcheck ${EQ_RACE:+racecheck}; do
            step "$tool test_gpu_weights (cholqr fused)" "$L/sanitizer.log" 200 env RTSTAP_WEIGHTS_CASES=cqfuse RTSTAP_GPU_QUICK=1 \
                "$cs" --tool $tool --error-exitcode 9 "$BIN/test_gpu_weights"
        done
        for tool in memcheck ${EQ_RACE:+racecheck}; do
            step "$tool test_gpu_engine (small CholeskyQR cases)" "$L/sanitizer.log" 200 env RTSTAP_ENGINE_CASES=cholesky-small \
                "$cs" --tool $tool --error-exitcode 9 "$BIN/test_gpu_engine"
        done
    fi
    report_head "$L"
    grep -h -E "CholeskyQR|factors:|vs double|FAIL|passed|failure|cholqr fused" "$L/tests.log" | cut -c1-260 | head -80
    factor_table "$L" "householder cholqr cholqr2 cholqr-subst" "hr=hard resident" "hi=hard int16 link" "mr=medium resident"
    python3 - "$L" <<'PY'
import json, sys
L = sys.argv[1]
for q in ("householder", "cholqr", "cholqr2", "cholqr-subst"):
    try:
        st = json.load(open(f"{L}/hr-{q}-1.json")).get("stage_ms_median", {})
        print(f"hard resident {q} stage medians (ms): " + " ".join(f"{k} {v:.4f}" for k, v in st.items()))
    except Exception as e: print(q, e)
PY
    one_cpi "$L" householder cholqr
    grep -h "engine:" "$L/stream.log" | sort | uniq | cut -c1-250 | head -8
    grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$L/sanitizer.log" 2>/dev/null
    return 0
}
suite_cqfuse() { # issue 47: the fused cholqr (kernels/cholqr1_gather.cu) against the fused Householder:
    # ncu of a hard resident CPI's kernels under each (one CPI's launches after the warm-up), then
    # int16 over the link at 2, 3 and 4 slots, alternated (CQF_NCU=0: no ncu)
    local q s rep S="$R stream --backend gpu --keep detections"
    if [ "${CQF_NCU:-1}" = 1 ]; then
        for q in householder cholqr; do
            step "ncu hard resident $q" "$L/ncu.log" 150 ncu --clock-control none --launch-skip 80 --launch-count 24 \
                --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
                -f -o "$OUT/ncu-cq-$q" "$R" stream --preset hard --resident --cpis 16 --backend gpu --keep detections \
                --quiet --qr $q
            step "ncu raw $q" "$L/ncu.log" 60 sh -c "ncu --import '$OUT/ncu-cq-$q.ncu-rep' --page raw --csv > '$OUT/ncu-cq-$q.csv'"
        done
    fi
    for rep in 1 2; do
        for q in householder cholqr; do
            step "medium resident $q #$rep" "$L/stream.log" 60 $S --preset medium --resident --cpis 3000 --qr $q \
                --json "$L/m-$q-$rep.json"
        done
        for s in 2 3 4; do
            for q in householder cholqr; do
                step "hard int16 link $q slots $s #$rep" "$L/stream.log" 60 $S --preset hard --format ci16 --cpis 4000 \
                    --slots $s --qr $q --json "$L/l$s-$q-$rep.json"
            done
        done
        for q in householder cholqr; do
            step "hard c64 link $q #$rep" "$L/stream.log" 60 $S --preset hard --cpis 4000 --qr $q --json "$L/c-$q-$rep.json"
            step "hard int16 resident $q #$rep" "$L/stream.log" 60 $S --preset hard --format ci16 --resident --cpis 4000 \
                --qr $q --json "$L/r-$q-$rep.json"
        done
    done
    report_head "$L"
    for q in householder cholqr; do [ -f "$OUT/ncu-cq-$q.csv" ] && ncu_table "cq-$q" 14; done
    factor_table "$L" "householder cholqr" "l2=int16 link, 2 slots" "l3=int16 link, 3 slots" "l4=int16 link, 4 slots" \
        "c=c64 link, 3 slots" "r=int16 resident, 3 slots" "m=medium c64 resident, 3 slots"
    return 0
}
suite_cqauto() { # issue 47: --qr auto on the gpu backend (cholqr where the fused kernel takes the shape
    # and n >= 64), the detectors on the fused cholqr's kept factors; rates by factor, alternated
    step "test_gpu_weights (cholqr fused)" "$L/tests.log" 120 env RTSTAP_WEIGHTS_CASES=cqfuse "$BIN/test_gpu_weights"
    step "test_gpu_detect" "$L/tests.log" 240 "$BIN/test_gpu_detect"
    step "test_gpu_engine (CholeskyQR cases)" "$L/tests.log" 240 env RTSTAP_ENGINE_CASES=cholesky "$BIN/test_gpu_engine"
    step "memcheck test_gpu_detect (hard shape)" "$L/sanitizer.log" 200 "$cs" --tool memcheck --error-exitcode 9 \
        "$BIN/test_gpu_detect" 1
    step "run hard --qr auto" "$L/run.log" 60 "$R" run --preset hard --backend gpu --qr auto --output "$L/hard-auto.h5"
    local q rep p S="$R stream --backend gpu --keep detections"
    for rep in 1 2; do
        for q in householder cholqr auto; do
            for p in hard medium easy; do
                step "$p resident $q #$rep" "$L/stream.log" 60 $S --preset $p --resident --cpis 4000 --qr $q --json "$L/r-$p-$q-$rep.json"
            done
            step "hard int16 link $q #$rep" "$L/stream.log" 60 $S --preset hard --format ci16 --cpis 4000 --qr $q --json "$L/i-hard-$q-$rep.json"
        done
    done
    step "one CPI int16 auto" "$L/stream.log" 60 $S --preset hard --format ci16 --slots 1 --cpis 2000 --qr auto --json "$L/one-auto.json"
    report_head "$L"
    grep -h -E "gpu cholqr|CholeskyQR|failures|passed|FAIL" "$L/tests.log" | cut -c1-220 | head -40
    grep -h -E "QR factor|engine:" "$L/run.log" | cut -c1-220
    grep -h "ERROR SUMMARY" "$L/sanitizer.log"
    grep -h "engine:" "$L/stream.log" | sort | uniq -c | cut -c1-230
    factor_table "$L" "householder cholqr auto" "r-hard=hard resident" "r-medium=medium resident" \
        "r-easy=easy resident" "i-hard=hard int16 link"
    one_cpi "$L" auto
    return 0
}
