#!/usr/bin/env bash
# cli_blas: the lapack baseline runs OpenBLAS kernels that fit the CPU (docs/benchmarks.md
# "Baselines at their real speed"): on this machine the core `rtstap --version` reports is not a generic one
# when the CPU has AVX2; a generic core (simulated with OPENBLAS_CORETYPE=Prescott and
# RTSTAP_BLAS_RECHECK=1, which judges it like a detection) makes rtstap restart itself once
# with a fitting core and say so once; a user's own OPENBLAS_CORETYPE is otherwise kept;
# bench and stream JSON name the core.
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
vector='Haswell|Zen|SkylakeX|CooperLake|SapphireRapids|Excavator'  # compared without case: OpenBLAS 0.3.21 says "Cooperlake"

"$bin" --version > "$tmp/v.txt" 2> "$tmp/v.err"
check "--version exit 0" '[ $? -eq 0 ]'
cat "$tmp/v.txt"
core=$(sed -n 's/^BLAS: .*; core \(.*\)$/\1/p' "$tmp/v.txt")
check "--version names the BLAS core" '[ -n "$core" ]'
if grep -q avx2 "$tmp/v.txt"; then
    check "core '$core' is not generic on an AVX2 CPU" 'echo "$core" | grep -Eqix "$vector"'
fi

OPENBLAS_CORETYPE=Prescott RTSTAP_BLAS_RECHECK=1 "$bin" --version > "$tmp/r.txt" 2> "$tmp/r.err"
check "restart exit 0" '[ $? -eq 0 ]'
if grep -q avx2 "$tmp/r.txt"; then
    check "restarted with a fitting core" 'grep -Eqi "core ($vector)$" "$tmp/r.txt"'
    check "said once" '[ "$(grep -c "restarted with OPENBLAS_CORETYPE" "$tmp/r.err")" -eq 1 ]'
fi
OPENBLAS_CORETYPE=Prescott "$bin" --version > "$tmp/u.txt" 2> "$tmp/u.err"
check "a user's core type is kept" 'grep -q "core Prescott$" "$tmp/u.txt" && [ ! -s "$tmp/u.err" ]'

"$bin" bench-qr --sizes 32x8x8 --backends lapack --repeat 1 --json "$tmp/b.json" > /dev/null 2>&1
check "bench-qr exit 0" '[ $? -eq 0 ]'
check "bench-qr JSON names the core" 'grep -Eq "\"core\":[[:space:]]*\"$core\"" "$tmp/b.json"'
"$bin" stream --preset easy --backend cpu --cpis 2 --slots 2 --ring 2 --quiet --json "$tmp/s.json"
check "stream exit 0" '[ $? -eq 0 ]'
check "stream JSON names the core and the rate" 'grep -Eq "\"core\":[[:space:]]*\"$core\"" "$tmp/s.json" && grep -q "\"cpis_per_s\"" "$tmp/s.json" && grep -q "\"p99\"" "$tmp/s.json"'
exit $fail
