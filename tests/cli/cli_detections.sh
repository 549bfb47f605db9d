#!/usr/bin/env bash
# cli_detections: many detections per CPI (issue 43, row 11). The run's memory check counts
# the detections its writers hold (a CPI's at the engine's hit capacity in each of the
# writer's queue entries, and the result writer's batch); the result writer writes its
# detections in batches bounded in bytes (the same file as with the default budget);
# rtstap-mpi's ranks hold theirs up to the budget and one CPI's more, the rest in a
# temporary file beside the output (unlinked at once), sent to rank 0 round by round:
# the serial file, dataset for dataset. RTSTAP_TEST_DETECTION_BYTES sets a small budget.
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
same=$RTSTAP_TOOLS_DIR/h5same
. "$(dirname "$0")/../support/cli_check.sh" # tmp, fail, check, no_temp

"$bin" gen --preset ward --channels 6 --pulses 32 --range-gates 240 --no-clutter --cpis 9 \
    --target 41:0:100:25 --seed 5 --out "$tmp/rec.h5" --quiet
opts=(--backend cpu --doppler-order 3 --training 60 --segments 2 --loading 0.01 --quiet)

# the memory check: 64 beams at Pfa 0.5 (every cell may detect: 64 x 32 x 240 cells of 20
# bytes, in 6 copies, and the 64 MiB batch: 0.126 GB more than without a detector)
queues() { # the "cubes and queues" of the memory check's refusal, in GB
    RTSTAP_MEMORY_LIMIT=1k "$bin" run --input "$tmp/rec.h5" -o "$tmp/m.h5" "${opts[@]}" --beams 64 "$@" 2>&1 |
        sed -n 's/.*cubes and queues \([0-9.e+-]*\) GB.*/\1/p'
}
q0=$(queues --cfar none)
q1=$(queues --cfar-pfa 0.5)
check "the memory check counts the detections: cubes and queues $q0 GB without a detector, $q1 GB at Pfa 0.5" \
    '[ -n "$q0" ] && [ -n "$q1" ] && awk -v a="$q0" -v b="$q1" "BEGIN { exit !(b - a > 0.12) }"'

# the result writer's batches bounded in bytes: the file of the default budget
"$bin" run --input "$tmp/rec.h5" -o "$tmp/ser.h5" "${opts[@]}" --beams 3 --cfar-pfa 0.2
RTSTAP_TEST_DETECTION_BYTES=20000 "$bin" run --input "$tmp/rec.h5" -o "$tmp/small.h5" "${opts[@]}" --beams 3 --cfar-pfa 0.2
check "a 20 kB detection batch: the file of the default one" \
    '"$same" "$tmp/ser.h5" "$tmp/small.h5" /weights /detections /axes/input_cpi >/dev/null'

# rtstap-mpi: 3 ranks, about 85 kB of detections a CPI, 255 kB a rank, a 20 kB budget
if [ -x "${RTSTAP_MPI_BIN:-}" ] && command -v mpirun >/dev/null; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
    RTSTAP_TEST_DETECTION_BYTES=20000 mpirun --oversubscribe -n 3 "$RTSTAP_MPI_BIN" run --input "$tmp/rec.h5" \
        -o "$tmp/mpi.h5" "${opts[@]}" --beams 3 --cfar-pfa 0.2 --json "$tmp/mpi.json" 2>"$tmp/mpi.err"
    rc=$?
    held=$(grep -o '"detections_held_max_bytes":[[:space:]]*[0-9]*' "$tmp/mpi.json" 2>/dev/null | grep -o '[0-9]*$' | sort -n | tail -1)
    spilled=$(grep -o '"detections_spilled_bytes":[[:space:]]*[0-9]*' "$tmp/mpi.json" 2>/dev/null | grep -o '[0-9]*$' | sort -n | head -1)
    check "-n 3, a 20 kB budget: exit 0 ($rc), the serial file, no temporary" \
        '[ $rc -eq 0 ] && "$same" "$tmp/ser.h5" "$tmp/mpi.h5" /weights /detections /axes/input_cpi >/dev/null && no_temp "$tmp"'
    check "-n 3, a 20 kB budget: each rank held at most ${held:-?} bytes (the budget and about a CPI's), the rest (${spilled:-?} bytes at least) went aside" \
        '[ -n "$held" ] && [ -n "$spilled" ] && [ "$held" -lt 150000 ] && [ "$spilled" -gt 100000 ]'
elif [ "${RTSTAP_REQUIRE_MPI:-0}" = 1 ] && [ "${RTSTAP_MPI_WANTED:-0}" = 1 ]; then
    echo "FAIL: rtstap-mpi was not built"; fail=1
fi
exit $fail
