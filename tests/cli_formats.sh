#!/usr/bin/env bash
# cli_formats: the recorder formats of issue 12 end to end. Recordings stored as interleaved
# int16 (rank 5, last axis iq, scale 1/256), an int16 {real, imag} compound and interleaved
# float32, in other axis orders, give `run` (reader and writer threads) and `stream` exactly
# the result of their complex64 equivalent.
# env: RTSTAP_BIN, RTSTAP_TOOLS_DIR (relayout, h5same).
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
tools=${RTSTAP_TOOLS_DIR:-$(dirname "$bin")/tests}
relayout=$tools/relayout
same=$tools/h5same
for t in "$relayout" "$same"; do
    [ -x "$t" ] || { echo "cli_formats: $t not built"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
results="/weights /output/iq /detections /steering"

# ---- recordings in the recorder formats: the complex64 result, byte for byte
"$bin" gen --preset ward --channels 6 --pulses 32 --range-gates 240 --no-clutter --no-jammers \
    --cpis 3 --target 41:0:100:25 --seed 5 --out "$tmp/rec.h5" --quiet
rq=(--backend cpu --doppler-order 3 --training 60 --segments 2 --beams 3 --loading 0.01 --quiet --keep-output)
"$relayout" "$tmp/rec.h5" "$tmp/q.h5" C,P,R ds quantize   # complex64, multiples of 1/256
"$bin" run --input "$tmp/q.h5" --output "$tmp/o_q.h5" "${rq[@]}" 2>"$tmp/err"
check "quantized complex64 recording: exit 0" '[ $? -eq 0 ]'
"$bin" run --input "$tmp/rec.h5" --output "$tmp/o_rec.h5" "${rq[@]}" 2>"$tmp/err"
check "complex64 recording: exit 0" '[ $? -eq 0 ]'
form() { # NAME REFERENCE RELAYOUT-ARGS...
    local name=$1 ref=$2
    shift 2
    "$relayout" "$tmp/rec.h5" "$tmp/$name.h5" "$@" || { echo "FAIL: relayout $name"; fail=1; return; }
    "$bin" run --input "$tmp/$name.h5" --output "$tmp/o_$name.h5" "${rq[@]}" 2>"$tmp/err"
    check "$name: exit 0, nothing on stderr" '[ $? -eq 0 ] && [ ! -s "$tmp/err" ]'
    check "  $name: the result of its complex64 equivalent" \
        '"$same" "$tmp/$ref" "$tmp/o_$name.h5" $results > "$tmp/same.txt" || { cat "$tmp/same.txt"; false; }'
}
form i16_prc o_q.h5 P,R,C ds i16                 # int16 (cpi, P, R, C, iq), one CPI per chunk
form ri16_cpr o_q.h5 C,P,R attr ri16 contiguous  # int16 {real, imag} (cpi, C, P, R), dims
form f32iq_rcp o_rec.h5 R,C,P ds f32iq           # float32 (cpi, R, C, P, iq)
form f32iq_cpr o_rec.h5 C,P,R ds f32iq           # float32 (cpi, C, P, R, iq): read chunk-direct
"$bin" stream --input "$tmp/i16_prc.h5" --backend cpu --slots 2 --quiet 2>"$tmp/err"
check "stream --input of the int16 recording: exit 0" '[ $? -eq 0 ] && [ ! -s "$tmp/err" ]'
"$bin" run --input "$tmp/i16_prc.h5" --output "$tmp/o_i16_s.h5" "${rq[@]}" --scale 0.5 2>"$tmp/err"
check "--scale 0.5 over the recording's 1/256: exit 0, another result" \
    '[ $? -eq 0 ] && ! "$same" "$tmp/o_q.h5" "$tmp/o_i16_s.h5" /output/iq >/dev/null'

exit $fail
