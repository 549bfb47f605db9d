#!/usr/bin/env bash
# cli_perfect: `rtstap perfect` and `rtstap import-perfect` end to end on the shipped
# small input: output layout and size, --gold scoring (pass and fail), the atomic
# no-overwrite rule, usage errors, and import-perfect + run giving a schema-v1 result.
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
data="$RTSTAP_SOURCE_DIR/datasets/perfect"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }

"$bin" perfect --size small --input-dir "$data" --output "$tmp/cpu.bin" --backend cpu --quiet
check "perfect cpu exit 0" '[ $? -eq 0 ]'
check "output size 16 x 256 x 512 complex" '[ "$(stat -c %s "$tmp/cpu.bin")" -eq $((16*256*512*8)) ]'

"$bin" perfect --size small --input-dir "$data" --output "$tmp/lapack.bin" --backend lapack \
    --gold "$tmp/cpu.bin" --quiet > "$tmp/gold.txt"
check "gold pass exit 0" '[ $? -eq 0 ]'
check "gold SNR printed" 'grep -q "SNR against .*: pass" "$tmp/gold.txt"'

# a gold file of the right size but other content must fail the 80 dB criterion
head -c $((16*256*512*8)) /dev/urandom > "$tmp/noise.bin"
"$bin" perfect --size small --input-dir "$data" --output "$tmp/x.bin" --backend cpu \
    --gold "$tmp/noise.bin" --quiet > "$tmp/bad.txt" 2> "$tmp/bad.err"
rc=$?
# random bytes may decode to NaN/Inf floats: then the gold file is rejected (also exit 1)
check "gold fail exit 1 (got $rc)" '[ $rc -eq 1 ]'

"$bin" perfect --size small --input-dir "$data" --output "$tmp/cpu.bin" --quiet 2> "$tmp/exists.err"
check "existing output refused" '[ $? -eq 1 ] && grep -q "refusing to overwrite" "$tmp/exists.err"'

"$bin" perfect --size huge --input-dir "$data" --output "$tmp/y.bin" 2>/dev/null
check "bad size is usage error" '[ $? -eq 2 ]'
"$bin" perfect --size small --output "$tmp/y.bin" 2>/dev/null
check "missing --input-dir is usage error" '[ $? -eq 2 ]'
"$bin" perfect --size medium --input-dir "$data" --output "$tmp/y.bin" 2> "$tmp/missing.err"
check "missing medium input exit 1 naming the file" '[ $? -eq 1 ] && grep -q "medium_app_input.bin" "$tmp/missing.err"'
check "no partial output" '[ ! -e "$tmp/y.bin" ] && [ -z "$(ls -A "$tmp" | grep "\.tmp\.")" ]'

"$bin" import-perfect --size small --input-dir "$data" --out "$tmp/small.h5" > "$tmp/import.txt"
check "import-perfect exit 0" '[ $? -eq 0 ]'
flags=$(grep -o -- "--doppler-bins.*" "$tmp/import.txt")
# shellcheck disable=SC2086
"$bin" run --input "$tmp/small.h5" --output "$tmp/small_out.h5" --backend cpu --cfar none --quiet $flags
check "run on the imported file exit 0" '[ $? -eq 0 ]'

[ $fail -eq 0 ] && echo "cli_perfect: all passed"
exit $fail
