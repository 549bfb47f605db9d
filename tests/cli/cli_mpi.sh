#!/usr/bin/env bash
# cli_mpi: rtstap-mpi (issue 32) against rtstap, dataset for dataset — `mpirun -n N
# rtstap-mpi run` deals a recording's CPIs to N ranks (CPI g to rank g mod N), each rank writes
# its rows into the one file (MPI-IO at the offsets rank 0's writer allocated), and the file
# equals the one-process run's: with the output kept, with the default weights and
# detections, detections alone, more ranks than CPIs, CPIs never written. Faults: a device
# fault on rank 1 publishes the CPIs before the first missing one, marked stopped, naming
# the CPIs rank 1 lost (as one process stopped there); a bad sample on rank 1 publishes
# nothing; a rank failing before the others meet is named. `stream` sums the ranks; other
# commands run on rank 0 alone; a usage error is said once. CPU backend (no GPU here).
# env: RTSTAP_BIN, RTSTAP_MPI_BIN (the build's rtstap-mpi, when it made one),
# RTSTAP_REQUIRE_MPI=1: fail instead of skipping when a build that makes rtstap-mpi
# (RTSTAP_MPI_WANTED=1, set by CMake: not under sanitizers or fuzzing) did not.
set -u
. "$(dirname "$0")/../support/cli_mpi_env.sh" cli_mpi # bin, mpi; skips without rtstap-mpi
shape=$RTSTAP_TOOLS_DIR/h5shape
same=$RTSTAP_TOOLS_DIR/h5same
attr=$RTSTAP_TOOLS_DIR/h5attr
mkpartial=$RTSTAP_TOOLS_DIR/mkpartial
run_n() { local n=$1; shift; mpirun --oversubscribe -n "$n" "$mpi" "$@"; }
. "$(dirname "$0")/../support/cli_check.sh" # tmp, fail, check, no_temp

"$bin" gen --preset ward --channels 6 --pulses 32 --range-gates 240 --no-clutter --cpis 9 \
    --target 41:0:100:25 --target-drift 0:2 --seed 5 --out "$tmp/rec.h5" --quiet
opts=(--backend cpu --doppler-order 3 --training 60 --segments 2 --beams 3 --loading 0.01)
all_sets=(/weights /output/iq /detections /axes/input_cpi /steering /axes/doppler_hz /axes/range_cell)

# the output kept: every dataset
"$bin" run --input "$tmp/rec.h5" -o "$tmp/ser_o.h5" "${opts[@]}" --keep-output --quiet
run_n 2 run --input "$tmp/rec.h5" -o "$tmp/mpi2_o.h5" "${opts[@]}" --keep-output --json "$tmp/mpi2.json" \
    2>"$tmp/mpi2.err"
rc=$?
check "-n 2 --keep-output: exit 0 ($rc), the serial file dataset for dataset" \
    '[ $rc -eq 0 ] && "$same" "$tmp/ser_o.h5" "$tmp/mpi2_o.h5" "${all_sets[@]}" >/dev/null &&
     [ "$("$shape" "$tmp/mpi2_o.h5" /timing/cpi_ms)" = "/timing/cpi_ms 9x8" ] &&
     [ "$("$attr" "$tmp/mpi2_o.h5" /config cpis)" = "cpis 9" ]'
check "-n 2: the report gives each rank and the writer, the JSON each rank's rate" \
    'grep -q "rank 0 (cpu): 5 CPIs" "$tmp/mpi2.err" && grep -q "rank 1 (cpu): 4 CPIs" "$tmp/mpi2.err" &&
     grep -q "imbalance" "$tmp/mpi2.err" && grep -q "by pwrite (every rank on one host)" "$tmp/mpi2.err" &&
     [ "$(grep -o "\"rank\":" "$tmp/mpi2.json" | wc -l)" -eq 2 ] && grep -q "\"ranks\":[[:space:]]*2" "$tmp/mpi2.json"'
# the ranks' rows by MPI-IO (as on several hosts), the same file
RTSTAP_MPI_IO=mpiio run_n 2 run --input "$tmp/rec.h5" -o "$tmp/mpiio.h5" "${opts[@]}" --keep-output 2>"$tmp/mpiio.err"
check "-n 2 by MPI-IO (RTSTAP_MPI_IO=mpiio): the serial file" \
    '"$same" "$tmp/ser_o.h5" "$tmp/mpiio.h5" "${all_sets[@]}" >/dev/null && grep -q "by MPI-IO" "$tmp/mpiio.err"'
# the default (weights and detections) on 3 ranks; detections alone on 2
"$bin" run --input "$tmp/rec.h5" -o "$tmp/ser.h5" "${opts[@]}" --quiet
run_n 3 run --input "$tmp/rec.h5" -o "$tmp/mpi3.h5" "${opts[@]}" --quiet
check "-n 3, weights and detections: the serial file" \
    '"$same" "$tmp/ser.h5" "$tmp/mpi3.h5" /weights /detections /axes/input_cpi >/dev/null'
"$bin" run --input "$tmp/rec.h5" -o "$tmp/ser_d.h5" "${opts[@]}" --keep detections --quiet
run_n 2 run --input "$tmp/rec.h5" -o "$tmp/mpi_d.h5" "${opts[@]}" --keep detections --quiet
check "-n 2 --keep detections: the serial detections, no weights" \
    '"$same" "$tmp/ser_d.h5" "$tmp/mpi_d.h5" /detections /axes/input_cpi >/dev/null &&
     [ "$("$shape" "$tmp/mpi_d.h5" /weights)" = "/weights missing" ]'
# more ranks than CPIs: rank 3 has none
"$bin" gen --preset ward --channels 6 --pulses 32 --range-gates 240 --no-clutter --cpis 3 \
    --target 41:0:100:25 --seed 6 --out "$tmp/rec3.h5" --quiet
"$bin" run --input "$tmp/rec3.h5" -o "$tmp/ser3.h5" "${opts[@]}" --quiet
run_n 4 run --input "$tmp/rec3.h5" -o "$tmp/mpi4.h5" "${opts[@]}" --quiet
check "-n 4 on 3 CPIs: the serial file" '"$same" "$tmp/ser3.h5" "$tmp/mpi4.h5" /weights /detections >/dev/null'
# CPIs never written (0, 1, 3, 5 of 6): each rank's rows are the right input CPIs
"$mkpartial" recording "$tmp/gaps.h5" 4,8,48 6 1 0,1,3,5
easy=(--backend cpu --doppler-order 1 --training 16 --segments 1 --beams 2 --loading 0.1 --quiet)
"$bin" run --input "$tmp/gaps.h5" -o "$tmp/ser_g.h5" "${easy[@]}" 2>/dev/null
run_n 2 run --input "$tmp/gaps.h5" -o "$tmp/mpi_g.h5" "${easy[@]}" 2>/dev/null
check "-n 2, CPIs 2 and 4 never written: /axes/input_cpi 0 1 3 5, the serial file" \
    '[ "$("$mkpartial" ints "$tmp/mpi_g.h5" /axes/input_cpi)" = "0 1 3 5" ] &&
     "$same" "$tmp/ser_g.h5" "$tmp/mpi_g.h5" /weights /detections >/dev/null'

# a device fault on rank 1 at its third CPI (input CPI 5): CPIs 0-4 published, stopped, rank
# 1's lost CPIs named; the rows those of one process stopped at the same CPI
RTSTAP_TEST_FAIL_ENGINE=6 "$bin" run --input "$tmp/rec.h5" -o "$tmp/ser_f.h5" "${opts[@]}" --quiet 2>/dev/null
mpirun --oversubscribe -n 1 "$mpi" run --input "$tmp/rec.h5" -o "$tmp/mpi_f.h5" "${opts[@]}" --quiet : \
    -n 1 -x RTSTAP_TEST_FAIL_ENGINE=3 "$mpi" run --input "$tmp/rec.h5" -o "$tmp/mpi_f.h5" "${opts[@]}" \
    --quiet >/dev/null 2>"$tmp/f.err"
rc=$?
check "a device fault on rank 1: exit 1 ($rc), it and its lost CPIs named, 5 CPIs published stopped" \
    '[ $rc -eq 1 ] && grep -q "rank 1 (cpu): error: .*rec.h5: CPI 5: injected device fault.*it lost input CPIs 5, 7" "$tmp/f.err" &&
     [ "$("$shape" "$tmp/mpi_f.h5" /weights)" = "/weights 5x32x2x3x18" ] &&
     "$attr" "$tmp/mpi_f.h5" /config stopped | grep -q "by a failure of rank 1 at input CPI 5, after 5 of the 9"'
check "a device fault on rank 1: the rows of one process stopped there; no temporary left" \
    '"$same" "$tmp/ser_f.h5" "$tmp/mpi_f.h5" /weights /detections /axes/input_cpi >/dev/null && no_temp "$tmp"'
# a bad sample in input CPI 3 (rank 1's): nothing published, as one process
if /usr/bin/python3 -c "import h5py" 2>/dev/null; then
    cp "$tmp/rec.h5" "$tmp/nan.h5"
    /usr/bin/python3 -c "
import h5py, numpy as np
with h5py.File('$tmp/nan.h5', 'r+') as f:
    d = f['/data/iq']; x = d[3]; x[0, 0, 100] = complex(np.nan, 0); d[3] = x"
    run_n 2 run --input "$tmp/nan.h5" -o "$tmp/mpi_nan.h5" "${opts[@]}" --quiet >/dev/null 2>"$tmp/nan.err"
    rc=$?
    check "a NaN in input CPI 3 (rank 1): exit 1 ($rc), named, nothing published, no temporary" \
        '[ $rc -eq 1 ] && grep -q "rank 1 (cpu): error: .*nan.h5: CPI 3: non-finite input sample" "$tmp/nan.err" &&
         [ ! -e "$tmp/mpi_nan.h5" ] && no_temp "$tmp"'
elif [ "${RTSTAP_REQUIRE_READERS:-0}" = 1 ]; then
    echo "FAIL: python3-h5py is missing"; fail=1
fi
# a rank failing before the ranks meet (its input missing): named by rank 0, nothing written
mpirun --oversubscribe -n 1 "$mpi" run --input "$tmp/rec.h5" -o "$tmp/mpi_m.h5" "${opts[@]}" --quiet : \
    -n 1 "$mpi" run --input "$tmp/missing.h5" -o "$tmp/mpi_m.h5" "${opts[@]}" --quiet >/dev/null 2>"$tmp/m.err"
rc=$?
check "rank 1's input missing: exit 1 ($rc), rank 1 named by rank 0, nothing written" \
    '[ $rc -eq 1 ] && grep -q "^rtstap-mpi: rank 1: error: .*missing.h5" "$tmp/m.err" && [ ! -e "$tmp/mpi_m.h5" ] &&
     no_temp "$tmp"'

# SIGTERM to mpirun (which forwards it): each rank finishes its CPIs in flight, the CPIs
# before the first missing one are published, marked stopped (each rank's reader stalls
# before its third CPI: 4 CPIs ran)
# term_after STALL N INPUT DIR: mpirun -n N with every reader stalled 8 s before its CPI
# STALL, SIGTERM 3 s in; rc, DIR/o.h5, DIR.err
term_after() {
    mkdir -p "$4"
    RTSTAP_TEST_READER_STALL=$1:8000 mpirun --oversubscribe -n "$2" "$mpi" run --input "$3" \
        -o "$4/o.h5" "${opts[@]}" --quiet --readers 1 >/dev/null 2>"$4.err" &
    local pid=$!
    sleep 3
    kill -TERM $pid
    wait $pid
    rc=$?
}
term_after 2 2 "$tmp/rec.h5" "$tmp/sig"
check "SIGTERM to mpirun: exit non-zero ($rc), 4 CPIs published, stopped, the serial rows" \
    '[ $rc -ne 0 ] && grep -q "stopped by SIGTERM after 4 of the 9 written CPIs" "$tmp/sig.err" &&
     [ "$("$shape" "$tmp/sig/o.h5" /weights)" = "/weights 4x32x2x3x18" ] && no_temp "$tmp/sig" &&
     "$attr" "$tmp/sig/o.h5" /config stopped | grep -q "by SIGTERM"'

# a rank with no CPI waits for the others through SIGTERM (its stop stays graceful until the
# file is published): 4 ranks on the 3-CPI recording, every reader stalled before its CPI;
# rank 3, with none, waits in the ranks' meeting when the signal comes
term_after 0 4 "$tmp/rec3.h5" "$tmp/sig3"
check "SIGTERM while ranks wait (rank 3 has no CPI): exit non-zero ($rc), published, stopped, no temporary" \
    '[ $rc -ne 0 ] && grep -q "stopped by SIGTERM" "$tmp/sig3.err" && [ -s "$tmp/sig3/o.h5" ] && no_temp "$tmp/sig3" &&
     "$attr" "$tmp/sig3/o.h5" /config stopped | grep -q "by SIGTERM"'
# many detections (Pfa 1e-2: odd counts per rank, so each rank's packed rows end unaligned
# unless padded): the serial detections row for row
"$bin" run --input "$tmp/rec.h5" -o "$tmp/ser_pfa.h5" "${opts[@]}" --cfar-pfa 1e-2 --quiet
run_n 3 run --input "$tmp/rec.h5" -o "$tmp/mpi_pfa.h5" "${opts[@]}" --cfar-pfa 1e-2 --quiet
check "-n 3 at Pfa 1e-2: the serial detections and weights" \
    '"$same" "$tmp/ser_pfa.h5" "$tmp/mpi_pfa.h5" /weights /detections /axes/input_cpi >/dev/null'

# stream: every rank replays; the sum and each rank's latency in rank 0's report
run_n 2 stream --preset easy --backend cpu --cpis 12 --json "$tmp/s.json" 2>"$tmp/s.err"
rc=$?
check "stream -n 2: exit 0 ($rc), each rank's rate and latency, their sum" \
    '[ $rc -eq 0 ] && grep -q "ranks: .*2 ranks.*CPIs/s in all" "$tmp/s.err" && grep -q "rank 1 (cpu): 12 CPIs" "$tmp/s.err" &&
     grep -q "\"total_cpis_per_s\"" "$tmp/s.json" && [ "$(grep -o "\"latency_p99_ms\"" "$tmp/s.json" | wc -l)" -eq 2 ]'
# other commands: rank 0 alone
run_n 2 gen --preset ward --channels 4 --pulses 8 --range-gates 48 --out "$tmp/g.h5" --quiet 2>"$tmp/g.err"
rc=$?
check "gen -n 2: exit 0 ($rc) on rank 0 alone" '[ $rc -eq 0 ] && [ -s "$tmp/g.h5" ] && grep -q "runs on rank 0 alone" "$tmp/g.err"'
"$bin" run --input "$tmp/g.h5" -o "$tmp/one_s.h5" --backend cpu --quiet
run_n 2 run --input "$tmp/g.h5" -o "$tmp/one_m.h5" --backend cpu --quiet 2>/dev/null
check "one CPI -n 2: rank 0 runs it, the serial file" '"$same" "$tmp/one_s.h5" "$tmp/one_m.h5" /weights /detections >/dev/null'
# a usage error: said once, exit 2
run_n 2 run --input "$tmp/rec.h5" -o "$tmp/u.h5" --beams 0 >/dev/null 2>"$tmp/u.err"
rc=$?
check "a usage error -n 2: exit 2 ($rc), said once" '[ $rc -eq 2 ] && [ "$(grep -c "^rtstap: error:" "$tmp/u.err")" -eq 1 ]'
# a launcher that gives its tasks no MPI world (issue 48; a real srun in cli_slurm.sh): Slurm's
# variables of task 0 of 2, set by hand. No PMIx or PMI: refused before MPI_Init; with PMI-1's
# variables, which Open MPI does not speak (it starts alone, a world of 1): refused after it.
# One line naming the fix, exit 1, nothing written.
refused() {
    local why=$1; shift
    env SLURM_STEP_NUM_TASKS=2 SLURM_NTASKS=2 SLURM_PROCID=0 "$@" "$mpi" run --input "$tmp/rec.h5" \
        -o "$tmp/nw.h5" "${opts[@]}" --quiet >/dev/null 2>"$tmp/nw.err"
    rc=$?
    check "srun's 2 tasks $why: exit 1 ($rc), one line naming srun --mpi=pmix, nothing written" \
        '[ $rc -eq 1 ] && [ "$(grep -c "^rtstap-mpi: error:" "$tmp/nw.err")" -eq 1 ] && grep -q "^rtstap-mpi: error: srun started 2 tasks $why: .*srun --mpi=pmix" "$tmp/nw.err" &&
         [ ! -e "$tmp/nw.h5" ] && no_temp "$tmp"' || cat "$tmp/nw.err"
}
refused "without an MPI world (no PMIx or PMI)"
check "... before MPI_Init: that line alone on stderr" '[ "$(wc -l <"$tmp/nw.err")" -eq 1 ]'
refused "that each started MPI alone (a world of 1 rank)" PMI_RANK=0 PMI_SIZE=2
exit $fail
