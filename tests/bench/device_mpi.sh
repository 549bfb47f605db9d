#!/usr/bin/env bash
# device_mpi.sh: issue 32's MPI step on a host of several GPUs — `mpirun -n N rtstap-mpi run`
# over the hard preset's recordings (int16, 4800 CPIs, and complex64, 2400: in /dev/shm,
# memory, as the page cache), against the one-GPU `rtstap run` of the same file and the one-process
# `run --devices`, three alternated rounds; every MPI file equal to the one-GPU run's
# (h5same); then `mpirun -n N rtstap-mpi stream` (every rank replaying the hard preset).
# The machine's own Open MPI runs rtstap-mpi (pack_device.sh carries it without MPI's
# libraries); ranks unbound (--bind-to none: each rank's reader threads need cores).
# Here:  bash tests/bench/pack_device.sh BUILD
# There: (device_engine.sh's header) && bash tests/bench/device_mpi.sh
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
n=$(nvidia-smi -L | wc -l)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# `mpi K ARGS`: rtstap-mpi on K ranks (a script, so that step's timeout can run it)
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
printf '%s\n' "${summary[@]}" | grep -v "rc=0 " | head -20
