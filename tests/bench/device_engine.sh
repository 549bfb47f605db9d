#!/usr/bin/env bash
# device_engine.sh: one call on the GPU machine that checks and times the streaming engine
# — the engine tests on the GPU (GPU vs double reference and CPU engine, graphs vs direct,
# 1000-CPI soak), the pipeline test with GPU backends, compute-sanitizer over the engine
# test, `rtstap stream` on every workload and slot count, and `rtstap bench` over every
# workload and backend. Logs and JSON under $OUT, a short table last.
#
# Here:  bash tests/bench/pack_device.sh BUILD_DIR   (makes .gpubin/bin.tgz, .gpulibs.tgz)
# There: mkdir -p .gpulibs && tar -xzf .gpulibs.tgz -C .gpulibs &&
#        export LD_LIBRARY_PATH=$PWD/.gpulibs:$LD_LIBRARY_PATH && bash tests/bench/device_engine.sh [quick]
set -uo pipefail
OUT=${OUT:-$PWD/out-device}
BIN=$PWD/.gpubin
mode=${1:-full}
mkdir -p "$OUT"
tar -xzf "$BIN/bin.tgz" -C "$BIN" || exit 1
export RTSTAP_SOURCE_DIR=$PWD
summary=()
step() { # step NAME LOG LIMIT CMD...
    local name=$1 log=$2 limit=$3; shift 3
    local t0=$SECONDS
    echo "==== $name: $*" >> "$log"
    timeout "$limit" stdbuf -oL -eL "$@" >> "$log" 2>&1
    local rc=$?
    echo "==== $name: rc=$rc" >> "$log"
    summary+=("$(printf '%-40s rc=%-3s %4ss' "$name" "$rc" "$((SECONDS - t0))")")
}
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; nproc; lscpu | grep -E "Model name|Flags" | cut -c1-200; "$BIN/rtstap" --version; } > "$OUT/device.txt" 2>&1

# 1. correctness
step test_gpu_engine "$OUT/tests.log" 300 "$BIN/test_gpu_engine"
step test_engine "$OUT/tests.log" 200 "$BIN/test_engine"
step test_gpu_cfar "$OUT/tests.log" 120 "$BIN/test_gpu_cfar"
if [ "$mode" = full ]; then
    step test_pipeline "$OUT/tests.log" 300 "$BIN/test_pipeline"
    step test_perfect "$OUT/tests.log" 300 "$BIN/test_perfect"
    cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
    for tool in memcheck racecheck synccheck; do
        step "$tool test_engine" "$OUT/sanitize.log" 240 "$cs" --tool "$tool" --error-exitcode 9 "$BIN/test_engine"
    done
fi

# 2. streaming: every workload, slot counts on hard, output kept once
for w in hard easy medium perfect-small perfect-medium perfect-large; do
    step "stream $w" "$OUT/stream.log" 120 "$BIN/rtstap" stream --preset $w --cpis 3000 --slots 3 --deadline-ms 1 --json "$OUT/stream-$w.json"
done
for s in 1 2 4; do
    step "stream hard slots $s" "$OUT/stream.log" 120 "$BIN/rtstap" stream --preset hard --cpis 3000 --slots $s --deadline-ms 1
done
step "stream hard no-graphs" "$OUT/stream.log" 120 "$BIN/rtstap" stream --preset hard --cpis 3000 --no-graphs
step "stream hard keep output" "$OUT/stream.log" 120 "$BIN/rtstap" stream --preset hard --cpis 2000 --keep detections,weights,output

# 3. every stage, every backend, every workload
if [ "$mode" = full ]; then
    step bench "$OUT/bench.log" 420 "$BIN/rtstap" bench --cpis 300 --cpu-cpis 5 --json "$OUT/bench.json"
else
    step bench "$OUT/bench.log" 300 "$BIN/rtstap" bench --backends gpu,cublas --cpis 300 --json "$OUT/bench.json"
fi

echo "---- failures and sanitizer verdicts"
grep -h -E "^FAIL|ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY|passed|failure|skipped" "$OUT"/tests.log "$OUT"/sanitize.log 2>/dev/null | sort | uniq -c | head -30
echo "---- stream"; grep -E "^rtstap stream|engine:|CPIs:|latency|copy:|memory" "$OUT/stream.log" | cut -c1-160
echo "---- bench"; grep -v "^====\|^bench:" "$OUT/bench.log" | tail -30
echo "---- steps"; printf '%s\n' "${summary[@]}"
