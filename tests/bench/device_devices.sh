#!/usr/bin/env bash
# device_devices.sh: issue 32 on a host of several GPUs — test_gpu_devices (one thread and
# engine per device, result for result against one engine on device 0), then `stream
# --devices` over 1, 2, ... all GPUs, hard and easy, complex64 and int16 rings, each device
# its equal share of the CPIs; and, for the host's own limit, one `stream` process per GPU at
# once (the issue's yardstick). Logs under $OUT, a table last.
# Here:  bash tests/bench/pack_device.sh BUILD
# There: (device_engine.sh's header) && bash tests/bench/device_devices.sh
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
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
printf '%s\n' "${summary[@]}"
