#!/usr/bin/env bash
# device_state34.sh: issue 34's yardsticks at one commit, for docs/benchmarks.md — `stream
# --resident --keep detections` (device compute alone) on the presets with the apply kernel
# as dispatched and with RTSTAP_APPLY_ROWS=1, `stream` link-bound with int16 input (hard),
# one CPI host to host (one slot) with complex64 and int16 input (hard), and `bench`'s
# stage medians and resident column. Logs under $OUT; a short table last.
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
step "test_gpu_engine" "$L/tests.log" 300 "$BIN/test_gpu_engine"
S="$BIN/rtstap stream --backend gpu"
lat() { grep -h "latency ms" "$1" | tail -1 | sed 's/^ *//'; }
rows=()
for p in hard medium easy; do
    step "$p resident rows" "$L/$p-rows.log" 60 env RTSTAP_APPLY_ROWS=1 $S --preset $p --cpis 6000 --keep detections --resident
    step "$p resident" "$L/$p-res.log" 60 $S --preset $p --cpis 6000 --keep detections --resident
    step "$p resident int16" "$L/$p-res16.log" 60 $S --preset $p --cpis 6000 --keep detections --resident --format ci16
    step "$p link int16" "$L/$p-link16.log" 60 $S --preset $p --cpis 6000 --keep detections --format ci16
    step "$p link c64" "$L/$p-link.log" 60 $S --preset $p --cpis 6000 --keep detections
    rows+=("$(printf '%-6s resident %8s (rows %8s, int16 %8s) | link int16 %8s, complex64 %8s' $p \
        "$(rate "$L/$p-res.log")" "$(rate "$L/$p-rows.log")" "$(rate "$L/$p-res16.log")" \
        "$(rate "$L/$p-link16.log")" "$(rate "$L/$p-link.log")")")
done
step "hard one slot c64" "$L/hard-one.log" 60 $S --preset hard --cpis 2000 --slots 1 --keep detections
step "hard one slot int16" "$L/hard-one16.log" 60 $S --preset hard --cpis 2000 --slots 1 --keep detections --format ci16
step "bench" "$L/bench.log" 200 "$BIN/rtstap" bench --workloads easy,medium,hard --backends gpu --cpis 2000 \
    --json "$OUT/bench.json"
echo "---- $(head -1 "$L/device.txt"); $(grep -m1 NVIDIA "$L/device.txt"); $(grep -m1 commit "$L/device.txt")"
grep -h "all passed\|^FAIL\|failure" "$L/tests.log" | head -3
echo "CPIs/s, --keep detections, 6 000 CPIs, 3 slots:"
printf '%s\n' "${rows[@]}"
echo "hard, one slot (host to host), complex64: $(lat "$L/hard-one.log")"
echo "hard, one slot (host to host), int16:     $(lat "$L/hard-one16.log")"
grep -h "stage medians" "$L/hard-one16.log" | tail -1
grep -h "^workload\|^easy\|^medium\|^hard" "$L/bench.log"
printf '%s\n' "${summary[@]}" | grep -v "rc=0 " | head
