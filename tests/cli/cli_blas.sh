#!/usr/bin/env bash
# cli_blas: which OpenBLAS kernels run, and that nothing else depends on it (issue 42).
# - The cpu backend's results are the same bit for bit whichever kernels OpenBLAS took
#   (its apply is rtstap's own product, stap_la_cgemm): run under the generic Prescott core
#   and under a vector core give identical weights, output and detections.
# - A CPU that OpenBLAS misdetects (simulated: OPENBLAS_CORETYPE=Prescott with
#   RTSTAP_BLAS_RECHECK=1, which judges the variable like a detection) changes nothing
#   outside the lapack baseline: no note and no restart for --help, info, gen, run;
#   `--quiet` stays quiet; --version says what the baseline will do.
# - Where the vendor BLAS is measured (bench-qr, bench, --backend lapack), rtstap restarts
#   itself once with a fitting core and reports it with the measurements: the platform
#   line and the JSON's "blas" object ("core", "core_detected"), never a stderr note.
# - A user's own OPENBLAS_CORETYPE is kept.
# This test controls what may appear on stderr: it asserts that rtstap writes no line
# about OpenBLAS there, not that stderr is empty.
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
h5same=$(dirname "$bin")/tests/h5same
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
vector='Haswell|Zen|SkylakeX|CooperLake|SapphireRapids|Excavator'  # compared without case: OpenBLAS 0.3.21 says "Cooperlake"
# the simulated misdetection, and a user who chose the generic core
sim() { env OPENBLAS_CORETYPE=Prescott RTSTAP_BLAS_RECHECK=1 "$@"; }
user() { env -u RTSTAP_BLAS_RECHECK OPENBLAS_CORETYPE=Prescott "$@"; }
no_blas_line() { ! grep -qi 'openblas\|coretype' "$1"; }

env -u RTSTAP_BLAS_RECHECK "$bin" --version > "$tmp/v.txt" 2> "$tmp/v.err"
check "--version exit 0" '[ $? -eq 0 ]'
cat "$tmp/v.txt"
core=$(sed -n 's/^BLAS: .*; core \(.*\)$/\1/p' "$tmp/v.txt")
check "--version names the BLAS core" '[ -n "$core" ]'
if grep -q '^CPU: .*avx2' "$tmp/v.txt" && ! echo "$core" | grep -Eqix "$vector"; then
    # this machine's OpenBLAS took a generic core: --version must say what bench will do
    check "--version explains the generic core '$core'" 'grep -q "^BLAS note: OpenBLAS took this CPU for" "$tmp/v.txt"'
fi

# --- the cpu backend does not depend on OpenBLAS's kernels ---------------------------------
"$bin" gen --preset ward --cpis 2 --seed 5 --target 151:0:40:-5 -o "$tmp/rec.h5" > /dev/null 2>&1
check "gen exit 0" '[ $? -eq 0 ]'
for ct in Prescott Haswell SkylakeX; do
    env -u RTSTAP_BLAS_RECHECK OPENBLAS_CORETYPE=$ct "$bin" run --input "$tmp/rec.h5" -o "$tmp/run_$ct.h5" \
        --backend cpu --keep-output --quiet > /dev/null 2>&1
    check "run under the $ct core: exit 0" '[ $? -eq 0 ]'
done
for ct in Prescott Haswell; do
    check "cpu backend under $ct equals SkylakeX bit for bit" \
        '"$h5same" "$tmp/run_$ct.h5" "$tmp/run_SkylakeX.h5" /weights /output/iq /detections > "$tmp/same.txt" 2>&1 || { cat "$tmp/same.txt"; false; }'
done

# --- a misdetected CPU: nothing changes outside the lapack baseline -----------------------
sim "$bin" --help > "$tmp/h.out" 2> "$tmp/h.err"
check "--help: exit 0, no OpenBLAS line" '[ $? -eq 0 ] && no_blas_line "$tmp/h.err" && no_blas_line "$tmp/h.out"'
sim "$bin" info --input "$tmp/rec.h5" > "$tmp/i.out" 2> "$tmp/i.err"
check "info: exit 0, no OpenBLAS line" '[ $? -eq 0 ] && no_blas_line "$tmp/i.err"'
sim "$bin" run --input "$tmp/rec.h5" -o "$tmp/q.h5" --keep-output --quiet > "$tmp/q.out" 2> "$tmp/q.err"
check "run --quiet: exit 0, nothing on stdout, no OpenBLAS line" '[ $? -eq 0 ] && [ ! -s "$tmp/q.out" ] && no_blas_line "$tmp/q.err"'
check "run on the misdetected CPU equals the run on a vector core" \
    '"$h5same" "$tmp/q.h5" "$tmp/run_SkylakeX.h5" /weights /output/iq /detections > /dev/null 2>&1'
sim "$bin" --version > "$tmp/r.txt" 2> "$tmp/r.err"
check "--version on the misdetected CPU: exit 0, no restart, the note on stdout" \
    '[ $? -eq 0 ] && grep -q "core Prescott$" "$tmp/r.txt" && no_blas_line "$tmp/r.err"'
if grep -q '^CPU: .*avx2' "$tmp/r.txt"; then
    check "--version says the baseline restarts with a fitting core" \
        'grep -Eqi "^BLAS note: OpenBLAS took this CPU for Prescott .*OPENBLAS_CORETYPE=($vector)" "$tmp/r.txt"'
    # where the BLAS is measured: restarted once, reported with the measurements
    sim "$bin" bench-qr --sizes 32x8x8 --backends lapack --repeat 1 --json "$tmp/b.json" > "$tmp/b.out" 2> "$tmp/b.err"
    check "bench-qr on the misdetected CPU: exit 0" '[ $? -eq 0 ]'
    check "bench-qr's platform line names the restart" \
        'grep -Eqi "BLAS core ($vector), restarted: OpenBLAS took this CPU for Prescott" "$tmp/b.err"'
    check "bench-qr JSON: a fitting core, the detected one beside it" \
        'grep -Eqi "\"core\":[[:space:]]*\"($vector)\"" "$tmp/b.json" && grep -Eq "\"core_detected\":[[:space:]]*\"Prescott\"" "$tmp/b.json"'
    sim "$bin" run --input "$tmp/rec.h5" -o "$tmp/l.h5" --backend lapack --quiet --json "$tmp/l.json" > /dev/null 2> "$tmp/l.err"
    check "run --backend lapack --quiet: exit 0, restarted silently" \
        '[ $? -eq 0 ] && no_blas_line "$tmp/l.err" && grep -Eq "\"core_detected\":[[:space:]]*\"Prescott\"" "$tmp/l.json"'
fi

# --- a user's own core type is kept, also where the BLAS is measured -----------------------
user "$bin" --version > "$tmp/u.txt" 2> "$tmp/u.err"
check "a user's core type is kept (--version)" 'grep -q "core Prescott$" "$tmp/u.txt" && no_blas_line "$tmp/u.err"'
user "$bin" bench-qr --sizes 32x8x8 --backends lapack --repeat 1 --json "$tmp/ub.json" > /dev/null 2>&1
check "a user's core type is kept (bench-qr)" \
    'grep -Eq "\"core\":[[:space:]]*\"Prescott\"" "$tmp/ub.json" && ! grep -q core_detected "$tmp/ub.json"'

# --- the reports name the core -------------------------------------------------------------
env -u RTSTAP_BLAS_RECHECK "$bin" bench-qr --sizes 32x8x8 --backends lapack --repeat 1 --json "$tmp/b2.json" > /dev/null 2>&1
check "bench-qr exit 0" '[ $? -eq 0 ]'
# (on a CPU that OpenBLAS really misdetects, bench-qr restarts: the core --version named is
# then the one it reports as detected)
check "bench-qr JSON names the core" \
    'grep -Eq "\"core(_detected)?\":[[:space:]]*\"$core\"" "$tmp/b2.json"'
env -u RTSTAP_BLAS_RECHECK "$bin" stream --preset easy --backend cpu --cpis 2 --slots 2 --ring 2 --quiet --json "$tmp/s.json"
check "stream exit 0" '[ $? -eq 0 ]'
check "stream JSON names the core and the rate" 'grep -Eq "\"core\":[[:space:]]*\"$core\"" "$tmp/s.json" && grep -q "\"cpis_per_s\"" "$tmp/s.json" && grep -q "\"p99\"" "$tmp/s.json"'
exit $fail
