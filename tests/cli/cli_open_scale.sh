#!/usr/bin/env bash
# cli_open_scale: opening a recording of many small CPIs, and running it, is linear in its
# CPIs (issue 43, row 10). HDF5 1.10 (Debian 12) places a chunk by walking the chunk index up to it
# (H5Dget_chunk_info_by_coord), so placing every CPI for the direct reader was quadratic:
# `info` on 12 000 CPIs took 10-29 s, on 50 000 minutes. Now, without H5Dchunk_iter (HDF5
# 1.14), a recording of more than 1 024 chunks (of small CPIs) keeps the HDF5 path (each read looks its
# chunk up), and which CPIs were written is looked up chunk by chunk
# (H5Dget_chunk_storage_size). 50 000 CPIs open in well under a second here; the bound
# below is 30 s (a quadratic open took over 60 s on the machine of docs/benchmarks.md).
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
mkpartial=$RTSTAP_TOOLS_DIR/mkpartial
. "$(dirname "$0")/../support/cli_check.sh" # tmp, fail, check, no_temp

# 50 000 CPIs of 1 x 2 x 1 samples, one CPI per chunk, every one written; and one with a
# gap (CPIs 20 000-29 999 never written): the written map is still right
"$mkpartial" recording "$tmp/many.h5" 1,2,1 50000 1 all >/dev/null
"$mkpartial" recording "$tmp/gaps.h5" 1,2,1 50000 1 0-19999,30000-49999 >/dev/null
# open NAME: `info` on $tmp/NAME.h5 (a hang killed after 120 s) into $tmp/NAME.txt; rc, secs
open() {
    local t0=$SECONDS
    timeout -k 5 120 "$bin" info --input "$tmp/$1.h5" >"$tmp/$1.txt" 2>&1
    rc=$?
    secs=$((SECONDS - t0))
}
open many
check "info on 50 000 CPIs: exit 0 ($rc) in under 30 s ($secs s), every CPI written" \
    '[ $rc -eq 0 ] && [ $secs -lt 30 ] && grep -q "CPIs: 50000 written, 0 never written" "$tmp/many.txt"'
check "info on 50 000 CPIs: read by HDF5, saying why (HDF5 before 1.14 has no one-pass walk)" \
    'grep -q "reading: HDF5 (H5Dread, one reader at a time: more chunks than it pays to place" "$tmp/many.txt" ||
     grep -q "reading: direct" "$tmp/many.txt"'
open gaps
check "info on 50 000 CPIs, 10 000 never written: exit 0 ($rc) in under 30 s ($secs s), the gap found" \
    '[ $rc -eq 0 ] && [ $secs -lt 30 ] && grep -q "CPIs: 40000 written, 10000 never written" "$tmp/gaps.txt"'

# `run` over 64 000 CPIs of 2 x 4 x 8 samples (one a chunk) is linear too. It took 71 s here
# (--threads 1; 342 s with the default threads spinning), 32 s of them outside the stream:
# the result writer placed every row at open (a walk of the chunk index per row), and each
# HDF5 read looked its chunk up to check the file's length. Now rows past 1 024 are appended
# as they come and a read checks the file's length against HDF5's end of allocation: 3 s
# here. The bound is 30 s; a hang is killed after 120 s.
"$mkpartial" recording "$tmp/run.h5" 2,4,8 64000 1 all >/dev/null
small=(--doppler-bins 4 --doppler-order 1 --segments 1 --training 4 --beams 1 --cfar none --threads 1)
t0=$SECONDS
timeout -k 5 120 "$bin" run --input "$tmp/run.h5" --output "$tmp/res.h5" "${small[@]}" --quiet \
    >"$tmp/run.txt" 2>&1
rc=$?
secs=$((SECONDS - t0))
check "run on 64 000 CPIs: exit 0 ($rc) in under 30 s ($secs s)" '[ $rc -eq 0 ] && [ $secs -lt 30 ]'
check "run on 64 000 CPIs: 64 000 rows of weights, stage times and input CPIs" \
    '[ "$("$RTSTAP_TOOLS_DIR/h5shape" "$tmp/res.h5" /weights /timing/cpi_ms /axes/input_cpi | tr "\n" " ")" = \
       "/weights 64000x4x1x1x2 /timing/cpi_ms 64000x8 /axes/input_cpi 64000 " ]'

# stopped by SIGTERM at CPI 1 500 (the reader stalls there for 60 s; the stop does not wait
# for it): the rows appended so far are published, exactly those, the full run's first 1 500
# stop_in_stall DIR STALL CMD...: CMD (its stderr into DIR.err) with each reader stalled for
# 60 s before its CPI STALL, SIGTERM 8 s after its temporary appears in DIR; rc
stop_in_stall() {
    local dir=$1 stall=$2
    shift 2
    mkdir -p "$dir"
    RTSTAP_TEST_READER_STALL=$stall:60000 "$@" 2>"$dir.err" &
    local pid=$!
    for _ in $(seq 300); do ls -A "$dir" | grep -q tmp && break; sleep 0.1; done
    sleep 8 # the CPIs before the stall done (0.3 s here, with the open); the readers in it
    kill -TERM $pid
    wait $pid
    rc=$?
}
stop_in_stall "$tmp/sig" 1500 "$bin" run --input "$tmp/run.h5" --output "$tmp/sig/o.h5" "${small[@]}" --quiet
check "run on 64 000 CPIs, SIGTERM in the stall: exit 143 ($rc), saying so" \
    '[ $rc -eq 143 ] && grep -q "stopped by SIGTERM after 1500 of the 64000 written CPIs" "$tmp/sig.err"'
check "run on 64 000 CPIs, SIGTERM: the file holds the 1 500 rows run, nothing else left" \
    '[ "$("$RTSTAP_TOOLS_DIR/h5shape" "$tmp/sig/o.h5" /weights /axes/input_cpi | tr "\n" " ")" = \
       "/weights 1500x4x1x1x2 /axes/input_cpi 1500 " ] && [ "$(ls -A "$tmp/sig")" = o.h5 ]'
"$mkpartial" ints "$tmp/sig/o.h5" /axes/input_cpi >"$tmp/sig.cpis"
check "run on 64 000 CPIs, SIGTERM: its rows are input CPIs 0-1 499" '[ "$(cat "$tmp/sig.cpis")" = "$(seq -s " " 0 1499)" ]'

# rtstap-mpi over the same 64 000 CPIs (issue 43, row 10's last part). Its ranks write their
# rows at offsets rank 0 gives them, so every row is placed at open; placing looked each
# row's chunk up (a walk of the chunk index), and `mpirun -n 2` took 137 s here (0.09 s of
# stream at 4 000 CPIs, 1.2 s in all). Now every row placed puts ceil(rows / 1 024) rows in
# a chunk (1 000 lookups): 3-4 s here. The bound is 30 s; a hang is killed after 120 s. The
# file equals the serial run's, and a run stopped by SIGTERM at CPI 1 500 (each rank's
# reader stalls before its 750th CPI) publishes exactly those rows, the serial stop's. Skipped
# without rtstap-mpi (CI requires it: RTSTAP_REQUIRE_MPI=1).
if [ -x "${RTSTAP_MPI_BIN:-}" ] && command -v mpirun >/dev/null; then
    mpi=$RTSTAP_MPI_BIN
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
    same=$RTSTAP_TOOLS_DIR/h5same
    t0=$SECONDS
    timeout -k 5 120 mpirun --oversubscribe --bind-to none -n 2 "$mpi" run --input "$tmp/run.h5" \
        --output "$tmp/mpi.h5" "${small[@]}" --quiet >"$tmp/mpi.txt" 2>&1
    rc=$?
    secs=$((SECONDS - t0))
    check "mpirun -n 2 rtstap-mpi run on 64 000 CPIs: exit 0 ($rc) in under 30 s ($secs s)" \
        '[ $rc -eq 0 ] && [ $secs -lt 30 ]'
    check "mpirun -n 2 on 64 000 CPIs: the serial run's file (weights, input CPIs)" \
        '"$same" "$tmp/res.h5" "$tmp/mpi.h5" /weights /axes/input_cpi >/dev/null'
    stop_in_stall "$tmp/msig" 750 mpirun --oversubscribe --bind-to none -n 2 "$mpi" run \
        --input "$tmp/run.h5" --output "$tmp/msig/o.h5" "${small[@]}" --readers 1 --quiet
    check "mpirun -n 2 on 64 000 CPIs, SIGTERM in the stall: exit non-zero ($rc), 1 500 CPIs, saying so" \
        '[ $rc -ne 0 ] && grep -q "stopped by SIGTERM after 1500 of the 64000 written CPIs" "$tmp/msig.err"'
    check "mpirun -n 2 on 64 000 CPIs, SIGTERM: exactly the serial stop's 1 500 rows, nothing else left" \
        '[ "$("$RTSTAP_TOOLS_DIR/h5shape" "$tmp/msig/o.h5" /weights /axes/input_cpi | tr "\n" " ")" = \
           "/weights 1500x4x1x1x2 /axes/input_cpi 1500 " ] && [ "$(ls -A "$tmp/msig")" = o.h5 ] &&
         "$same" "$tmp/sig/o.h5" "$tmp/msig/o.h5" /weights /axes/input_cpi >/dev/null'
else
    echo "cli_open_scale: rtstap-mpi was not built or mpirun is missing: its case skipped"
    [ "${RTSTAP_REQUIRE_MPI:-0}" = 1 ] && [ "${RTSTAP_MPI_WANTED:-0}" = 1 ] && fail=1
fi
exit $fail
