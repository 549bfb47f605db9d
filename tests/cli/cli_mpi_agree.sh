#!/usr/bin/env bash
# cli_mpi_agree: rtstap-mpi's ranks agree on one input and one configuration before any rank
# writes (issue 43, rows 8 and 9). MPMD jobs give each rank its own arguments: another
# recording, another --beams or --training, the same argv naming another file (each rank in
# its own directory: as a file replaced by a rename while the ranks open it), one rank's
# input a single CPI and the other's a recording, --help on one rank. Each: exit 1 within
# seconds (no hang), the rank and the field named, nothing written, no temporary. The same
# file by two names is one file: the run goes ahead, the serial file. CPU backend.
# env: RTSTAP_BIN, RTSTAP_MPI_BIN, RTSTAP_REQUIRE_MPI, RTSTAP_MPI_WANTED (as cli_mpi.sh).
set -u
. "$(dirname "$0")/../support/cli_mpi_env.sh" cli_mpi_agree # bin, mpi; skips without rtstap-mpi
same=$RTSTAP_TOOLS_DIR/h5same
. "$(dirname "$0")/../support/cli_check.sh" # tmp, fail, check, no_temp

"$bin" gen --preset ward --channels 6 --pulses 32 --range-gates 240 --no-clutter --cpis 5 \
    --target 41:0:100:25 --seed 5 --out "$tmp/a.h5" --quiet
"$bin" gen --preset ward --channels 6 --pulses 32 --range-gates 240 --no-clutter --cpis 5 \
    --target 41:0:100:25 --seed 6 --out "$tmp/b.h5" --quiet
"$bin" gen --preset ward --channels 6 --pulses 32 --range-gates 240 --out "$tmp/one.h5" --quiet
opts=(--backend cpu --doppler-order 3 --training 60 --segments 2 --beams 3 --loading 0.01 --quiet)

# mpmd NAME RANK0-ARGS... -- RANK1-ARGS...: `mpirun -n 1 rtstap-mpi ARGS0 : -n 1 rtstap-mpi
# ARGS1` (a hang is killed after 60 s); rc, secs, $tmp/NAME.err
mpmd() {
    local name=$1 a=() b=()
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do a+=("$1"); shift; done
    shift
    b=("$@")
    local t0=$SECONDS
    timeout -k 5 60 mpirun --oversubscribe -n 1 "$mpi" "${a[@]}" : -n 1 "$mpi" "${b[@]}" \
        >/dev/null 2>"$tmp/$name.err"
    rc=$?
    secs=$((SECONDS - t0))
}
# refused NAME PATTERN OUTPUT: exit 1 in under 30 s, PATTERN in rank 0's message, OUTPUT absent
refused() { [ $rc -eq 1 ] && [ $secs -lt 30 ] && grep -q "$2" "$tmp/$1.err" && [ ! -e "$3" ] && no_temp "$tmp"; }

# another recording on rank 1 (MPMD): which file is a field of the fingerprint
mpmd files run --input "$tmp/a.h5" -o "$tmp/o1.h5" "${opts[@]}" -- run --input "$tmp/b.h5" -o "$tmp/o1.h5" "${opts[@]}"
check "a.h5 on rank 0, b.h5 on rank 1: exit 1 ($rc, ${secs} s), rank 1's file named, nothing written" \
    'refused files "rank 1.s input file.s inode is .*nothing written" "$tmp/o1.h5"'
# another --beams, another --training on rank 1
mpmd beams run --input "$tmp/a.h5" -o "$tmp/o2.h5" "${opts[@]}" -- run --input "$tmp/a.h5" -o "$tmp/o2.h5" "${opts[@]}" --beams 4
check "--beams 4 on rank 1: exit 1 ($rc, ${secs} s), rank 1's --beams named, nothing written" \
    'refused beams "rank 1.s --beams is 4, rank 0.s 3" "$tmp/o2.h5"'
mpmd train run --input "$tmp/a.h5" -o "$tmp/o3.h5" "${opts[@]}" -- run --input "$tmp/a.h5" -o "$tmp/o3.h5" "${opts[@]}" --training 40
check "--training 40 on rank 1: exit 1 ($rc, ${secs} s), rank 1's --training named, nothing written" \
    'refused train "rank 1.s --training is 40, rank 0.s 60" "$tmp/o3.h5"'
# the same argv, another file behind the name (each rank in its own directory, the copies
# alike byte for byte: as a file replaced by a rename while the ranks open it)
mkdir -p "$tmp/d0" "$tmp/d1"
cp "$tmp/a.h5" "$tmp/d0/rec.h5"
cp "$tmp/a.h5" "$tmp/d1/rec.h5"
t0=$SECONDS
(cd "$tmp" && timeout -k 5 60 mpirun --oversubscribe -n 1 -wdir "$tmp/d0" "$mpi" run --input rec.h5 \
    -o "$tmp/o4.h5" "${opts[@]}" : -n 1 -wdir "$tmp/d1" "$mpi" run --input rec.h5 -o "$tmp/o4.h5" \
    "${opts[@]}" >/dev/null 2>"$tmp/renamed.err")
rc=$?
secs=$((SECONDS - t0))
check "one argv, another file behind the name on rank 1: exit 1 ($rc, ${secs} s), named, nothing written" \
    'refused renamed "rank 1.s input file.s inode is" "$tmp/o4.h5"'
# one CPI on rank 0, a recording on rank 1 (and the other way round): no hang
mpmd onerec run --input "$tmp/one.h5" -o "$tmp/o5.h5" "${opts[@]}" -- run --input "$tmp/a.h5" -o "$tmp/o5.h5" "${opts[@]}"
check "one CPI on rank 0, a recording on rank 1: exit 1 ($rc, ${secs} s), rank 1 named, nothing written" \
    'refused onerec "rank 1.s input (a recording, one CPI or synthesized) is 4, rank 0.s 3" "$tmp/o5.h5"'
mpmd recone run --input "$tmp/a.h5" -o "$tmp/o6.h5" "${opts[@]}" -- run --input "$tmp/one.h5" -o "$tmp/o6.h5" "${opts[@]}"
check "a recording on rank 0, one CPI on rank 1: exit 1 ($rc, ${secs} s), rank 1 named, nothing written" \
    'refused recone "rank 1.s input (a recording, one CPI or synthesized) is 3, rank 0.s 4" "$tmp/o6.h5"'
# --help on rank 1: it ends at once; rank 0 must not wait for it
mpmd help run --input "$tmp/a.h5" -o "$tmp/o7.h5" "${opts[@]}" -- run --help
check "run on rank 0, run --help on rank 1: exit 1 ($rc, ${secs} s), rank 1 named, nothing written" \
    'refused help "rank 1: error: it ended without running the command that rank 0 runs" "$tmp/o7.h5"'
# one file by two names (a hard link): one file, the run goes ahead
ln "$tmp/a.h5" "$tmp/a_link.h5"
"$bin" run --input "$tmp/a.h5" -o "$tmp/ser.h5" "${opts[@]}"
mpmd link run --input "$tmp/a.h5" -o "$tmp/o8.h5" "${opts[@]}" -- run --input "$tmp/a_link.h5" -o "$tmp/o8.h5" "${opts[@]}"
check "a.h5 and a hard link to it: exit 0 ($rc), the serial file" \
    '[ $rc -eq 0 ] && "$same" "$tmp/ser.h5" "$tmp/o8.h5" /weights /detections /axes/input_cpi >/dev/null'
exit $fail
