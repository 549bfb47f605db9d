#!/usr/bin/env bash
# cli_layout: cubes written in another axis order (issue 10 item 2, issue 12 item 1). A
# labelled (P, C, R) cube — HDF5 dimension labels, a 'dims' string or list — gives `run`
# exactly the result of the (C, P, R) original; so do labelled recordings (run, stream);
# an unlabelled cube is read as (C, P, R) with one warning line, refused under --strict,
# and refused when its shape looks transposed (the issue's case: a noise cube written
# (P, C, R) ran with 145 detections); --layout reads it, overrides labels with a warning
# naming both, and is a usage error when malformed; labels that cannot be honoured are
# refused naming them; plot and stream take --layout and --strict too.
# env: RTSTAP_BIN, RTSTAP_TOOLS_DIR (relayout, h5same, mkinput, h5shape).
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
tools=${RTSTAP_TOOLS_DIR:-$(dirname "$bin")/tests}
relayout=$tools/relayout
same=$tools/h5same
for t in "$relayout" "$same" "$tools/mkinput" "$tools/h5shape"; do
    [ -x "$t" ] || { echo "cli_layout: $t not built"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
# the result datasets that must be identical, byte for byte
results="/weights /output/iq /detections /steering"
# stderr of the last command must be exactly these lines (none: empty)
only_lines() { [ "$(cat "$tmp/err")" = "$1" ]; }

# ---- the issue's case: a noise-only hard cube, and the same cube written (P, C, R); with
# loading, so that the transposed cube (N = 384 > K = 240) was processed before: exit 0
# and dozens of false detections
"$bin" gen --preset hard --no-clutter --no-jammers --seed 3 --out "$tmp/noise.h5" --quiet
check "gen noise exit 0" '[ $? -eq 0 ]'
hq=(--backend cpu --loading 0.01 --quiet)
"$bin" run --input "$tmp/noise.h5" --output "$tmp/ref.h5" "${hq[@]}" 2>"$tmp/err"
check "reference run exit 0, nothing on stderr (gen labels its cubes)" '[ $? -eq 0 ] && only_lines ""'

"$relayout" "$tmp/noise.h5" "$tmp/pcr.h5" P,C,R
"$bin" run --input "$tmp/pcr.h5" --output "$tmp/o_pcr.h5" "${hq[@]}" 2>"$tmp/err"
rc=$?
check "unlabelled (P, C, R) noise cube refused (exit $rc), not processed" '[ $rc -eq 1 ] && [ ! -e "$tmp/o_pcr.h5" ]'
check "  its message says why and how to fix" \
    'grep -q "^rtstap: error: $tmp/pcr.h5: /data/iq (rank 3) has no axis labels" "$tmp/err" &&
     grep -q "more channels (128) than pulses (22)" "$tmp/err" && grep -q "look transposed" "$tmp/err" &&
     grep -q -- "--layout" "$tmp/err" && grep -q "dims" "$tmp/err"'
echo "  $(cat "$tmp/err")"
"$bin" run --input "$tmp/pcr.h5" --output "$tmp/o_pcr_l.h5" "${hq[@]}" --layout P,C,R 2>"$tmp/err"
check "--layout P,C,R on it: exit 0, no warning" '[ $? -eq 0 ] && only_lines ""'
check "  the result is the original's" '"$same" "$tmp/ref.h5" "$tmp/o_pcr_l.h5" $results >/dev/null'

# ---- labelled in each of the three ways: the same result, silently
for how in ds attr "list=pulses,Channels,range_gates"; do
    name=${how%%=*}
    "$relayout" "$tmp/noise.h5" "$tmp/pcr_$name.h5" P,C,R "$how"
    "$bin" run --input "$tmp/pcr_$name.h5" --output "$tmp/o_$name.h5" "${hq[@]}" 2>"$tmp/err"
    check "(P, C, R) labelled by $name: exit 0, no warning" '[ $? -eq 0 ] && only_lines ""'
    check "  (P, C, R) by $name: identical weights, output, detections" \
        '"$same" "$tmp/ref.h5" "$tmp/o_$name.h5" $results > "$tmp/same.txt" || { cat "$tmp/same.txt"; false; }'
done
"$relayout" "$tmp/noise.h5" "$tmp/rcp_f64.h5" R,C,P ds f64
"$bin" run --input "$tmp/rcp_f64.h5" --output "$tmp/o_rcp.h5" "${hq[@]}"
check "(R, C, P) float64, labelled: the same result" '[ $? -eq 0 ] && "$same" "$tmp/ref.h5" "$tmp/o_rcp.h5" $results >/dev/null'

# ---- an unlabelled (C, P, R) cube: read, with one warning; refused under --strict
"$tools/mkinput" valid "$tmp/v.h5" 7
small=(--preset easy --segments 1 --training 24 --doppler-order 1 --beams 4 --backend cpu --quiet)
"$bin" run --input "$tmp/v.h5" --output "$tmp/o_v.h5" "${small[@]}" 2>"$tmp/err"
check "unlabelled: exit 0 with the one warning line" \
    '[ $? -eq 0 ] && only_lines "rtstap: warning: $tmp/v.h5: /data/iq has no axis labels; read as (channel, pulse, range) — label it or pass --layout"'
"$bin" run --input "$tmp/v.h5" --output "$tmp/o_v_strict.h5" "${small[@]}" --strict 2>"$tmp/err"
rc=$?
check "unlabelled under --strict: exit 1 (got $rc), no output" '[ $rc -eq 1 ] && [ ! -e "$tmp/o_v_strict.h5" ]'
check "  the message names the file and --strict" \
    'grep -q "^rtstap: error: $tmp/v.h5: /data/iq has no axis labels; --strict refuses" "$tmp/err"'
"$bin" run --input "$tmp/noise.h5" --output "$tmp/o_strict_ok.h5" "${hq[@]}" --strict 2>"$tmp/err"
check "a labelled cube under --strict: exit 0" '[ $? -eq 0 ] && only_lines ""'
"$bin" run --input "$tmp/v.h5" --output "$tmp/o_v_l.h5" "${small[@]}" --strict --layout C,P,R 2>"$tmp/err"
check "unlabelled, --strict with --layout: exit 0, silent" '[ $? -eq 0 ] && only_lines ""'

# ---- --layout against the file's labels: the override holds, with a warning naming both
"$relayout" "$tmp/v.h5" "$tmp/v_mislabelled.h5" C,P,R ds=pulse,channel,range
"$bin" run --input "$tmp/v_mislabelled.h5" --output "$tmp/o_v_over.h5" "${small[@]}" --layout channel,pulse,range 2>"$tmp/err"
check "--layout over disagreeing labels: exit 0 and one warning naming both" \
    '[ $? -eq 0 ] && only_lines "rtstap: warning: $tmp/v_mislabelled.h5: --layout channel,pulse,range overrides the axis labels of /data/iq (pulse, channel, range): read as (channel, pulse, range)"'
check "  the override held: the result of the (C, P, R) original" \
    '"$same" "$tmp/o_v.h5" "$tmp/o_v_over.h5" $results >/dev/null'
"$bin" run --input "$tmp/v_mislabelled.h5" --output "$tmp/o_v_mis.h5" "${small[@]}" 2>"$tmp/err"
check "the same file without --layout is read as labelled: 8 channels, 4 pulses (D x S x B x N)" \
    '[ $? -eq 0 ] && [ "$("$tools/h5shape" "$tmp/o_v_mis.h5" /weights)" = "/weights 4x1x4x8" ] &&
     [ "$("$tools/h5shape" "$tmp/o_v.h5" /weights)" = "/weights 8x1x4x4" ]'

# ---- labels that cannot be honoured: exit 1 naming the file, /data/iq and the labels
bad() { # NAME WORDS... ; relayout args in $spec
    local name=$1
    shift
    "$relayout" "$tmp/v.h5" "$tmp/bad_$name.h5" $spec
    "$bin" run --input "$tmp/bad_$name.h5" --output "$tmp/o_bad_$name.h5" "${small[@]}" 2>"$tmp/err"
    local rc=$? w
    check "bad labels $name: exit 1 (got $rc), no output" '[ $rc -eq 1 ] && [ ! -e "$tmp/o_bad_$name.h5" ]'
    for w in "$tmp/bad_$name.h5" "/data/iq" "$@"; do
        check "  bad labels $name: message names '$w'" 'grep -qF -- "$w" "$tmp/err"'
    done
    echo "  $name: $(cat "$tmp/err")"
}
spec="P,C,R ds attr=channel,pulse,range"; bad conflicting "(pulse, channel, range)" "(channel, pulse, range)" disagree
spec="C,P,R ds=channel,channel,range"; bad duplicate "(channel, channel, range)" "named twice"
spec="C,P,R attr=channel,doppler,range"; bad unknown "'doppler'" "not an axis name"
spec="C,P,R attr=channel,pulse"; bad count "(channel, pulse)" "2 axes"
spec="C,P,R ds=channel,channel,range"
"$relayout" "$tmp/v.h5" "$tmp/dup_over.h5" $spec
"$bin" run --input "$tmp/dup_over.h5" --output "$tmp/o_dup_over.h5" "${small[@]}" --layout C,P,R 2>"$tmp/err"
check "--layout reads a file whose labels are malformed, with a warning" \
    '[ $? -eq 0 ] && grep -q "overrides the axis labels of /data/iq (channel, channel, range)" "$tmp/err" &&
     "$same" "$tmp/o_v.h5" "$tmp/o_dup_over.h5" $results >/dev/null'

# ---- usage errors: exit 2
for l in P,P,R P,C C,P,R,cpi cpi,C,P,R doppler,C,R ""; do
    "$bin" run --input "$tmp/v.h5" --output "$tmp/o_u.h5" "${small[@]}" --layout "$l" 2>"$tmp/err"
    rc=$?
    check "--layout '$l': exit 2 (got $rc)" '[ $rc -eq 2 ] && grep -q "^rtstap: error: --layout: " "$tmp/err"'
done
"$bin" run --output "$tmp/o_u.h5" --quiet --layout P,C,R 2>"$tmp/err"
check "--layout without --input: exit 2" '[ $? -eq 2 ]'

# ---- recordings: labelled in another order, run and stream read them as the original
"$bin" gen --preset ward --channels 6 --pulses 32 --range-gates 240 --no-clutter --cpis 3 \
    --target 41:0:100:25 --seed 5 --out "$tmp/rec.h5" --quiet
rq=(--backend cpu --doppler-order 3 --training 60 --segments 2 --beams 3 --loading 0.01 --quiet --keep-output)
"$bin" run --input "$tmp/rec.h5" --output "$tmp/o_rec.h5" "${rq[@]}" 2>"$tmp/err"
check "recording: exit 0, no warning" '[ $? -eq 0 ] && only_lines ""'
"$relayout" "$tmp/rec.h5" "$tmp/rec_prc.h5" P,R,C ds
"$bin" run --input "$tmp/rec_prc.h5" --output "$tmp/o_rec_prc.h5" "${rq[@]}" 2>"$tmp/err"
check "recording (cpi, P, R, C), dimension labels (one CPI per chunk): the same result" \
    '[ $? -eq 0 ] && only_lines "" && "$same" "$tmp/o_rec.h5" "$tmp/o_rec_prc.h5" /weights /output/iq /detections >/dev/null'
"$relayout" "$tmp/rec.h5" "$tmp/rec_rcp.h5" R,C,P attr f64 contiguous
"$bin" run --input "$tmp/rec_rcp.h5" --output "$tmp/o_rec_rcp.h5" "${rq[@]}"
check "recording (cpi, R, C, P), dims, float64, contiguous: the same result" \
    '[ $? -eq 0 ] && "$same" "$tmp/o_rec.h5" "$tmp/o_rec_rcp.h5" /weights /output/iq /detections >/dev/null'
"$relayout" "$tmp/rec.h5" "$tmp/rec_pcr.h5" P,C,R
"$bin" run --input "$tmp/rec_pcr.h5" --output "$tmp/o_rec_pcr.h5" "${rq[@]}" 2>"$tmp/err"
check "unlabelled recording (cpi, P, C, R): refused (more channels than pulses)" \
    '[ $? -eq 1 ] && grep -q "(rank 4) has no axis labels" "$tmp/err" && grep -q "(cpi, channel, pulse, range)" "$tmp/err"'
"$bin" run --input "$tmp/rec_pcr.h5" --output "$tmp/o_rec_pcr.h5" "${rq[@]}" --layout pulse,channel,range
check "unlabelled recording with --layout: the same result" \
    '[ $? -eq 0 ] && "$same" "$tmp/o_rec.h5" "$tmp/o_rec_pcr.h5" /weights /output/iq /detections >/dev/null'
"$relayout" "$tmp/rec.h5" "$tmp/rec_cpr.h5" C,P,R
"$bin" run --input "$tmp/rec_cpr.h5" --output "$tmp/o_rec_cpr.h5" "${rq[@]}" 2>"$tmp/err"
check "unlabelled (cpi, C, P, R) recording: the warning names the cpi axis" \
    '[ $? -eq 0 ] && only_lines "rtstap: warning: $tmp/rec_cpr.h5: /data/iq has no axis labels; read as (cpi, channel, pulse, range) — label it or pass --layout"'

"$bin" stream --input "$tmp/rec_prc.h5" --backend cpu --slots 2 --quiet 2>"$tmp/err"
check "stream --input of a labelled (cpi, P, R, C) recording: exit 0" '[ $? -eq 0 ] && only_lines ""'
"$bin" stream --input "$tmp/rec_pcr.h5" --backend cpu --slots 2 --quiet 2>"$tmp/err"
check "stream --input of the unlabelled (cpi, P, C, R) one: refused" '[ $? -eq 1 ] && grep -q "look transposed" "$tmp/err"'
"$bin" stream --input "$tmp/rec_pcr.h5" --backend cpu --slots 2 --quiet --layout P,C,R
check "stream --input --layout P,C,R: exit 0" '[ $? -eq 0 ]'
"$bin" stream --input "$tmp/rec_cpr.h5" --backend cpu --slots 2 --quiet --strict 2>"$tmp/err"
check "stream --strict on an unlabelled recording: exit 1" '[ $? -eq 1 ] && grep -q -- "--strict refuses" "$tmp/err"'
"$bin" stream --preset easy --backend cpu --cpis 2 --slots 1 --ring 1 --quiet --layout P,C,R 2>"$tmp/err"
check "stream --layout without --input: exit 2" '[ $? -eq 2 ]'

# ---- plot reads its input cube the same way
"$relayout" "$tmp/v.h5" "$tmp/v_pcr.h5" P,C,R
"$bin" plot --input "$tmp/v_pcr.h5" --out-dir "$tmp/plot_refused" > /dev/null 2>"$tmp/err"
check "plot of an unlabelled (P, C, R) cube: refused" '[ $? -eq 1 ] && grep -q "look transposed" "$tmp/err"'
"$bin" plot --input "$tmp/v_pcr.h5" --layout P,C,R --out-dir "$tmp/plot_l" > /dev/null
"$bin" plot --input "$tmp/v.h5" --out-dir "$tmp/plot_ref" > /dev/null 2>"$tmp/err"
check "plot warns on an unlabelled cube" 'grep -q "^rtstap: warning: $tmp/v.h5: /data/iq has no axis labels" "$tmp/err"'
check "plot --layout P,C,R draws the original's picture" \
    'cmp -s "$tmp/plot_ref/angle_doppler.png" "$tmp/plot_l/angle_doppler.png"'
"$bin" plot --input "$tmp/v.h5" --strict --out-dir "$tmp/plot_s" > /dev/null 2>"$tmp/err"
check "plot --strict on an unlabelled cube: exit 1" '[ $? -eq 1 ]'
exit $fail
