#!/usr/bin/env bash
# device_all.sh: one call on the GPU machine that checks and times a release — every
# test that can use a GPU (GPU QR, weights, CFAR; the pipeline and PERFECT against the
# double-precision reference with the GPU backends), compute-sanitizer, `rtstap bench-qr`,
# `rtstap run` on the three presets with every backend, and the PERFECT sizes. Logs under
# $OUT, a short table last.
#
# Here:  bash tests/bench/pack_device.sh BUILD_DIR   (makes .gpubin/bin.txz, .gpulibs.tgz)
# There: mkdir -p .gpulibs && tar -xzf .gpulibs.tgz -C .gpulibs &&
#        export LD_LIBRARY_PATH=$PWD/.gpulibs:$LD_LIBRARY_PATH && bash tests/bench/device_all.sh
. "$(dirname "$0")/device_common.sh"
device_facts "$OUT/device.txt"

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
        for i in 1 2; do
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
