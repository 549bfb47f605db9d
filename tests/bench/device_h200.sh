#!/usr/bin/env bash
# device_h200.sh: issue 47's fresh baselines on the H200 (docs/benchmarks.md "H200"), in two
# calls that each fit a device command's 10 minutes:
#   check  every GPU test (kernels against the CPU references, the engine against the
#          double reference and the CPU engine), compute-sanitizer memcheck/racecheck over
#          the engine and apply tests, then `rtstap stream` (hard, medium, easy; complex64
#          and int16 over the link; resident), one CPI host to host, `rtstap bench` and
#          `rtstap bench-qr` (gpu against cublas at the RT_STAP and PERFECT batches);
#   rec    480-CPI recordings from the page cache (`run --input` and `stream --input`,
#          complex64 and int16), then ncu over a resident hard CPI (the device time a CPI);
#   verify a commit's GPU tests, memcheck over a recording's `run` on the GPU, `run
#          --devices all` against one engine (bit for bit), `--qr cholqr2` refused on the GPU,
#          and a stream spot check;
#   cholqr2 the GPU CholeskyQR2 (issue 47): test_gpu_qr, bench-qr --qr householder,cholqr2
#          against cuBLAS, memcheck and racecheck over test_gpu_qr.
# Logs and JSON under $OUT, a short table last.
# Here:  cmake --preset gpu-h100 (or any CUDA build for sm_90) && bash tests/bench/pack_device.sh BUILD_DIR
# There: mkdir -p .gpulibs && tar -xzf .gpulibs.tgz -C .gpulibs &&
#        export LD_LIBRARY_PATH=$PWD/.gpulibs:$LD_LIBRARY_PATH && bash tests/bench/device_h200.sh check|rec
mode=${1:?check, rec, verify or cholqr2}
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device-$mode.txt"
cp "$L/device-$mode.txt" "$L/device.txt"
R=$BIN/rtstap
S="$R stream --backend gpu --keep detections"
lat() { grep -h "latency ms" "$1" | tail -1 | sed 's/^ *//'; }
rows=()

if [ "$mode" = check ]; then
    for t in test_gpu_qr test_gpu_weights test_gpu_cfar test_gpu_apply test_gpu_doppler test_gpu_engine \
             test_gpu_devices test_engine test_pipeline; do
        step "$t" "$L/tests.log" 150 "$BIN/$t"
    done
    for tool in memcheck racecheck; do
        for t in test_gpu_engine test_gpu_apply; do
            step "$tool $t" "$L/sanitizer.log" 120 env RTSTAP_GPU_QUICK=1 "$cs" --tool $tool --error-exitcode 9 "$BIN/$t"
        done
    done
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
    report_head "$L"
    echo "CPIs/s, --keep detections, 6 000 CPIs, 3 slots unless named:"
    printf '%s\n' "${rows[@]}"
    echo "hard link int16, 4 slots: $(rate "$L/hard-link16-s4.log"); hard resident, 4 slots: $(rate "$L/hard-res-s4.log")"
    echo "hard, one slot, c64:   $(lat "$L/hard-one.log")"
    echo "hard, one slot, int16: $(lat "$L/hard-one16.log")"
    grep -h "^workload\|^easy\|^medium\|^hard" "$L/bench.log" | cut -c1-160
    grep -h -E "^ +[0-9]+ +[0-9]+ +[0-9]+ " "$L/bench-qr.log" | cut -c1-120
fi

if [ "$mode" = rec ]; then
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
    python3 "$(dirname "$0")/ncu_summary.py" "$OUT/ncu-hard.csv" | cut -c1-150
fi
if [ "$mode" = cholqr2 ]; then # issue 47: the GPU CholeskyQR2 (kernels/cholqr.cu)
    step "test_gpu_qr" "$L/tests.log" 200 "$BIN/test_gpu_qr"
    step "bench-qr cholqr2" "$L/bench-qr.log" 150 "$R" bench-qr --sizes 240x66x128,240x66x1280,192x96x128,80x16x384 \
        --backends gpu,cublas --qr householder,cholqr2 --json "$OUT/bench-qr-cholqr2.json"
    for tool in memcheck racecheck; do
        step "$tool test_gpu_qr" "$L/sanitizer.log" 150 env RTSTAP_GPU_QUICK=1 "$cs" --tool $tool --error-exitcode 9 "$BIN/test_gpu_qr"
    done
    report_head "$L"
    grep -h "cholqr2" "$L/tests.log" | grep -v " ok$" | head -20
    grep -h -E "^ +[0-9]+ +[0-9]+ +[0-9]+ " "$L/bench-qr.log" | cut -c1-120
fi
if [ "$mode" = verify ]; then
    for t in test_gpu_engine test_gpu_devices test_gpu_apply test_gpu_qr test_engine test_pipeline; do
        step "$t" "$L/tests.log" 150 "$BIN/$t"
    done
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
    step "qr cholqr2 on gpu refused (expect rc 1)" "$L/run.log" 30 sh -c \
        "'$R' run --input $D/rec.h5 -o $D/q.h5 -f --backend gpu --qr cholqr2; [ \$? -eq 1 ] && [ ! -e $D/q.h5 ]"
    step "stream hard" "$L/stream.log" 60 $S --preset hard --cpis 6000 --format ci16
    report_head "$L"
    grep -h "CPIs:" "$L/stream.log" | tail -1
    grep -h "same\|differ" "$L/run.log" | head
fi
tar -C "$OUT" -czf "$OUT/logs-$mode.tgz" logs && rm -rf "$L"
printf '%s\n' "${summary[@]}" | grep -v "rc=0 " | head -20
