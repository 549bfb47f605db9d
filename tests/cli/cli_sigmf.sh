#!/usr/bin/env bash
# cli_sigmf: import-sigmf takes what a SigMF recording says (issue 42 row 8). Captures that
# mark the pulses (capture k at core:sample_start k x R) give R and P without --range-gates
# and --pulses (P from --cpis, or the whole file one CPI); global rtstap:prf gives /radar
# prf_hz (--prf overrides it); the captures and annotations are kept in /sigmf; ci16 samples
# are stored as int16 with their scale (the int16 recording path, read directly), and `run`
# on the file gives exactly the results of the complex64 recording of the same samples;
# --complex64 widens them as before. Captures that do not mark the pulses, a --range-gates
# that contradicts them, or a bad rtstap:prf are refused by name.
# env: RTSTAP_BIN, RTSTAP_TOOLS_DIR (mkraw, h5same, h5attr).
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
tools=${RTSTAP_TOOLS_DIR:-$(dirname "$bin")/tests}
same=$tools/h5same
h5attr=$tools/h5attr
mkraw=$tools/mkraw
for t in "$same" "$h5attr" "$mkraw"; do
    [ -x "$t" ] || { echo "cli_sigmf: $t not built"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
run() { "$bin" run --training 24 --doppler-order 1 --beams 4 --backend cpu --quiet \
    --cfar-train 8 --keep-output "$@"; }

# 2 CPIs of 4 channels x 8 pulses x 48 range gates of ci16_le (fixed seed), and the same
# samples times 0.001 as a complex64 recording; 16 captures, one a pulse; one annotation
"$mkraw" ci16_le 4,8,48,2 P,R,C 11 "$tmp/rx.sigmf-data" "$tmp/ref.h5" 0.001
caps='{"core:sample_start": 0, "core:frequency": 1.25e9}'
for k in $(seq 1 15); do caps="$caps, {\"core:sample_start\": $((k * 48))}"; done
ann='[{"core:sample_start": 452, "core:sample_count": 3, "core:label": "target"}]'
meta() { # GLOBAL-EXTRA CAPTURES > FILE
    printf '{"global": {"core:datatype": "ci16_le", "core:version": "1.0.0", "core:num_channels": 4,
  "core:sample_rate": 5000000%s}, "captures": [%s], "annotations": %s}\n' "$1" "$2" "$ann"
}
meta ', "rtstap:prf": 2000' "$caps" > "$tmp/rx.sigmf-meta"
"$bin" import-sigmf --meta "$tmp/rx.sigmf-meta" --cpis 2 --scale 0.001 -o "$tmp/rx.h5" >"$tmp/out" 2>"$tmp/err"
check "R and P from the captures: exit 0" '[ $? -eq 0 ]'
check "  says int16 as stored, 4 x 8 x 48 x 2 CPIs" \
    'grep -q "ci16_le as stored (scale 0.001) 4 channels x 8 pulses x 48 range gates x 2 CPIs" "$tmp/out"'
"$bin" info --input "$tmp/rx.h5" >"$tmp/info" 2>&1
check "  /data/iq int16 with its scale, read directly" \
    'grep -q "^  /data/iq: int16, interleaved (last axis iq), scale 0.001$" "$tmp/info" && grep -q "reading: direct" "$tmp/info"'
check "  2 CPIs x 4 x 8 x 48" 'grep -q "2 CPIs x 4 channels x 8 pulses x 48 range gates" "$tmp/info"'
check "  rtstap:prf and core:sample_rate in /radar" \
    '[ "$("$h5attr" "$tmp/rx.h5" /radar prf_hz sample_rate_hz | tr "\n" " ")" = "prf_hz 2000 sample_rate_hz 5000000 " ]'
check "  the annotations and captures kept in /sigmf" \
    '"$h5attr" "$tmp/rx.h5" /sigmf annotation_count capture_count annotations >"$tmp/a" &&
     grep -qx "annotation_count 1" "$tmp/a" && grep -qx "capture_count 16" "$tmp/a" &&
     grep -qF "annotations [{\"core:sample_start\":452,\"core:sample_count\":3,\"core:label\":\"target\"}]" "$tmp/a"'
run --input "$tmp/rx.h5" -o "$tmp/r_int.h5" 2>"$tmp/err"
check "run on the int16 file: exit 0" '[ $? -eq 0 ]'
run --input "$tmp/ref.h5" --layout C,P,R -o "$tmp/r_ref.h5" 2>"$tmp/err"
check "  the complex64 recording's results, exactly" \
    '"$same" "$tmp/r_int.h5" "$tmp/r_ref.h5" /weights /output/iq /detections >/dev/null'
"$bin" import-sigmf --meta "$tmp/rx.sigmf-meta" --cpis 2 --scale 0.001 --complex64 -o "$tmp/c64.h5" >/dev/null 2>&1
check "--complex64: the complex64 recording" '"$same" "$tmp/c64.h5" "$tmp/ref.h5" /data/iq >/dev/null'
"$bin" import-sigmf --meta "$tmp/rx.sigmf-meta" --prf 3000 -o "$tmp/one.h5" >"$tmp/out" 2>&1
check "without --cpis: one CPI of the 16 pulses; --prf overrides rtstap:prf" \
    'grep -q "4 channels x 16 pulses x 48 range gates," "$tmp/out" && [ "$("$h5attr" "$tmp/one.h5" /radar prf_hz)" = "prf_hz 3000" ]'

# refusals: nothing written
bad() { # NAME STATUS WORDS GLOBAL-EXTRA CAPTURES [ARGS...]
    local name=$1 want=$2 words=$3
    meta "$4" "$5" > "$tmp/b_$name.sigmf-meta"
    shift 5
    cp "$tmp/rx.sigmf-data" "$tmp/b_$name.sigmf-data"
    "$bin" import-sigmf --meta "$tmp/b_$name.sigmf-meta" -o "$tmp/b_$name.h5" "$@" >"$tmp/out" 2>&1
    local rc=$?
    check "$name: exit $want (got $rc) saying '$words', no output" \
        '[ $rc -eq $want ] && grep -qF -- "$words" "$tmp/out" && [ ! -e "$tmp/b_$name.h5" ]'
}
bad onecapture 2 "do not mark the pulses (capture k at core:sample_start k x R): import-sigmf needs --range-gates R" \
    '' '{"core:sample_start": 0}'
bad nopulses 2 "import-sigmf needs --pulses P" '' '{"core:sample_start": 0}' --range-gates 48
bad contradict 1 "the captures start a pulse every 48 samples, but --range-gates is 96" '' "$caps" --range-gates 96
bad uneven 2 "needs --range-gates R" '' '{"core:sample_start": 0}, {"core:sample_start": 48}, {"core:sample_start": 100}'
bad backwards 1 '"captures"[1]."core:sample_start" 0: expected a whole number of samples, after the previous' \
    '' '{"core:sample_start": 0}, {"core:sample_start": 0}'
bad prf 1 '"global"."rtstap:prf" -5: expected the pulse repetition frequency in Hz' ', "rtstap:prf": -5' "$caps"
bad wholecpis 1 "16 pulse captures are not 3 CPIs of whole pulses" '' "$caps" --cpis 3
exit $fail
