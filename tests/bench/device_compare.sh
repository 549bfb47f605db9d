#!/usr/bin/env bash
# device_compare.sh: a refactor's GPU check (issue 30: "no behaviour change, speed within
# run-to-run noise, compared in the same call"). The packed build's GPU tests and the GPU
# fault script, then `rtstap stream --preset hard`, `bench-qr` (the RT_STAP batches) and
# `bench --workloads hard` of the packed rtstap and of a reference rtstap, alternated three
# times so that drift shows as spread, not as a difference. Logs under $OUT, a table last.
# Here:  bash tests/bench/pack_device.sh BUILD; tar -cJf .gpuref.txz -C REF_BUILD rtstap
# There: (device_engine.sh's header) && bash tests/bench/device_compare.sh .gpuref.txz
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs" "$BIN/ref"
L=$OUT/logs
tar -xJf "${1:?usage: device_compare.sh REF.txz}" -C "$BIN/ref" || exit 1
device_facts "$L/device.txt"
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
printf '%s\n' "${summary[@]}"
