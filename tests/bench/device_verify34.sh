#!/usr/bin/env bash
# device_verify34.sh: the session's final commit on the GPU — the GPU tests, `bench` (the
# presets' stages and columns, JSON) and `bench-qr` (the issue's QR sizes, gpu backend) for
# docs/benchmarks.md. Logs under $OUT; a short table last.
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
for t in test_gpu_apply test_gpu_doppler test_gpu_cfar test_gpu_engine; do step "$t" "$L/tests.log" 200 "$BIN/$t"; done
step "bench" "$L/bench.log" 200 "$BIN/rtstap" bench --workloads easy,medium,hard --backends gpu --cpis 2000 \
    --json "$OUT/bench.json"
step "bench-qr" "$L/bench-qr.log" 200 "$BIN/rtstap" bench-qr --backends gpu --repeat 20 \
    --sizes 240x66x128,192x96x128,80x16x384,240x66x1280 --json "$OUT/bench-qr.json"
report_head "$L"
grep -h "^workload\|^easy\|^medium\|^hard" "$L/bench.log"
grep -h "x128\|x384\|x1280\|size" "$L/bench-qr.log" | head -12
printf '%s\n' "${summary[@]}" | grep -v "rc=0 " | head
