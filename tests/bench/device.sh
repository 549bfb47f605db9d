#!/usr/bin/env bash
# device.sh: the GPU machine's one driver — named suites of checks and measurements, each
# step under its own `timeout`, every suite's logs under $OUT/SUITE (tarred to logs.tgz:
# a device call brings back few files), its short table printed last, and everything the
# driver prints also in $OUT/device.log. docs/benchmarks.md and docs/kernels/journal.md
# name the suite that reproduces each of their tables.
#
# Here:  cmake --preset gpu-h100 (or any CUDA build for sm_90) && bash tests/bench/pack_device.sh BUILD_DIR
#        (pack_device.sh BUILD_DIR qr: only what the qr-* suites run; see its header for the tools)
# There: mkdir -p .gpulibs && tar -xzf .gpulibs.tgz -C .gpulibs &&
#        export LD_LIBRARY_PATH=$PWD/.gpulibs:$LD_LIBRARY_PATH && bash tests/bench/device.sh SUITE [SUITE...]
# usage: device.sh SUITE [SUITE...] | --list
# Settings from the environment: OUT (default ./out-device); REF (a packed reference rtstap,
# tar -cJf .gpuref.txz -C REF_BUILD rtstap: compare needs it, samples runs it if given);
# PRESETS (profile: default hard,medium); SIZES (the qr-* suites' shapes); BENCH_TIMEOUT,
# TC_SAN, TC_NCU (qr-*); RTSTAP_PERF_NO_SCALING (perf); ROUND3_NCU, ROUND3_SASS (qr-lookahead).
# A device command runs at most 10 minutes: most suites fit one; run the long ones alone.
# shellcheck disable=SC2086,SC2012 # $S and the preset lists split on purpose; ls finds the toolkit
here=$(cd "$(dirname "$0")" && pwd)
# name, then one line: what the suite checks or measures (--list prints them)
SUITES=(
  "check        every GPU test (engine, kernels, devices, pipeline, PERFECT, SINR) and compute-sanitizer over the engine, apply and engine-CPU tests"
  "rates        the H200 baseline: stream resident/link, complex64/int16, 3-4 slots, one slot; bench and bench-qr (gpu vs cublas)"
  "recordings   480-CPI recordings from the page cache (run --input, stream --input; complex64, int16), ncu of a resident hard CPI"
  "verify       a commit's GPU tests (VERIFY_TESTS), memcheck over the detector test and a recording's run, run --devices all against one engine, --qr cholqr on the gpu, streams (ring, --devices all, --input, --resident, kelly), send -> listen --backend gpu"
  "cholqr2      the GPU CholeskyQR2: test_gpu_qr, bench-qr householder,cholqr2 against cuBLAS, memcheck; racecheck, synccheck, initcheck over bench-qr cholqr2 (CQ_SAN=0: none), ncu (CQ_NCU=1)"
  "engine-qr    issue 47: --qr cholqr / cholqr2 in the GPU engine: test_gpu_engine's CholeskyQR cases, stream per factor alternated (hard resident, int16 over the link, one CPI; medium resident), memcheck over the small cases (EQ_SAN=0: none; EQ_RACE=1 adds racecheck)"
  "cqfuse       issue 47: the fused cholqr against the fused Householder: ncu of a hard resident CPI's kernels under each (CQF_NCU=0: none), int16 over the link at 2-4 slots, c64 link, int16 resident, alternated"
  "cqauto       issue 47: --qr auto on the gpu (cholqr where the fused kernel takes n >= 64): test_gpu_weights cqfuse, test_gpu_detect (the detectors on the fused cholqr's factors), test_gpu_engine CholeskyQR cases, memcheck, run --qr auto, stream hard/medium/easy by factor"
  "cholqr       the GPU one-pass cholqr (double Gram): test_gpu_qr, test_gpu_weights, bench-qr householder,cholqr2,cholqr, memcheck and racecheck over bench-qr cholqr (CQ_SAN=0: none), ncu (CQ_NCU=1)"
  "perf         stream (every workload, 1-4 slots, a recording), bench (every backend), bench-qr (4 backends), the CPU scaling table"
  "release      every GPU test and sanitizer, bench-qr x 4 backends, run on the presets x backends, the PERFECT sizes table"
  "resident     stream --resident against the link-bound stream: presets, complex64/int16 rings, two --keep, and bench"
  "slots        how many CPIs in flight a compute-bound stream wants (2-6 slots) and stage times under load (--timeline)"
  "profile      ncu of every kernel of a resident stream (PRESETS, default hard,medium), summarized per kernel, and bench"
  "apply        the weight application: tensor cores (default) / FP32 tiled / rows kernels, tests, sanitizers, ncu, SASS of the hot kernels"
  "doppler      the Doppler filter: one kernel (default) / load + cuFFT / 32-cell tiles, tests, sanitizers, ncu"
  "cfar         the detector: apply+CFAR fused (default) / apart / two passes / 32-64-128 threads a line, tests, sanitizers, ncu, fused vs apart end to end"
  "tuning       the A/B switches rtstap hands on (app/env.c): each variant's engine differs from the default, test_gpu_engine and test_gpu_cfar on the variants, a stream under each"
  "live         issue 45 on the GPU machine: the hard preset over loopback (send -> listen --backend gpu, int16), offered 500-3000 CPIs/s: processed, lost, latency"
  "ingest       issue 45's ingest cost and added latency where sender, receiver and engine have cores of their own (pinned): live_ingest.py, CPU engine, 1 and 3 slots"
  "safety       issue 29 on the GPU: the engine test, cli_gpu_fault.sh, memcheck over a run that moves to the CPU"
  "robust       issue 10 on the GPU: faults, checks, SIGINT, a 10^5-CPI soak, sanitizers over test_engine"
  "samples      native sample widths: integer paths, memcheck, cf32/ci16/ci8 rings, recordings (REF optional)"
  "compare      a refactor's check: GPU tests, the fault script, stream/bench-qr/bench of the build and of REF, alternated"
  "devices      several GPUs: test_gpu_devices, stream --devices 1..all, one process a GPU, run --devices on recordings"
  "mpi          several GPUs: mpirun rtstap-mpi run and stream against one GPU and run --devices"
  "mpi-checks   several GPUs: bench --devices all, a device fault on rank 1 of mpirun rtstap-mpi"
  "sliding      the sliding training window: stream rates against segments, bench-qr at its batches, tests, sanitizers"
  "slidingperf  the sliding window with one or two CPIs in flight: stage times without overlap"
  "algorithms   README's algorithm table: every CFAR, Q = 1 and 3, the sliding blocks (hard, 3 slots)"
  "jdl          JDL on the GPU engine: tests, sanitizers, stream rates beside post-Doppler's, ncu"
  "subcpi       pre-Doppler, ADPCA, DPCA on the GPU engine: tests, sanitizers, stream rates, ncu"
  "oscfar       OS-CFAR: tests, sanitizers, OS against CA in the stream, ncu of the test kernels"
  "qr           the QR kernels: qr-tests, qr-sanitize and gpu_bench --all in one (can exceed one call)"
  "qr-tests     test_gpu_qr and test_gpu_weights (every dispatch row) and gpu_bench --all"
  "qr-sanitize  racecheck, synccheck, memcheck over the quick QR and weights tests"
  "qr-bench     gpu_bench --all (every variant that fits each size; SIZES)"
  "qr-verify    a QR commit's check: the tests (the engine's too), then the three sanitizers (about 7 minutes)"
  "qr-plan      fused or not: bench-qr --model at shapes where the plans differ (SIZES), stream K = 306 and 240"
  "qr-model     the performance model out of sample: gpu_bench --all at SIZES, bench-qr --model, streams by dispatch"
  "qr-bounds    what limits each target: qr_bounds twice, ncu's issue, pipe and stall counters"
  "qr-tc        the tensor-core QR (qr_tc) against the FP32 kernel, sanitizers (TC_SAN), ncu (TC_NCU=1)"
  "qr-lookahead the QR's round 3 (qr_tc --panel lookahead): accuracy, times, sanitizers, ncu, SASS stall profile"
)
if [ "${1:-}" = --list ] || [ "${1:-}" = -l ]; then
    printf '%s\n' "${SUITES[@]}"
    exit 0
fi
[ $# -gt 0 ] || { echo "usage: device.sh SUITE [SUITE...] | --list" >&2; exit 2; }
known() { local s; for s in "${SUITES[@]}"; do [ "${s%% *}" = "$1" ] && return 0; done; return 1; }
for s in "$@"; do known "$s" || { echo "device.sh: no suite '$s' (--list names them)" >&2; exit 2; }; done
# shellcheck source=device_common.sh
. "$here/device_common.sh"
ROOT=$OUT
exec > >(tee -a "$ROOT/device.log") 2>&1
S='' R=$BIN/rtstap
# stage_medians JSON...: each stream report's stage medians on one line
stage_medians() {
    local j
    for j in "$@"; do
        printf '%s ' "$(basename "$j")"; tr -d ' \t\n' < "$j" | grep -o '"stage_ms_median":{[^}]*}'
    done
}
lat() { grep -h "latency ms" "$1" | tail -1 | sed 's/^ *//'; }

suite_check() { # device_h200.sh check's tests and device_engine.sh tests' in one
    for t in test_gpu_qr test_gpu_weights test_gpu_cfar test_gpu_apply test_gpu_doppler test_gpu_engine \
             test_gpu_devices test_engine test_pipeline test_perfect test_sinr; do
        step "$t" "$L/tests.log" 300 "$BIN/$t"
    done
    for tool in memcheck racecheck; do
        for t in test_gpu_engine test_gpu_apply; do
            step "$tool $t" "$L/sanitizer.log" 120 env RTSTAP_GPU_QUICK=1 "$cs" --tool $tool --error-exitcode 9 "$BIN/$t"
        done
    done
    for tool in memcheck racecheck synccheck; do
        step "$tool test_engine" "$L/sanitizer.log" 200 "$cs" --tool "$tool" --error-exitcode 9 "$BIN/test_engine"
    done
    report_head "$L"
    grep -h -E "skipped|soak:|vs double|materialized" "$L"/tests.log | sort | uniq -c | sort -rn | head -20
}
suite_rates() { # docs/benchmarks.md "H200": CPIs/s, one CPI host to host, bench, bench-qr
    S="$R stream --backend gpu --keep detections"
    for p in hard medium easy; do
        step "$p resident" "$L/$p-res.log" 60 $S --resident --preset $p --cpis 6000
        step "$p resident int16" "$L/$p-res16.log" 60 $S --resident --preset $p --cpis 6000 --format ci16
        step "$p link c64" "$L/$p-link.log" 60 $S --preset $p --cpis 6000
        step "$p link int16" "$L/$p-link16.log" 60 $S --preset $p --cpis 6000 --format ci16
        rows+=("$(printf '%-6s resident %8s | resident int16 %8s | link c64 %8s | link int16 %8s' $p \
            "$(rate "$L/$p-res.log")" "$(rate "$L/$p-res16.log")" "$(rate "$L/$p-link.log")" "$(rate "$L/$p-link16.log")")")
    done
    step "hard link int16 4 slots" "$L/hard-link16-s4.log" 60 $S --preset hard --cpis 6000 --format ci16 --slots 4
    step "hard resident 4 slots" "$L/hard-res-s4.log" 60 $S --preset hard --cpis 6000 --resident --slots 4
    step "hard one slot c64" "$L/hard-one.log" 60 $S --preset hard --cpis 2000 --slots 1
    step "hard one slot int16" "$L/hard-one16.log" 60 $S --preset hard --cpis 2000 --slots 1 --format ci16
    step "bench" "$L/bench.log" 150 "$R" bench --workloads easy,medium,hard --backends gpu --cpis 2000 \
        --json "$OUT/bench.json"
    step "bench-qr" "$L/bench-qr.log" 150 "$R" bench-qr --sizes 240x66x128,240x66x1280,192x96x128,200x50x128,128x32x512,64x24x16384 \
        --backends gpu,cublas --json "$OUT/bench-qr.json"
    echo "CPIs/s, --keep detections, 6 000 CPIs, 3 slots unless named:"
    printf '%s\n' "${rows[@]}"
    echo "hard link int16, 4 slots: $(rate "$L/hard-link16-s4.log"); hard resident, 4 slots: $(rate "$L/hard-res-s4.log")"
    echo "hard, one slot, c64:   $(lat "$L/hard-one.log")"
    echo "hard, one slot, int16: $(lat "$L/hard-one16.log")"
    grep -h "^workload\|^easy\|^medium\|^hard" "$L/bench.log" | cut -c1-160
    grep -h -E "^ +[0-9]+ +[0-9]+ +[0-9]+ " "$L/bench-qr.log" | cut -c1-120
}
# kernel_variants TEST LIMIT VARIANT...: compute-sanitizer over TEST (quick) and memcheck over
# a resident int16 stream, then `stream --resident --keep detections` under each VARIANT (alternate)
kernel_variants() {
    local t=$1 limit=$2; shift 2
    sanitize "$L/sanitizer.log" "$limit" "$t"
    step "memcheck stream" "$L/sanitizer.log" 200 "$cs" --tool memcheck --error-exitcode 9 "$R" stream \
        --preset hard --resident --cpis 40 --backend gpu --format ci16 --keep detections --quiet
    S="$R stream --backend gpu --cpis 6000 --keep detections --resident"
    alternate resident "hard medium easy" "$@"
}
suite_apply() { # apply_mma_kernel (the default for N > 16), the FP32 tiled kernel, the row kernel
    step "test_gpu_apply" "$L/tests.log" 200 "$BIN/test_gpu_apply"
    step "test_gpu_engine" "$L/tests.log" 200 "$BIN/test_gpu_engine"
    local v vs=("mma:" "fp32:RTSTAP_APPLY_FP32=1" "rows:RTSTAP_APPLY_ROWS=1")
    kernel_variants test_gpu_apply 120 "${vs[@]}"
    for v in "${vs[@]}"; do ncu_kernels "${v%%:*}-hard" apply 10 3 hard 20 "${v#*:}"; done
    # ncu's full set with source counters, exported per SASS instruction for sass_hot.py
    for k in line_kernel apply_mma; do
        step "ncu full $k" "$L/ncu.log" 150 ncu --clock-control none --set full --import-source yes -k regex:$k --launch-skip 5 \
            -c 1 -f -o "$OUT/full-$k" "$R" stream --preset hard --resident --cpis 20 --backend gpu --keep detections --quiet
        step "ncu sass $k" "$L/ncu.log" 60 sh -c "ncu -i '$OUT/full-$k.ncu-rep' --page source --csv --print-source sass > '$OUT/sass-$k.csv'"
    done
    report_head "$L"
    grep -h "mma .*worst" "$L/tests.log" | tail -3
    grep -h "vs double reference" "$L/tests.log" | sort | uniq -c | sort -rn | head -3
    echo "stream --resident --keep detections, CPIs/s, two rounds:"
    printf '%s\n' "${rows[@]}"
    for v in "${vs[@]}"; do ncu_table "${v%%:*}-hard" 1; done
}
suite_doppler() { # the Doppler filter in one kernel (the default at D = 128), load + cuFFT, 32-cell tiles
    step "test_gpu_doppler" "$L/tests.log" 120 "$BIN/test_gpu_doppler"
    step "test_gpu_engine" "$L/tests.log" 300 "$BIN/test_gpu_engine"
    step "test_gpu_engine cuFFT" "$L/tests.log" 300 env RTSTAP_DOPPLER_FUSED=0 "$BIN/test_gpu_engine"
    local v vs=("fused:" "cufft:RTSTAP_DOPPLER_FUSED=0" "t32:RTSTAP_DOPPLER_TILE=32")
    kernel_variants test_gpu_doppler 120 "${vs[@]}"
    S="$R stream --backend gpu --cpis 6000 --keep detections --format ci16"
    alternate link-int16 hard "${vs[@]}"
    for v in "${vs[@]}"; do ncu_kernels "${v%%:*}" "doppler|fft" 20 4 hard 40 "${v#*:}"; done
    step "bench" "$L/bench.log" 120 "$R" bench --workloads easy,medium,hard --backends gpu --cpis 1000
    report_head "$L"
    echo "stream --keep detections, CPIs/s, two rounds:"
    printf '%s\n' "${rows[@]}"
    for v in "${vs[@]}"; do ncu_table "${v%%:*}"; done
    grep -h "^workload\|^easy\|^medium\|^hard" "$L/bench.log"
}
suite_cfar() { # the detector: fused with the apply (the default with --keep detections), apart, two passes, threads a line
    # every case on the default kernels and, in turn, two passes and 32, 64, 128 threads a line
    step "test_gpu_cfar (every variant)" "$L/tests.log" 300 "$BIN/test_gpu_cfar"
    step "test_gpu_apply" "$L/tests.log" 200 "$BIN/test_gpu_apply"
    step "test_gpu_engine" "$L/tests.log" 300 "$BIN/test_gpu_engine"
    step "test_gpu_engine apart" "$L/tests.log" 300 env RTSTAP_APPLY_CFAR=0 RTSTAP_CFAR_LINE_THREADS=64 "$BIN/test_gpu_engine"
    sanitize "$L/sanitizer.log" 150 test_gpu_apply
    for tool in memcheck racecheck synccheck; do
        step "$tool stream" "$L/sanitizer.log" 90 "$cs" --tool $tool --error-exitcode 9 "$R" stream --preset easy \
            --resident --cpis 4 --slots 1 --backend gpu --keep detections --quiet
        step "$tool stream apart tpl64" "$L/sanitizer.log" 90 env RTSTAP_APPLY_CFAR=0 RTSTAP_CFAR_LINE_THREADS=64 "$cs" \
            --tool $tool --error-exitcode 9 "$R" stream --preset easy --resident --cpis 4 --slots 1 --backend gpu \
            --keep detections --quiet
    done
    local v vs=("fused:" "apart:RTSTAP_APPLY_CFAR=0" "two:RTSTAP_CFAR_TWO_PASS=1"
                "apart32:RTSTAP_APPLY_CFAR=0 RTSTAP_CFAR_LINE_THREADS=32" "apart128:RTSTAP_APPLY_CFAR=0 RTSTAP_CFAR_LINE_THREADS=128")
    S="$R stream --backend gpu --cpis 6000 --keep detections --resident"
    alternate resident "hard medium easy" "${vs[@]}"
    for v in "${vs[@]}"; do ncu_kernels "${v%%:*}" "apply|line_kernel|cfar" 10 4 hard 20 "${v#*:}"; done
    step "bench two-pass" "$L/bench-two.log" 200 env RTSTAP_CFAR_TWO_PASS=1 "$R" bench --workloads medium,hard \
        --backends gpu --cpis 2000
    step "bench" "$L/bench.log" 200 "$R" bench --workloads medium,hard --backends gpu --cpis 2000
    # end to end: a 100-CPI hard int16 recording (CA-CFAR at pfa 1e-3, many hits) with --keep detections
    # (the fused kernel) and --keep detections,output (the two kernels), /detections element for element
    local T; T=$(mktemp -d)
    step "gen 100 CPIs" "$L/run.log" 200 "$R" gen --preset hard --cpis 100 --seed 5 --no-clutter --no-jammers \
        --target 200:0:40:0 -o "$T/c64.h5" -f --quiet
    step "relayout int16" "$L/run.log" 200 "$BIN/relayout" "$T/c64.h5" "$T/i16.h5" C,P,R ds i16
    step "run fused" "$L/run.log" 200 "$R" run --input "$T/i16.h5" --backend gpu --keep detections --cfar-pfa 1e-3 -o "$T/det.h5" -f
    step "run apart" "$L/run.log" 200 "$R" run --input "$T/i16.h5" --backend gpu --keep detections,output \
        --cfar-pfa 1e-3 -o "$T/full.h5" -f
    step "compare" "$L/run.log" 60 python3 - "$T/det.h5" "$T/full.h5" <<'PY'
import sys, h5py, numpy as np
a = h5py.File(sys.argv[1], "r")["detections"][...]
b = h5py.File(sys.argv[2], "r")["detections"][...]
print(f"detections: fused {a.shape[0]}, apart {b.shape[0]}, same: {a.shape == b.shape and bool(np.all(a == b))}")
sys.exit(0 if a.shape == b.shape and np.all(a == b) else 1)
PY
    rm -rf "$T"
    report_head "$L"
    grep -h "bit for bit\|fused .*hits\|detections only" "$L/tests.log" | sort | uniq -c | head -6
    grep -h "detections:" "$L/run.log"
    echo "stream --resident --keep detections, CPIs/s, two rounds:"
    printf '%s\n' "${rows[@]}"
    for v in "${vs[@]}"; do ncu_table "${v%%:*}"; done
    echo "bench, two passes:"; grep -h "^workload\|^medium\|^hard" "$L/bench-two.log"
    echo "bench, as dispatched:"; grep -h "^medium\|^hard" "$L/bench.log"
}
suite_recordings() { # docs/benchmarks.md "H200": recordings from the page cache, the device time a CPI
    S="$R stream --backend gpu --keep detections"
    D=/dev/shm/rtstap-rec
    recordings $D "$L/gen.log"
    for f in c64 i16; do
        step "stream --input $f (cold)" "$L/stream-$f-0.log" 120 $S --preset hard --input $D/$f.h5 --cpis 4800
        step "stream --input $f" "$L/stream-$f.log" 120 $S --preset hard --input $D/$f.h5 --cpis 4800
        for keep in detections,weights detections; do
            step "run $f $keep" "$L/run-$f-$keep.log" 150 "$R" run --input $D/$f.h5 -o $D/o-$f-$keep.h5 -f \
                --backend gpu --keep $keep
            rows+=("$(printf '%-34s %s' "run --input $f --keep $keep" \
                "$(grep -h "CPIs/s over" "$L/run-$f-$keep.log" | tail -1 | sed 's/^ *//' | cut -c1-60)")")
        done
        rows+=("$(printf '%-34s %8s  %s' "stream --input $f" "$(rate "$L/stream-$f.log")" \
            "$(grep -h "reading:" "$L/stream-$f.log" | tail -1 | cut -c3-100)")")
    done
    step "ncu hard" "$L/ncu.log" 150 ncu --clock-control none --launch-skip 60 --launch-count 24 --section SpeedOfLight \
        --section LaunchStats --section Occupancy -f -o "$OUT/ncu-hard" \
        "$R" stream --preset hard --resident --cpis 40 --backend gpu --keep detections --quiet
    step "ncu raw" "$L/ncu.log" 60 sh -c "ncu --import '$OUT/ncu-hard.ncu-rep' --page raw --csv > '$OUT/ncu-hard.csv'"
    printf '%s\n' "${rows[@]}"
    python3 "$here/ncu_summary.py" "$OUT/ncu-hard.csv" | cut -c1-150
}
suite_verify() { # a commit's check on the GPU
    S="$R stream --backend gpu --keep detections"
    for t in ${VERIFY_TESTS:-test_gpu_engine test_gpu_devices test_gpu_apply test_gpu_qr test_gpu_detect test_detector test_engine test_pipeline}; do
        step "$t" "$L/tests.log" $([ "$t" = test_gpu_engine ] && echo 300 || echo 150) "$BIN/$t"
    done
    step "memcheck test_gpu_detect" "$L/sanitizer.log" 150 env RTSTAP_GPU_QUICK=1 "$cs" --tool memcheck --error-exitcode 9 "$BIN/test_gpu_detect"
    D=/dev/shm/rtstap-v
    mkdir -p $D
    step "gen" "$L/run.log" 120 "$R" gen --preset ward --cpis 24 --seed 3 -o $D/rec.h5 -f --quiet
    step "memcheck run gpu" "$L/sanitizer.log" 240 "$cs" --tool memcheck --error-exitcode 9 \
        "$R" run --input $D/rec.h5 -o $D/m.h5 -f --backend gpu --quiet
    step "run gpu" "$L/run.log" 60 "$R" run --input $D/rec.h5 -o $D/one.h5 -f --backend gpu --keep-output
    step "run --devices all" "$L/run.log" 60 "$R" run --input $D/rec.h5 -o $D/all.h5 -f --backend gpu \
        --devices all --keep-output
    step "same: --devices all vs one" "$L/run.log" 30 "$BIN/h5same" $D/one.h5 $D/all.h5 /weights /output/iq /detections
    step "run cpu" "$L/run.log" 120 "$R" run --input $D/rec.h5 -o $D/cpu.h5 -f --backend cpu --keep-output
    step "run gpu --qr cholqr (every factor by CholeskyQR)" "$L/run.log" 60 sh -c \
        "'$R' run --input $D/rec.h5 -o $D/q.h5 -f --backend gpu --qr cholqr --json $D/q.json &&
         python3 -c \"import json,sys; sys.exit('CholeskyQR' not in json.load(open(sys.argv[1]))['engine'])\" $D/q.json"
    step "stream hard" "$L/stream.log" 60 $S --preset hard --cpis 6000 --format ci16
    # the stream runtime's other paths (issue 44): every device, a recording, the resident ring
    step "stream --devices all" "$L/stream.log" 60 $S --preset hard --cpis 3000 --format ci16 --devices all
    step "stream --input" "$L/stream.log" 60 $S --input $D/rec.h5 --cpis 480
    step "stream --resident" "$L/stream.log" 60 $S --preset hard --cpis 3000 --resident
    step "stream kelly, sliding" "$L/stream.log" 60 $S --preset hard --cpis 600 --detector kelly \
        --training-window sliding --block 48 --guard 2
    # live input into the GPU engine (the library's live source): a hard feed over loopback
    rm -f $D/l.err
    timeout --foreground 60 "$R" listen --vrt udp://127.0.0.1:0 --shape 22,128,480 --scale 0.02 --backend gpu \
        --cpis 64 --buffers 64 --json "$L/listen.json" -f 2> $D/l.err &
    local lp=$! port=
    for _ in $(seq 200); do
        port=$(sed -n 's/.*listening on udp:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' $D/l.err); [ -n "$port" ] && break; sleep 0.05
    done
    "$R" gen --preset hard --cpis 32 --seed 3 -o $D/hard.h5 -f --quiet
    step "send -> listen --backend gpu" "$L/run.log" 60 "$R" send --input $D/hard.h5 --vrt udp://127.0.0.1:$port \
        --rate 500 --loop 2 --iq-scale 0.02
    wait $lp; cat $D/l.err >> "$L/run.log"
    step "listen: 64 CPIs, none lost" "$L/run.log" 10 python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print(d['cpis'], d['cpis_lost'], d['latency_ms'], d['handoff_ms']); sys.exit(not (d['cpis'] == 64 and d['cpis_lost'] == 0))" "$L/listen.json"
    report_head "$L"
    grep -h "CPIs:" "$L/stream.log" | tail -1
    grep -h "same\|differ" "$L/run.log" | head
}
suite_sliding() {
    S="$BIN/rtstap stream --cpis"
    step "stream hard segment" "$L/stream.log" 60 $S 4000 --preset hard --json "$L/st-hard.json"
    for lb in 16 4 1; do
        n=$((lb == 1 ? 200 : 800))
        step "stream hard sliding $lb" "$L/stream.log" 120 $S $n --preset hard --training-window sliding --block $lb --keep detections --json "$L/st-hard-sl$lb.json"
    done
    step "stream hard sliding 1 weights" "$L/stream.log" 120 $S 200 --preset hard --training-window sliding --block 1 --json "$L/st-hard-sl1w.json"
    for w in easy medium; do
        step "stream $w sliding 1" "$L/stream.log" 120 $S 300 --preset $w --training-window sliding --block 1 --keep detections --json "$L/st-$w-sl1.json"
    done
    step "bench-qr sliding batches" "$L/benchqr.log" 200 "$BIN/rtstap" bench-qr --sizes 240x66x61440,240x66x3840,80x16x61440,192x96x49152 --backends gpu --repeat 5 --weights 16
    echo "---- stream"; grep -E "^rtstap stream|CPIs:|latency" "$L/stream.log" | cut -c1-200
    stage_medians "$L"/st-*.json
    echo "---- bench-qr"; grep -v "^====" "$L/benchqr.log" | tail -8
    for t in test_gpu_engine test_engine test_pipeline test_gpu_cfar; do
        step "$t" "$L/tests.log" 200 "$BIN/$t"
    done
    for tool in memcheck racecheck synccheck; do
        step "$tool sliding run" "$L/sanitize.log" 90 "$cs" --tool "$tool" --error-exitcode 9 \
            "$BIN/rtstap" run --preset easy --training-window sliding --block 16 --guard 2 --backend gpu -f -o /tmp/sl.h5 --quiet
    done
    for tool in racecheck synccheck; do
        step "$tool test_gpu_cfar" "$L/sanitize.log" 120 "$cs" --tool "$tool" --error-exitcode 9 "$BIN/test_gpu_cfar"
    done
    echo "---- verdicts"
    grep -h -E "^FAIL|ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY|all passed|failure|vs double|self-nulling" "$L"/tests.log "$L"/sanitize.log | sort | uniq -c | sort -rn | head -30
}
suite_slidingperf() { # one CPI in flight: stage times without overlap
    S="$BIN/rtstap stream --keep detections --cpis"
    step "hard sliding 1 slots 1" "$L/stream.log" 60 $S 30 --slots 1 --preset hard --training-window sliding --block 1 --json "$L/st-hard-sl1-s1.json"
    step "hard sliding 16 slots 1" "$L/stream.log" 60 $S 200 --slots 1 --preset hard --training-window sliding --block 16 --json "$L/st-hard-sl16-s1.json"
    step "easy sliding 1 slots 1" "$L/stream.log" 60 $S 100 --slots 1 --preset easy --training-window sliding --block 1 --json "$L/st-easy-sl1-s1.json"
    step "hard sliding 1 slots 2" "$L/stream.log" 60 $S 60 --slots 2 --preset hard --training-window sliding --block 1 --json "$L/st-hard-sl1-s2.json"
    step "hard segment slots 1" "$L/stream.log" 60 $S 2000 --slots 1 --preset hard --json "$L/st-hard-s1.json"
    step "stream hard segment slots 3" "$L/stream.log" 60 $S 4000 --preset hard --json "$L/st-hard-s3.json"
    for t in test_gpu_engine test_engine test_pipeline; do
        step "$t" "$L/tests.log" 200 "$BIN/$t"
    done
    step "memcheck sliding run" "$L/tests.log" 90 "$cs" --tool memcheck --error-exitcode 9 \
        "$BIN/rtstap" run --preset easy --training-window sliding --block 16 --guard 2 --backend gpu -f -o /tmp/sl.h5 --quiet
    step "racecheck sliding run" "$L/tests.log" 90 "$cs" --tool racecheck --error-exitcode 9 \
        "$BIN/rtstap" run --preset easy --training-window sliding --block 16 --guard 2 --backend gpu -f -o /tmp/sl.h5 --quiet
    grep -h -E "^FAIL|ERROR SUMMARY|RACECHECK SUMMARY|all passed|failure" "$L"/tests.log | sort | uniq -c
    echo "---- stream"; grep -E "^rtstap stream|CPIs:|latency" "$L/stream.log" | cut -c1-200
    stage_medians "$L"/st-*.json
}
suite_algorithms() { # README's algorithm table: the hard preset, 3 CPIs in flight
    S="$BIN/rtstap stream --preset hard --slots 3"
    for k in ca os go so ca2d none; do
        step "Q=3 segments cfar $k" "$L/stream.log" 60 $S --cpis 4000 --cfar $k --json "$L/al-q3-$k.json"
    done
    step "Q=1 segments" "$L/stream.log" 60 $S --cpis 4000 --doppler-order 1 --json "$L/al-q1.json"
    for lb in 16 4 1; do
        n=$((lb == 1 ? 150 : 600))
        step "Q=3 sliding $lb" "$L/stream.log" 120 $S --cpis $n --training-window sliding --block $lb --keep detections --json "$L/al-q3-sl$lb.json"
        step "Q=1 sliding $lb" "$L/stream.log" 120 $S --cpis $((n * 4)) --doppler-order 1 --training-window sliding --block $lb --keep detections --json "$L/al-q1-sl$lb.json"
    done
    for tool in racecheck synccheck; do
        step "$tool sliding run" "$L/tests.log" 120 "$cs" --tool $tool --error-exitcode 9 \
            "$BIN/rtstap" run --preset easy --training-window sliding --block 16 --guard 2 --backend gpu -f -o /tmp/sl.h5 --quiet
    done
    grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY" "$L"/tests.log | sort | uniq -c
    echo "---- stream"; grep -E "^rtstap stream|CPIs:|latency" "$L/stream.log" | cut -c1-200
}
suite_jdl() {
    for t in test_gpu_engine test_engine test_pipeline test_sinr; do
        step "$t" "$L/tests.log" 300 "$BIN/$t"
    done
    for tool in memcheck racecheck synccheck; do
        step "$tool jdl run" "$L/sanitize.log" 120 "$cs" --tool "$tool" --error-exitcode 9 \
            "$BIN/rtstap" run --preset easy --algorithm jdl --doppler-order 3 --backend gpu -f -o /tmp/j.h5 --quiet
    done
    S="$BIN/rtstap stream --preset hard"
    step "post-doppler slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --json "$L/j-pd-s3.json"
    step "jdl 3 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --algorithm jdl --json "$L/j-3-s3.json"
    step "jdl 3 slots 1" "$L/stream.log" 60 $S --slots 1 --cpis 2000 --algorithm jdl --json "$L/j-3-s1.json"
    step "jdl 5 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --algorithm jdl --angle-bins 5 --json "$L/j-5-s3.json"
    step "jdl 3 Q=1 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --algorithm jdl --doppler-order 1 --json "$L/j-3q1-s3.json"
    step "jdl 3 sliding 16 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 1000 --algorithm jdl --training-window sliding --block 16 --training 120 --json "$L/j-3sl16-s3.json"
    step "jdl 3 cublas slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 1000 --algorithm jdl --backend cublas --json "$L/j-3cb-s3.json"
    step "jdl 3 K=48 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --algorithm jdl --training 48 --json "$L/j-3k48-s3.json"
    step "jdl 3 K=48 slots 1" "$L/stream.log" 60 $S --slots 1 --cpis 2000 --algorithm jdl --training 48 --json "$L/j-3k48-s1.json"
    nc=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
    step "ncu jdl" "$L/ncu.log" 120 "$nc" --clock-control none -k "regex:beamspace|qr|expand" -c 6 \
        --metrics gpu__time_duration.sum $S --slots 1 --cpis 3 --algorithm jdl
    grep -h -E "^FAIL|ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY|all passed|failure|JDL" "$L"/tests.log "$L"/sanitize.log | cut -c1-160 | sort | uniq -c | head -40
    echo "---- stream"; grep -E "^rtstap stream|engine:|CPIs:|latency" "$L/stream.log" | cut -c1-220
    echo "---- ncu"; grep -E "^  [a-zA-Z<].*\(|gpu__time_duration" "$L/ncu.log" | sed -E 's/\(const.*\) \(/(/' | cut -c1-120 | head -16
    stage_medians "$L"/j-*.json
}
suite_subcpi() { # pre-Doppler and ADPCA: checks, sanitizers, rates, kernels
    for t in test_gpu_engine test_pipeline test_engine test_sinr; do
        step "$t" "$L/tests.log" 300 "$BIN/$t"
    done
    for a in "pre-doppler --sub-cpi 3" "adpca --sub-cpi 2" "dpca --sub-cpi 2"; do
        for tool in memcheck racecheck synccheck; do
            step "$tool $a" "$L/sanitize.log" 120 "$cs" --tool "$tool" --error-exitcode 9 \
                "$BIN/rtstap" run --preset easy --algorithm $a --backend gpu -f -o /tmp/s.h5 --quiet
        done
    done
    S="$BIN/rtstap stream --preset hard"
    step "post-doppler slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --json "$L/s-pd-s3.json"
    step "pre-doppler 3 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --algorithm pre-doppler --json "$L/s-pre3-s3.json"
    step "pre-doppler 3 slots 1" "$L/stream.log" 60 $S --slots 1 --cpis 2000 --algorithm pre-doppler --json "$L/s-pre3-s1.json"
    step "pre-doppler 2 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --algorithm pre-doppler --sub-cpi 2 --json "$L/s-pre2-s3.json"
    step "adpca 2 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --algorithm adpca --json "$L/s-ad2-s3.json"
    step "adpca 3 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --algorithm adpca --sub-cpi 3 --json "$L/s-ad3-s3.json"
    step "dpca 2 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --algorithm dpca --json "$L/s-dp2-s3.json"
    step "dpca 3 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --algorithm dpca --sub-cpi 3 --json "$L/s-dp3-s3.json"
    step "post-doppler slots 3 again" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --json "$L/s-pd2-s3.json"
    step "pre-doppler 3 cublas slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 1000 --algorithm pre-doppler --backend cublas --json "$L/s-pre3cb-s3.json"
    step "pre-doppler 3 sliding 16 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 1000 --algorithm pre-doppler --training-window sliding --block 16 --training 120 --keep detections --json "$L/s-pre3sl16-s3.json"
    step "adpca 2 cublas slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 1000 --algorithm adpca --backend cublas --json "$L/s-ad2cb-s3.json"
    for a in pre-doppler adpca dpca; do
        step "$a cpu engine" "$L/stream.log" 120 $S --slots 1 --cpis 20 --algorithm $a --backend cpu --json "$L/s-$a-cpu.json"
    done
    nc=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
    step "ncu pre-doppler" "$L/ncu.log" 120 "$nc" --clock-control none -c 12 \
        --metrics gpu__time_duration.sum $S --slots 1 --cpis 2 --algorithm pre-doppler
    grep -h -E "^FAIL|ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY|all passed|failure" "$L"/tests.log "$L"/sanitize.log | cut -c1-160 | sort | uniq -c | head -40
    echo "---- stream"; grep -E "^rtstap stream|engine:|CPIs:|latency" "$L/stream.log" | cut -c1-220
    echo "---- ncu"; grep -E "^  [a-zA-Z<].*\(|gpu__time_duration" "$L/ncu.log" | sed -E 's/\(const.*\) \(/(/' | cut -c1-120 | head -30
    stage_medians "$L"/s-*.json
}
suite_oscfar() { # the OS-CFAR kernel: checks, the stream, kernel times
    for t in test_gpu_cfar test_gpu_engine; do
        step "$t" "$L/tests.log" 300 "$BIN/$t"
    done
    for tool in memcheck racecheck; do
        step "$tool test_gpu_cfar" "$L/sanitize.log" 200 "$cs" --tool "$tool" --error-exitcode 9 "$BIN/test_gpu_cfar"
    done
    S="$BIN/rtstap stream --preset hard"
    for k in ca os; do
        step "cfar $k slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --cfar $k --json "$L/os-$k-s3.json"
        step "cfar $k slots 1" "$L/stream.log" 60 $S --slots 1 --cpis 2000 --cfar $k --json "$L/os-$k-s1.json"
    done
    step "cfar os train 64" "$L/stream.log" 60 $S --slots 3 --cpis 2000 --cfar os --cfar-train 64 --json "$L/os-os64-s3.json"
    nc=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
    for k in ca os; do
        step "ncu $k" "$L/ncu.log" 120 "$nc" --clock-control none -k "regex:os_kernel|test_kernel|prefix_kernel" -c 6 \
            --metrics gpu__time_duration.sum $S --slots 1 --cpis 3 --cfar $k
    done
    grep -h -E "^FAIL|ERROR SUMMARY|RACECHECK SUMMARY|all passed|failure|overflowing" "$L"/tests.log "$L"/sanitize.log | cut -c1-150 | sort | uniq -c | head -30
    echo "---- stream"; grep -E "^rtstap stream|CPIs:|latency" "$L/stream.log" | cut -c1-200
    stage_medians "$L"/os-*.json
    echo "---- ncu"; grep -E "os_kernel|test_kernel|prefix_kernel|gpu__time_duration" "$L/ncu.log" | head -40
}
suite_robust() { # issue 10 on the GPU: faults, checks, stop, 10^5-CPI soak
    export RTSTAP_BIN=$BIN/rtstap RTSTAP_TOOLS_DIR=$BIN
    for t in test_gpu_engine test_engine test_gpu_weights test_gpu_qr; do
        step "$t" "$L/tests.log" 300 "$BIN/$t"
    done
    step cli_gpu_fault "$L/tests.log" 240 bash tests/cli/cli_gpu_fault.sh
    step cli_checks "$L/tests.log" 120 bash tests/cli/cli_checks.sh
    # SIGINT under job control on the GPU: the CPIs in flight finish, the report is written
    set -m
    "$BIN/rtstap" stream --preset hard --cpis 100000000 --json "$L/stream-sigint.json" > "$L/sigint.log" 2>&1 &
    pid=$!; sleep 6; kill -INT $pid; wait $pid; echo "stream SIGINT rc=$?" >> "$L/sigint.log"
    set +m
    summary+=("$(tail -1 "$L/sigint.log")")
    step "soak 1e5 CPIs" "$L/soak.log" 200 "$BIN/rtstap" stream --preset hard --cpis 100000 --slots 3 \
        --mem-every 1000 --json "$L/soak.json"
    step "stream hard" "$L/stream.log" 60 "$BIN/rtstap" stream --preset hard --cpis 4000 --slots 3 --deadline-ms 1
    step "bench-qr" "$L/benchqr.log" 120 "$BIN/rtstap" bench-qr --sizes 240x66x128,192x96x128,80x16x384 --backends gpu --weights 16
    for tool in memcheck synccheck racecheck; do
        step "$tool test_engine" "$L/sanitize.log" 150 "$cs" --tool "$tool" --error-exitcode 9 "$BIN/test_engine"
    done
    echo "---- verdicts"
    grep -h -E "^FAIL|ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY|all passed|failure|skipped|soak:|min.R_ii|cli_gpu_fault:|device allocations" "$L"/tests.log "$L"/sanitize.log | sort | uniq -c | sort -rn | head -40
    grep -E "memory samples|CPIs:|latency" "$L/soak.log" "$L/stream.log" "$L/sigint.log"
    grep -E "240x66|192x96|80x16" "$L/benchqr.log" | head
}
suite_perf() {
    for w in hard easy medium perfect-small perfect-medium perfect-large; do
        step "stream $w" "$L/stream.log" 60 "$BIN/rtstap" stream --preset $w --cpis 4000 --slots 3 --deadline-ms 1 --json "$L/stream-$w.json"
    done
    for w in easy medium; do
        step "stream $w slots 4" "$L/stream.log" 60 "$BIN/rtstap" stream --preset $w --cpis 4000 --slots 4 --deadline-ms 1 --json "$L/stream-$w-s4.json"
    done
    for s in 1 2 4; do
        step "stream hard slots $s" "$L/stream.log" 60 "$BIN/rtstap" stream --preset hard --cpis 4000 --slots $s --deadline-ms 1 --json "$L/stream-hard-s$s.json"
    done
    step "stream hard keep output" "$L/stream.log" 60 "$BIN/rtstap" stream --preset hard --cpis 3000 --keep detections,weights,output
    step "stream hard cublas" "$L/stream.log" 60 "$BIN/rtstap" stream --preset hard --cpis 1000 --backend cublas
    # a recording from the page cache: 150 distinct hard CPIs (1.6 GB), replayed
    step "gen recording" "$L/stream.log" 200 "$BIN/rtstap" gen --preset hard --no-clutter --cpis 150 --out /tmp/hard150.h5 --quiet
    step "stream --input" "$L/stream.log" 120 "$BIN/rtstap" stream --input /tmp/hard150.h5 --cpis 1500 --slots 3 --json "$L/stream-input.json"
    step "run recording gpu" "$L/stream.log" 120 "$BIN/rtstap" run --input /tmp/hard150.h5 --output /tmp/r150.h5 --doppler-order 3 --training 240 --beams 16
    step bench "$L/bench.log" 400 "$BIN/rtstap" bench --cpis 400 --cpu-cpis 6 --json "$L/bench.json"
    step bench-qr "$L/benchqr.log" 200 "$BIN/rtstap" bench-qr --sizes 240x66x128,80x16x384,192x96x128,240x66x1280,32x12x4096,64x18x4096,64x24x16384 --backends gpu,cublas,cpu,lapack --repeat 20 --weights 16 --json "$L/benchqr.json"
    # RTSTAP_PERF_NO_SCALING=1: leave out the CPU scaling table (to fit one device call
    # beside the rest when only the GPU tables are refreshed)
    for t in $([ -n "${RTSTAP_PERF_NO_SCALING:-}" ] || echo 1 2 4 8 16); do
        step "scaling qr t$t" "$L/scaling.log" 120 "$BIN/rtstap" bench-qr --sizes 240x66x128 --backends cpu,lapack --repeat 10 --threads $t
        step "scaling cpi t$t" "$L/scaling.log" 120 "$BIN/rtstap" bench --workloads hard --backends cpu,lapack --cpu-cpis 5 --threads $t
    done
    echo "---- stream"; grep -E "^rtstap stream|engine:|CPIs:|latency|copy:|reading:" "$L/stream.log" | cut -c1-170
    echo "---- bench"; grep -v "^====\|^bench:" "$L/bench.log" | tail -28
    echo "---- bench-qr"; grep -v "^====" "$L/benchqr.log" | tail -30
    echo "---- scaling"; grep -E "^==== scaling|  240   66|^hard " "$L/scaling.log"
}
suite_release() {

    # 1. correctness on the GPU: every GPU test, and the CPU-reference tests with GPU backends
    for t in test_gpu_qr test_gpu_weights test_gpu_cfar test_gpu_apply test_gpu_doppler test_pipeline test_perfect; do
        step "$t" "$OUT/tests.log" 300 "$BIN/$t"
    done
    for tool in memcheck racecheck; do
        for t in test_gpu_qr test_gpu_weights test_gpu_cfar test_gpu_apply test_gpu_doppler; do
            RTSTAP_GPU_QUICK=1 step "$tool $t" "$OUT/sanitize.log" 150 "$cs" --tool "$tool" --error-exitcode 9 "$BIN/$t"
        done
    done

    # 2. the linear-algebra core: all four backends in one run
    rm -f "$OUT/bench.json"
    step "bench-qr" "$OUT/bench.log" 300 "$BIN/rtstap" bench-qr \
        --sizes 240x66x128,80x16x384,192x96x128,240x66x1280 --backends gpu,cublas,cpu,lapack \
        --repeat 20 --weights 16 --json "$OUT/bench.json"

    # 3. the pipeline: presets x backends (stage tables), twice each, the second kept
    for p in easy medium hard; do
        for be in gpu cublas cpu lapack; do
            for _ in 1 2; do
                rm -f /tmp/run.h5
                "$BIN/rtstap" run --preset $p --backend $be --output /tmp/run.h5 2> /tmp/run.err
                rc=$?
            done
            { echo "==== run --preset $p --backend $be rc=$rc"; cat /tmp/run.err; } >> "$OUT/runs.log"
        done
    done

    # 4. PERFECT sizes x backends
    step "perfect times" "$OUT/perfect.md" 300 bash tests/bench/perfect_times.sh "$BIN/rtstap" "$BIN/mkperfect" . "gpu cublas cpu lapack" 5

    echo "---- failures and sanitizer verdicts"
    grep -h -E "^FAIL|ERROR SUMMARY|RACECHECK SUMMARY|passed|failure" "$OUT"/tests.log "$OUT"/sanitize.log | sort | uniq -c | head -30
    echo "---- bench-qr"; grep -v "^====" "$OUT/bench.log" | tail -18
    echo "---- run (qr, weights, total compute)"
    awk '/^==== run/ {h=$3" "$5} / qr /{q=$2} / weights /{w=$2} /compute/ {c=$NF; gsub(/\)/,"",c); print h, "qr", q, "weights", w, "compute", $(NF-1)}' "$OUT/runs.log"
    echo "---- perfect"; grep "^|" "$OUT/perfect.md"
    echo "---- steps"; printf '%s\n' "${summary[@]}"
}
suite_resident() {
    step "test_gpu_engine" "$L/tests.log" 300 "$BIN/test_gpu_engine"
    step "memcheck stream --resident" "$L/sanitizer.log" 200 compute-sanitizer --tool memcheck --leak-check full \
        "$BIN/rtstap" stream --preset hard --resident --cpis 50 --backend gpu --format ci16 --quiet
    results=()
    for preset in hard medium easy; do
        for fmt in cf32 ci16; do
            for keep in detections detections,weights; do
                row="$(printf '%-6s %-4s --keep %-18s' $preset $fmt $keep)"
                for round in 1 2; do
                    step "$preset $fmt $keep link #$round" "$L/$preset-$fmt-$keep-link-$round.log" 90 "$BIN/rtstap" stream \
                        --preset $preset --cpis 6000 --format $fmt --keep $keep --backend gpu
                    step "$preset $fmt $keep resident #$round" "$L/$preset-$fmt-$keep-res-$round.log" 90 "$BIN/rtstap" stream \
                        --preset $preset --cpis 6000 --format $fmt --keep $keep --backend gpu --resident
                    row="$row link $(rate "$L/$preset-$fmt-$keep-link-$round.log") resident $(rate "$L/$preset-$fmt-$keep-res-$round.log") |"
                done
                results+=("$row")
            done
        done
    done
    step "bench" "$L/bench.log" 300 "$BIN/rtstap" bench --workloads easy,medium,hard --backends gpu,cublas \
        --cpis 2000 --json "$OUT/bench.json"
    echo "---- $(head -1 "$L/device.txt"); $(grep -m1 NVIDIA "$L/device.txt"); $(grep -m1 commit "$L/device.txt")"
    grep -h "resident\|passed\|FAIL" "$L/tests.log" | tail -4
    grep -h "ERROR SUMMARY\|LEAK SUMMARY" "$L/sanitizer.log" | head -2
    printf '%s\n' "${results[@]}"
    grep -h "^workload\|^easy\|^medium\|^hard" "$L/bench.log"
    grep -h "stage medians\|latency ms" "$L/hard-ci16-detections-res-1.log" | head -2
}
suite_slots() {
    S="$BIN/rtstap stream --backend gpu --cpis 6000 --keep detections"
    rows=()
    for p in hard medium; do
        for mode in link16 resident; do
            args=(--format ci16); [ $mode = resident ] && args=(--resident)
            row="$(printf '%-6s %-8s' $p $mode)"
            for round in 1 2; do
                for s in 2 3 4 6; do
                    step "$p $mode slots $s #$round" "$L/$p-$mode-$s-$round.log" 60 $S --preset $p --slots $s "${args[@]}"
                done
            done
            for s in 2 3 4 6; do row="$row | $s: $(rate "$L/$p-$mode-$s-1.log") / $(rate "$L/$p-$mode-$s-2.log")"; done
            rows+=("$row")
        done
    done
    step "timeline 3 slots" "$L/tl3.log" 60 $S --preset hard --resident --slots 3 --cpis 3000 --timeline "$OUT/tl3.csv"
    step "timeline 1 slot" "$L/tl1.log" 60 $S --preset hard --resident --slots 1 --cpis 3000 --timeline "$OUT/tl1.csv"
    echo "---- $(head -1 "$L/device.txt"); $(grep -m1 NVIDIA "$L/device.txt"); $(grep -m1 commit "$L/device.txt")"
    echo "CPIs/s by slots (two rounds):"
    printf '%s\n' "${rows[@]}"
    for f in tl1 tl3; do
        python3 - "$OUT/$f.csv" <<'PY'
import csv, sys, statistics
rows = list(csv.DictReader(open(sys.argv[1])))
keys = [k for k in rows[0] if k not in ("cpi", "slot", "submit_ms", "done_ms")]
print(sys.argv[1].split("/")[-1], "medians ms:", ", ".join(f"{k} {statistics.median(float(r[k]) for r in rows):.4f}" for k in keys))
PY
    done
}
suite_profile() {
    presets=${PRESETS:-hard,medium}
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
        echo "== $p"; python3 "$here/ncu_summary.py" "$OUT/ncu-$p.csv" 2>&1 | tee "$OUT/summary-$p.txt"
    done
    grep -h "^workload\|^easy\|^medium\|^hard" "$L/bench.log"
}
suite_tuning() { # docs/usage.md "Environment": the library reads none; rtstap hands each on
    local R="$BIN/rtstap" v name vars base
    step "test_gpu_cfar (every variant)" "$L/tests.log" 300 "$BIN/test_gpu_cfar"
    for vars in "RTSTAP_DOPPLER_FUSED=0" "RTSTAP_APPLY_CFAR=0 RTSTAP_CFAR_LINE_THREADS=64" "RTSTAP_APPLY_ROWS=1"; do
        step "test_gpu_engine $vars" "$L/tests.log" 300 env $vars "$BIN/test_gpu_engine"
    done
    # each switch: the engine it makes is not the default's (its description), and runs
    step "stream default" "$L/stream.log" 60 "$R" stream --preset hard --cpis 600 --backend gpu --keep detections --json "$L/t-default.json"
    base=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["engine"])' "$L/t-default.json")
    echo "default: $base" >> "$L/engines.txt"
    for v in "doppler-cufft:RTSTAP_DOPPLER_FUSED=0" "doppler-t32:RTSTAP_DOPPLER_TILE=32" "apply-rows:RTSTAP_APPLY_ROWS=1" \
             "apply-fp32:RTSTAP_APPLY_FP32=1" "apart:RTSTAP_APPLY_CFAR=0" "two-pass:RTSTAP_CFAR_TWO_PASS=1" \
             "qr-table:RTSTAP_QR_DISPATCH=table" "qr-separate:RTSTAP_QR_DISPATCH=separate" "subst:RTSTAP_FUSED_SOLVER=subst"; do
        name=${v%%:*}
        step "stream $name" "$L/stream.log" 60 env ${v#*:} "$R" stream --preset hard --cpis 600 --backend gpu --keep detections --json "$L/t-$name.json"
        e=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["engine"])' "$L/t-$name.json" 2>/dev/null)
        echo "$name: $e" >> "$L/engines.txt"
        case $name in doppler-t32|subst|qr-table) ;; # same description (a tile size, the solve, often the same row)
        *) step "engine differs: $name" "$L/stream.log" 5 test "$e" != "$base" ;;
        esac
    done
    step "a bad value refused (exit 1)" "$L/stream.log" 20 sh -c "RTSTAP_APPLY_ROWS=2 '$R' stream --preset easy --cpis 10 --backend gpu; [ \$? -eq 1 ]"
    cat "$L/engines.txt" | cut -c1-220
    grep -h "CPIs:" "$L/stream.log" | cut -c1-120
}
suite_live() { # the live feed at the hard preset's size over 127.0.0.1 (docs/live.md "Measured")
    local D=/dev/shm/rtstap-live r port n
    mkdir -p $D
    step "gen hard" "$L/live.log" 120 "$R" gen --preset hard --cpis 32 --seed 3 -o $D/hard.h5 -f --quiet
    for r in ${LIVE_RATES:-500 1000 2000 3000}; do
        n=416   # 13 loops of the 32 CPIs: the sender carries about 27 hard CPIs/s over loopback (15 s)
        rm -f $D/l.err
        timeout --foreground 60 "$R" listen --vrt udp://127.0.0.1:0 --shape 22,128,480 --scale 0.02 \
            --backend gpu --cpis $n --buffers 64 --timeout-ms 2000 --json "$L/l-$r.json" -f 2> $D/l.err &
        local lp=$! port=
        for _ in $(seq 200); do
            port=$(sed -n 's/.*listening on udp:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' $D/l.err); [ -n "$port" ] && break; sleep 0.05
        done
        step "send $r CPIs/s" "$L/live.log" 60 "$R" send --input $D/hard.h5 --vrt udp://127.0.0.1:$port \
            --rate $r --loop $((n / 32)) --iq-scale 0.02 --json "$L/s-$r.json" -f
        wait $lp; cat $D/l.err >> "$L/live.log"
        python3 - "$L/s-$r.json" "$L/l-$r.json" $r <<'PY' >> "$L/live-table.txt"
import json, sys
s, l = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
print("| %s | %.0f | %.0f | %d | %d | %.2f | %.2f | %.3f / %.3f |" % (sys.argv[3], s.get("rate_achieved", 0),
      l["processed_cpis_per_s"], l["cpis"], l["cpis_lost"], l["latency_ms"]["p50"], l["latency_ms"]["p99"],
      l["handoff_ms"]["p50"], l["handoff_ms"]["p99"]))
PY
    done
    echo "| asked CPIs/s | send achieved | listen processed | CPIs | lost | p50 ms | p99 ms | hand-over p50 / p99 ms |"
    cat "$L/live-table.txt"
}
suite_ingest() { # docs/live.md "Measured: ingest cost and added latency": stream --input against send -> listen
    local py=$RTSTAP_SOURCE_DIR/tests/bench/live_ingest.py slots pin
    pin="$(($(nproc) - 1))/0-$(($(nproc) / 2 - 1))" # the sender on the last core, stream and listen on the first half
    for slots in 1 3; do
        step "live_ingest, easy 4x32x480, $slots slots, pinned $pin" "$L/ingest.log" 200 python3 "$py" "$R" --cpis 400 \
            --fractions 0.25,0.5,0.9 --runs 2 --pin "$pin" --json "$L/ingest-easy-$slots.json" \
            --proc "--preset easy --backend cpu --threads 1 --doppler-order 1 --training 60 --segments 2 --beams 4 --cfar ca --slots $slots"
    done
    step "live_ingest, hard 22x128x480, 1 slot, pinned $pin" "$L/ingest.log" 200 python3 "$py" "$R" --cpis 60 \
        --shape 22,128,480 --fractions 0.5,0.9 --runs 1 --pin "$pin" --json "$L/ingest-hard-1.json" \
        --proc "--preset hard --backend cpu --threads 1 --slots 1"
    grep -h -A16 "^shape" "$L/ingest.log"
}
suite_safety() {
    export RTSTAP_BIN=$BIN/rtstap RTSTAP_TOOLS_DIR=$BIN
    step "test_gpu_engine" "$L/tests.log" 300 "$BIN/test_gpu_engine"
    step "cli_gpu_fault" "$L/fault.log" 300 bash tests/cli/cli_gpu_fault.sh
    "$BIN/rtstap" gen --preset easy --cpis 6 --out /dev/shm/rec.h5 --quiet -f
    # the trap itself and the dead context's API errors are what memcheck may report, no access
    RTSTAP_TEST_DEVICE_TRAP=3 step "memcheck: a trap, auto (only the trap and API errors)" "$L/memcheck.log" 200 \
        sh -c "compute-sanitizer --tool memcheck '$BIN/rtstap' run --input /dev/shm/rec.h5 \
        --output /dev/shm/o.h5 -f --backend auto --quiet > '$L/mc-trap.log' 2>&1; cat '$L/mc-trap.log';
        grep -q 'Trace/breakpoint trap' '$L/mc-trap.log' && ! grep -qE 'Invalid __(global|shared|local)__|out of bounds|Uninitialized' '$L/mc-trap.log'"
    grep -E "^FAIL|all passed|failure|allocations" "$L"/tests.log "$L"/fault.log | cut -c1-200
    grep -E "ERROR SUMMARY|running on the CPU" "$L/memcheck.log" | head -5
}
suite_samples() {
    ref=""
    if [ -n "${REF:-}" ]; then
        mkdir -p "$BIN/ref" && tar -xJf "$REF" -C "$BIN/ref" && ref=$BIN/ref/rtstap
    fi
    new=$BIN/rtstap
    step "test_engine (integer paths on every backend)" "$L/tests.log" 240 "$BIN/test_engine"
    step "test_gpu_engine" "$L/tests.log" 240 "$BIN/test_gpu_engine"
    step "memcheck stream ci16" "$L/memcheck.log" 240 compute-sanitizer --tool memcheck --error-exitcode 9 \
        "$new" stream --preset hard --format ci16 --cpis 12 --backend gpu --no-graphs --quiet
    S="stream --preset hard --slots 3 --backend gpu"
    copyin() { grep -h "copy: in" "$1" | tail -1 | sed 's/^ *//' | cut -c1-60; }
    results=()
    for f in cf32 ci16 ci8; do
        step "new replay $f" "$L/new-replay-$f.log" 90 "$new" $S --cpis 6000 --format $f
        results+=("$(printf '%-46s %8s  %s' "new: stream replay --format $f" "$(rate "$L/new-replay-$f.log")" "$(copyin "$L/new-replay-$f.log")")")
    done
    D=/dev/shm/rtstap-rec
    recordings $D "$L/gen.log"
    srow() { printf '%-46s %8s  %s' "$1" "$(rate "$2")" "$(grep -h "reading:" "$2" | tail -1 | cut -c3-110)"; }
    for f in c64 i16; do
        if [ -n "$ref" ]; then
            step "ref stream $f" "$L/ref-stream-$f.log" 120 "$ref" $S --input $D/$f.h5 --cpis 4800
            results+=("$(srow "ref 5db9558: stream --input $f" "$L/ref-stream-$f.log")")
        fi
        step "new stream $f" "$L/new-stream-$f.log" 120 "$new" $S --input $D/$f.h5 --cpis 4800
        results+=("$(srow "new: stream --input $f" "$L/new-stream-$f.log")")
    done
    step "new stream i16 host-decode" "$L/new-stream-i16d.log" 120 "$new" $S --input $D/i16.h5 --cpis 4800 --host-decode
    results+=("$(srow "new: stream --input i16 --host-decode" "$L/new-stream-i16d.log")")
    runrow() { printf '%-46s %s | %s' "$1" "$(grep -h "CPIs/s over" "$2" | tail -1 | sed 's/^ *//' | cut -c1-40)" \
        "$(grep -h "rates, CPIs/s" "$2" | tail -1 | sed 's/^ *rates, CPIs.s: //' | cut -c1-150)"; }
    for f in c64 i16; do
        if [ -n "$ref" ]; then
            step "ref run $f" "$L/ref-run-$f.log" 200 "$ref" run --input $D/$f.h5 -o $D/o-ref-$f.h5 -f --backend gpu
            results+=("$(printf '%-46s %s' "ref 5db9558: run --input $f" "$(grep -h "CPIs/s over" "$L/ref-run-$f.log" | tail -1 | sed 's/^ *//' | cut -c1-40)")")
        fi
        for keep in detections,weights detections; do
            step "new run $f $keep" "$L/new-run-$f-$keep.log" 200 "$new" run --input $D/$f.h5 -o $D/o-new-$f-$keep.h5 -f --backend gpu --keep $keep
            results+=("$(runrow "new: run --input $f --keep $keep" "$L/new-run-$f-$keep.log")")
        done
    done
    step "new run i16 host-decode" "$L/new-run-i16d.log" 200 "$new" run --input $D/i16.h5 -o $D/o-new-i16d.h5 -f --backend gpu
    results+=("$(runrow "new: run --input i16 --host-decode" "$L/new-run-i16d.log")")
    # the GPU's int16 path against its complex64 path (the host's decoding), through the CLI
    step "same: i16 stored vs host-decode" "$L/same.log" 60 "$BIN/h5same" $D/o-new-i16-detections,weights.h5 $D/o-new-i16d.h5 /weights /detections
    if [ -n "$ref" ]; then
        step "same: ref vs new c64" "$L/same.log" 60 "$BIN/h5same" $D/o-ref-c64.h5 $D/o-new-c64-detections,weights.h5 /weights /detections
        step "same: ref vs new i16" "$L/same.log" 60 "$BIN/h5same" $D/o-ref-i16.h5 $D/o-new-i16-detections,weights.h5 /weights /detections
    fi
    rm -rf $D
    echo "---- $(head -1 "$L/device.txt"); $(grep -m1 NVIDIA "$L/device.txt"); $(grep -m1 commit "$L/device.txt")"
    grep -h "passed\|FAIL\|failure" "$L/tests.log" | tail -6
    grep -h "ERROR SUMMARY" "$L/memcheck.log" | tail -1
    printf '%s\n' "${results[@]}"
    grep -h "same\|differ" "$L/same.log" 2>/dev/null | head
}
suite_compare() {
    mkdir -p "$BIN/ref"
    tar -xJf "${REF:?compare: REF=.gpuref.txz (tar -cJf .gpuref.txz -C REF_BUILD rtstap)}" -C "$BIN/ref" || return 1
    "$BIN/ref/rtstap" --version >> "$L/device.txt" 2>&1
    export RTSTAP_BIN=$BIN/rtstap RTSTAP_TOOLS_DIR=$BIN
    for t in test_gpu_engine test_gpu_qr test_gpu_weights test_gpu_cfar test_engine test_pipeline; do
        step "$t" "$L/tests.log" 300 "$BIN/$t"
    done
    step "cli_gpu_fault" "$L/fault.log" 300 bash tests/cli/cli_gpu_fault.sh
    for round in 1 2 3; do
        for who in ref new; do
            b=$BIN/rtstap
            [ $who = ref ] && b=$BIN/ref/rtstap
            step "stream hard $who $round" "$L/stream-$who.log" 90 "$b" stream --preset hard --cpis 4000 --slots 3
            step "bench-qr $who $round" "$L/benchqr-$who.log" 120 "$b" bench-qr --backends gpu --repeat 5 --weights 16
            step "bench hard $who $round" "$L/bench-$who.log" 120 "$b" bench --workloads hard --backends gpu --cpis 400
        done
    done
    echo "---- tests"
    grep -h -E "^FAIL|all passed|failure|allocations" "$L"/tests.log "$L"/fault.log | cut -c1-160 | sort | uniq -c
    for who in ref new; do
        b=$BIN/rtstap
        [ $who = ref ] && b=$BIN/ref/rtstap
        echo "---- $who: $("$b" --version 2>&1 | head -1)"
        grep -h "CPIs/s" "$L/stream-$who.log" | sed 's/^ */  stream: /'
        grep -h -E "^ +[0-9]+ +[0-9]+ +[0-9]+ +gpu " "$L/benchqr-$who.log" | sed 's/^ */  bench-qr: /' | cut -c1-120
        grep -h -E "^hard" "$L/bench-$who.log" | sed 's/^/  bench: /' | cut -c1-160
    done
}
suite_devices() {
    new=$BIN/rtstap
    n=$(nvidia-smi -L | wc -l)
    step "test_gpu_devices" "$L/tests.log" 300 "$BIN/test_gpu_devices"
    total() { grep -h "all: " "$1" | tail -1 | sed 's/.*: \([0-9.]*\) CPIs\/s/\1/'; }
    one() { grep -h "CPIs:" "$1" | tail -1 | sed 's/.*: \([0-9.]*\) CPIs\/s/\1/'; }
    results=()
    for preset in hard easy; do
        for fmt in cf32 ci16; do
            step "$preset $fmt 1 device (plain)" "$L/$preset-$fmt-1.log" 90 "$new" stream --preset $preset --slots 3 --cpis 4000 --format $fmt --backend gpu
            base=$(one "$L/$preset-$fmt-1.log")
            row="$(printf '%-5s %-5s 1: %8s' $preset $fmt "$base")"
            list=0
            for d in $(seq 1 $((n - 1))); do
                list="$list,$d"
                k=$((d + 1))
                step "$preset $fmt --devices $list" "$L/$preset-$fmt-$k.log" 120 "$new" stream --preset $preset --slots 3 \
                    --cpis $((4000 * k)) --format $fmt --backend gpu --devices $list
                t=$(total "$L/$preset-$fmt-$k.log")
                row="$row $(printf ' %d: %8s (%sx)' $k "$t" "$(awk -v a="$t" -v b="$base" 'BEGIN{ if (b > 0) printf "%.2f", a / b }')")"
            done
            results+=("$row")
        done
    done
    # the issue's yardstick: one process per GPU, all at once (hard, complex64 and int16)
    for fmt in cf32 ci16; do
        pids=()
        for d in $(seq 0 $((n - 1))); do
            CUDA_VISIBLE_DEVICES=$d timeout 120 "$new" stream --preset hard --slots 3 --cpis 4000 --format $fmt --backend gpu \
                > "$L/proc-$fmt-$d.log" 2>&1 &
            pids+=($!)
        done
        wait "${pids[@]}"
        sum=$(for d in $(seq 0 $((n - 1))); do one "$L/proc-$fmt-$d.log"; done | awk '{s += $1} END {printf "%.1f", s}')
        results+=("$(printf 'hard  %-5s %d processes, one GPU each: %s CPIs/s in all' $fmt $n "$sum")")
    done
    # recordings (run --devices): a 480-CPI int16 and complex64 recording in /dev/shm, run on 1, 2
    # and all GPUs, each file equal to the one-GPU run's (h5same)
    D=/dev/shm/rtstap-dev
    recordings $D "$L/gen.log"
    rrate() { grep -h "CPIs/s over" "$1" | tail -1 | sed 's/^ *\([0-9.]*\) CPIs.*/\1/'; }
    for f in i16 c64; do
        for keep in detections,weights detections; do
            row="$(printf 'run %-4s --keep %-18s' $f $keep)"
            step "run $f $keep 1" "$L/run-$f-$keep-1.log" 120 "$new" run --input $D/$f.h5 -o $D/o-$f-1.h5 -f --backend gpu --keep $keep
            row="$row $(printf ' 1: %7s' "$(rrate "$L/run-$f-$keep-1.log")")"
            list=0
            for d in $(seq 1 $((n - 1))); do
                list="$list,$d"
                k=$((d + 1))
                [ $k -ne 2 ] && [ $k -ne $n ] && continue
                step "run $f $keep --devices $list" "$L/run-$f-$keep-$k.log" 120 "$new" run --input $D/$f.h5 \
                    -o $D/o-$f-$k.h5 -f --backend gpu --keep $keep --devices $list
                row="$row $(printf ' %d: %7s' $k "$(rrate "$L/run-$f-$keep-$k.log")")"
                ds="/detections /axes/input_cpi"
                [ $keep = detections,weights ] && ds="/weights $ds"
                step "same: run $f $keep $k devices vs 1" "$L/same.log" 60 "$BIN/h5same" $D/o-$f-1.h5 $D/o-$f-$k.h5 $ds
            done
            results+=("$row")
        done
    done
    rm -rf $D
    echo "---- $(head -1 "$L/device.txt"); $(grep -m1 NVIDIA "$L/device.txt"); $(grep -m1 commit "$L/device.txt"); $n GPUs, $(nproc) CPUs"
    grep -h "passed\|FAIL\|failure\|bit for bit" "$L/tests.log" | tail -4
    printf '%s\n' "${results[@]}"
    grep -h "device [0-9] (" "$L"/hard-ci16-$n.log 2>/dev/null | head -8
    grep -h "differ\|rc=" "$L/same.log" | sort | uniq -c
}
suite_mpi() {
    n=$(nvidia-smi -L | wc -l)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_btl_vader_single_copy_mechanism=none
    # `mpi K ARGS`: rtstap-mpi on K ranks (a script, so that step's timeout can run it)
    # shellcheck disable=SC2016 # $1 and $@ are the wrapper's own
    printf '#!/usr/bin/env bash\nk=$1; shift; exec mpirun --bind-to none -n "$k" "%s/rtstap-mpi" "$@"\n' "$BIN" > "$BIN/mpi"
    chmod +x "$BIN/mpi"
    mpi=$BIN/mpi
    step "rtstap-mpi --version" "$L/mpi.log" 60 $mpi 2 --version
    D=/dev/shm/rtstap-mpi
    recordings $D "$L/gen.log"
    # long recordings (the 480 CPIs repeated: int16 4800 CPIs, complex64 2400, 26 GB each), so
    # that a run's fixed costs (engines, pinned buffers, their release) weigh as in an archive's
    for f in i16:10 c64:5; do
        step "replicate ${f%%:*} x${f##*:}" "$L/gen.log" 300 python3 tests/bench/replicate.py $D/${f%%:*}.h5 \
            $D/${f%%:*}-long.h5 ${f##*:}
        mv $D/${f%%:*}-long.h5 $D/${f%%:*}.h5
    done
    ls -la $D >> "$L/gen.log"
    rrate() { grep -h "CPIs/s over" "$1" | tail -1 | sed 's/^ *\([0-9.]*\) CPIs.*/\1/;s/.*in all: \([0-9.]*\) CPIs.*/\1/'; }
    results=()
    for f in i16 c64; do
        for keep in detections,weights detections; do
            r1=() r2=() rd=() r4=()
            for round in 1 2 3; do
                step "run $f $keep 1 GPU #$round" "$L/run-$f-$keep-1-$round.log" 120 "$BIN/rtstap" run --input $D/$f.h5 \
                    -o $D/o1.h5 -f --backend gpu --keep $keep
                r1+=("$(rrate "$L/run-$f-$keep-1-$round.log")")
                step "mpi -n 2 $f $keep #$round" "$L/mpi-$f-$keep-2-$round.log" 120 $mpi 2 run --input $D/$f.h5 \
                    -o $D/o2.h5 -f --backend gpu --keep $keep
                r2+=("$(rrate "$L/mpi-$f-$keep-2-$round.log")")
                step "run --devices 0,1 $f $keep #$round" "$L/dev-$f-$keep-2-$round.log" 120 "$BIN/rtstap" run \
                    --input $D/$f.h5 -o $D/od.h5 -f --backend gpu --keep $keep --devices 0,1
                rd+=("$(rrate "$L/dev-$f-$keep-2-$round.log")")
                if [ "$n" -ge 4 ]; then
                    step "mpi -n 4 $f $keep #$round" "$L/mpi-$f-$keep-4-$round.log" 120 $mpi 4 run --input $D/$f.h5 \
                        -o $D/o4.h5 -f --backend gpu --keep $keep
                    r4+=("$(rrate "$L/mpi-$f-$keep-4-$round.log")")
                fi
                ds="/detections /axes/input_cpi"
                [ $keep = detections,weights ] && ds="/weights $ds"
                step "same: mpi 2 vs 1 GPU ($f $keep)" "$L/same.log" 60 "$BIN/h5same" $D/o1.h5 $D/o2.h5 $ds
                [ "$n" -ge 4 ] && step "same: mpi 4 vs 1 GPU ($f $keep)" "$L/same.log" 60 "$BIN/h5same" $D/o1.h5 $D/o4.h5 $ds
            done
            med() { printf '%s\n' "$@" | sort -g | sed -n 2p; }
            row="$(printf 'run %-4s --keep %-18s 1 GPU %7s | mpirun -n 2 %7s (%sx) | --devices 0,1 %7s' $f $keep \
                "$(med "${r1[@]}")" "$(med "${r2[@]}")" \
                "$(awk -v a="$(med "${r2[@]}")" -v b="$(med "${r1[@]}")" 'BEGIN{ if (b > 0) printf "%.2f", a / b }')" \
                "$(med "${rd[@]}")")"
            [ ${#r4[@]} -gt 0 ] && row="$row | -n 4 $(med "${r4[@]}")"
            results+=("$row   (rounds: ${r1[*]} / ${r2[*]} / ${rd[*]})")
        done
    done
    cp "$L/mpi-i16-detections,weights-2-1.log" "$OUT/mpi-report.txt" 2>/dev/null
    rm -rf $D
    # stream: every rank replays the hard preset (complex64 and int16 rings)
    for fmt in cf32 ci16; do
        step "stream 1 GPU $fmt" "$L/stream-$fmt-1.log" 90 "$BIN/rtstap" stream --preset hard --cpis 4000 --format $fmt --backend gpu
        step "mpi -n $n stream $fmt" "$L/stream-$fmt-$n.log" 120 $mpi "$n" stream --preset hard --cpis 4000 --format $fmt --backend gpu
        one=$(grep -h "CPIs:" "$L/stream-$fmt-1.log" | tail -1 | sed 's/.*: \([0-9.]*\) CPIs\/s/\1/')
        all=$(grep -h "CPIs/s in all" "$L/stream-$fmt-$n.log" | tail -1 | sed 's/.*replaying: \([0-9.]*\) CPIs.*/\1/')
        results+=("$(printf 'stream hard %-5s 1 GPU %8s | mpirun -n %d: %8s (%sx)' $fmt "$one" $n "$all" \
            "$(awk -v a="$all" -v b="$one" 'BEGIN{ if (b > 0) printf "%.2f", a / b }')")")
    done
    echo "---- $(head -1 "$L/device.txt"); $(grep -m1 NVIDIA "$L/device.txt"); $(grep -m1 commit "$L/device.txt"); $n GPUs, $(nproc) CPUs"
    grep -h "MPI:" "$L/mpi.log" | head -1
    printf '%s\n' "${results[@]}"
    grep -h "rank [0-9] (" "$L/mpi-i16-detections,weights-2-1.log" "$L/stream-ci16-$n.log" 2>/dev/null | head -8
    grep -h "differ\|rc=" "$L/same.log" | sort | uniq -c
}
suite_mpi_checks() {
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_btl_vader_single_copy_mechanism=none
    step "bench --devices all" "$L/bench.log" 300 "$BIN/rtstap" bench --workloads easy,hard --backends gpu,cublas \
        --cpis 2000 --devices all --json "$OUT/bench.json"
    D=/dev/shm/rtstap-fault
    mkdir -p $D
    step "gen 64 CPIs" "$L/fault.log" 120 "$BIN/rtstap" gen --preset hard --cpis 64 --no-clutter --no-jammers --seed 3 \
        --target 200:0:40:0 -o $D/rec.h5 -f --quiet
    step "run 1 GPU" "$L/fault.log" 60 "$BIN/rtstap" run --input $D/rec.h5 -o $D/one.h5 -f --backend gpu --quiet
    printf '#!/usr/bin/env bash\nexec mpirun --bind-to none -n 1 %s run --input %s -o %s -f --backend gpu --quiet : -n 1 -x RTSTAP_TEST_DEVICE_TRAP=10 %s run --input %s -o %s -f --backend gpu --quiet\n' \
        "$BIN/rtstap-mpi" $D/rec.h5 $D/mpi.h5 "$BIN/rtstap-mpi" $D/rec.h5 $D/mpi.h5 > "$BIN/fault"
    chmod +x "$BIN/fault"
    step "mpi -n 2, a device fault on rank 1" "$L/fault.log" 120 "$BIN/fault"
    step "shape" "$L/fault.log" 20 "$BIN/h5shape" $D/mpi.h5 /weights
    step "stopped" "$L/fault.log" 20 "$BIN/h5attr" $D/mpi.h5 /config stopped
    python3 - "$D/one.h5" "$D/mpi.h5" >> "$L/fault.log" 2>&1 <<'PYEOF'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1]), h5py.File(sys.argv[2])
n = b["/weights"].shape[0]
same = np.array_equal(a["/weights"][:n], b["/weights"][...])
da = a["/detections"][...]; db = b["/detections"][...]
same_det = np.array_equal(da[da["cpi"] < n], db)
print(f"prefix of {n} CPIs: weights equal {same}, detections equal {same_det}")
PYEOF
    rm -rf $D
    echo "---- $(head -1 "$L/device.txt"); $(grep -m1 NVIDIA "$L/device.txt"); $(grep -m1 commit "$L/device.txt")"
    grep -h "^workload\|^easy\|^hard" "$L/bench.log"
    grep -h "rank 1\|stopped\|prefix\|/weights\|rc=" "$L/fault.log" | head -12
}
. "$here/device_qr.sh" # the qr-* suites (the QR kernel work, issue 11)
# shellcheck source=device_cholqr.sh
. "$here/device_cholqr.sh" # cholqr2, cholqr, engine-qr, cqfuse, cqauto (issue 47)

failed=()
for suite in "$@"; do
    OUT=$ROOT/$suite L=$ROOT/$suite/logs
    mkdir -p "$L"
    summary=() rows=()
    device_facts "$L/device.txt"
    echo "==== $suite: $(head -1 "$L/device.txt")"
    "suite_${suite//-/_}"
    echo "---- $suite: steps (name, exit status, seconds)"
    printf '%s\n' "${summary[@]}"
    for s in "${summary[@]}"; do [[ $s == *" rc=0 "* ]] || failed+=("$suite: $s"); done
    [ -d "$L" ] && tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$L"
done
echo "==== device.sh $*: ${#failed[@]} step(s) failed or timed out (124)"
printf '%s\n' "${failed[@]}"
