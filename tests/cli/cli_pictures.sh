#!/usr/bin/env bash
# cli_pictures: the pictures of the adapted filter (issue 13 item 4) end to end — gen a
# small scene, run it with Q = 1 and Q = 3, tabulate both SINR losses, and draw
# adapted_response.png (a run's weights beside the clairvoyant optimum) and
# sinr_compare.png (both tables on one plot); each must be a complete PNG. Then what is
# missing or wrong: an input without /truth (a note, or exit 1 when the response is asked
# for), a result without /weights (exit 1), options out of range (exit 2), an existing
# picture without -f (exit 1). Env: RTSTAP_BIN (the rtstap binary).
set -u
B=${RTSTAP_BIN:?RTSTAP_BIN must name the rtstap binary}
T=$(mktemp -d "${TMPDIR:-/tmp}/rtstap_cli_pictures.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../support/cli_expect.sh" # fail, expect
# png_ok FILE: the PNG signature, an IHDR chunk first and an IEND chunk last (a file
# cut short or left half-written fails)
png_ok() {
    [ -s "$1" ] &&
        [ "$(head -c 16 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a0000000d49484452" ] &&
        [ "$(tail -c 12 "$1" | od -An -tx1 | tr -d ' \n')" = "0000000049454e44ae426082" ]
}

SEED=${RTSTAP_SEED:-20261203} # fixed in CI; RTSTAP_SEED=N explores
echo "seed = $SEED" >&2

# --- the chain: a scene, two algorithms, two tables, the pictures ----------------------------
expect 0 "$B" gen --preset ward --channels 6 --pulses 8 --range-gates 120 --seed "$SEED" \
    --target 61:0:75:10 -o "$T/scene.h5"
expect 0 "$B" run --input "$T/scene.h5" -o "$T/run1.h5" --doppler-order 1 --segments 2 \
    --training 60 --beams 3 --window chebyshev:50 --backend cpu --quiet
expect 0 "$B" run --input "$T/scene.h5" -o "$T/run3.h5" --doppler-order 3 --training 120 \
    --beams 3 --backend cpu --quiet
expect 0 "$B" sinr --input "$T/scene.h5" --result "$T/run1.h5" -o "$T/sinr1.h5" --quiet
expect 0 "$B" sinr --input "$T/scene.h5" --result "$T/run3.h5" -o "$T/sinr3.h5" --quiet
# the tables record the Doppler order and window the legend names
if command -v h5dump >/dev/null; then
    h5dump -a /sinr/doppler_order "$T/sinr3.h5" | grep -q "(0): 3" ||
        fail "sinr3.h5 lacks doppler_order 3"
    h5dump -a /sinr/window "$T/sinr1.h5" | grep -q '"chebyshev:50"' ||
        fail "sinr1.h5 lacks window chebyshev:50"
fi

expect 0 "$B" plot --input "$T/scene.h5" --result "$T/run3.h5" --sinr "$T/sinr3.h5" \
    --sinr "$T/sinr1.h5" --output-dir "$T/img"
for p in angle_doppler sinr_loss range_doppler sinr_compare adapted_response; do
    png_ok "$T/img/$p.png" || fail "$p.png is missing or not a complete PNG"
    grep -q "$T/img/$p.png" "$T/out" || fail "plot did not list $p.png"
done
# a PNG's width and height (IHDR): the response has two panels side by side
w=$(od -An -tu1 -j16 -N4 "$T/img/adapted_response.png" | awk '{print $1*16777216+$2*65536+$3*256+$4}')
[ "${w:-0}" -gt 1200 ] || fail "adapted_response.png is $w pixels wide, not two panels"

# every response option, on the Q = 1 run's second segment; labels of the tables
expect 0 "$B" plot --input "$T/scene.h5" --result "$T/run1.h5" --sinr "$T/sinr1.h5" \
    --sinr "$T/sinr3.h5" --label "factored, Q=1" --label "EFA, Q=3" --response-bin 2 \
    --response-segment 1 --response-beam 0 --response-grid 41,16 --response-floor -40 \
    --output-dir "$T/img2"
png_ok "$T/img2/adapted_response.png" || fail "adapted_response.png with every option"
png_ok "$T/img2/sinr_compare.png" || fail "sinr_compare.png with labels"
# one table: no comparison picture, the single-table picture as before
expect 0 "$B" plot --input "$T/scene.h5" --result "$T/run3.h5" --sinr "$T/sinr3.h5" \
    --output-dir "$T/img3"
png_ok "$T/img3/sinr_loss.png" && [ ! -e "$T/img3/sinr_compare.png" ] ||
    fail "one --sinr: wrong set of SINR pictures"

# --json (issue 33): the pictures written and the beam drawn; with -, the JSON alone on stdout
expect 0 "$B" plot --input "$T/scene.h5" --result "$T/run3.h5" --output-dir "$T/imgj" --json -
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
ok = d['command'] == 'plot' and 'beam' in d and len(d['pictures']) >= 2
ok = ok and all(p.startswith(sys.argv[2]) for p in d['pictures'])
sys.exit(0 if ok else 1)" "$T/out" "$T/imgj/" || fail "plot --json -: $(cat "$T/out")"

# never overwrite without -f; with -f, replaced
expect 1 "$B" plot --input "$T/scene.h5" --result "$T/run3.h5" --output-dir "$T/img3"
grep -q "already exists" "$T/err" || fail "existing picture: $(cat "$T/err")"
expect 0 "$B" plot --input "$T/scene.h5" --result "$T/run3.h5" --output-dir "$T/img3" -f

# --- what is missing ---------------------------------------------------------------------------
# an input without /truth: the cube alone (h5copy keeps its labels)
if command -v h5copy >/dev/null; then
    h5copy -i "$T/scene.h5" -o "$T/notruth.h5" -s /data -d /data
    h5copy -i "$T/run3.h5" -o "$T/noweights.h5" -s /config -d /config
    h5copy -i "$T/run3.h5" -o "$T/noweights.h5" -s /steering -d /steering
    expect 0 "$B" plot --input "$T/notruth.h5" --result "$T/run3.h5" --output-dir "$T/i1"
    grep -q "no adapted_response.png: .*/truth" "$T/err" ||
        fail "no note on the missing /truth: $(cat "$T/err")"
    [ ! -e "$T/i1/adapted_response.png" ] || fail "a response without /truth"
    expect 1 "$B" plot --input "$T/notruth.h5" --result "$T/run3.h5" --response-bin 1 \
        --output-dir "$T/i2"
    grep -q "/truth" "$T/err" || fail "asked-for response without /truth: $(cat "$T/err")"
    [ ! -e "$T/i2" ] || fail "plot drew pictures before failing on the missing /truth"
    expect 1 "$B" plot --input "$T/scene.h5" --result "$T/noweights.h5" --output-dir "$T/i3"
    grep -q "'/weights' is missing from" "$T/err" || fail "result without /weights: $(cat "$T/err")"
else
    echo "h5copy not found: the missing /truth and /weights cases are skipped" >&2
fi
# a run on another cube
expect 0 "$B" gen --preset ward --channels 6 --pulses 8 --range-gates 60 -o "$T/other.h5"
expect 1 "$B" plot --input "$T/other.h5" --result "$T/run3.h5" --response-bin 0 \
    --output-dir "$T/i4"

# --- usage errors: exit 2 ----------------------------------------------------------------------
expect 2 "$B" plot --input "$T/scene.h5" --response-bin 1 --output-dir "$T/i5"
grep -q "needs --result" "$T/err" || fail "--response-bin without --result: $(cat "$T/err")"
expect 2 "$B" plot --input "$T/scene.h5" --result "$T/run3.h5" --response-bin 8 --output-dir "$T/i5"
expect 2 "$B" plot --input "$T/scene.h5" --result "$T/run3.h5" --response-segment 1 \
    --output-dir "$T/i5"
expect 2 "$B" plot --input "$T/scene.h5" --result "$T/run3.h5" --response-beam 3 --output-dir "$T/i5"
expect 2 "$B" plot --input "$T/scene.h5" --result "$T/run3.h5" --response-grid 1,16 \
    --output-dir "$T/i5"
expect 2 "$B" plot --input "$T/scene.h5" --result "$T/run3.h5" --response-grid 41 \
    --output-dir "$T/i5"
expect 2 "$B" plot --input "$T/scene.h5" --result "$T/run3.h5" --response-floor 0 \
    --output-dir "$T/i5"
expect 2 "$B" plot --input "$T/scene.h5" --sinr "$T/sinr3.h5" --label a --label b \
    --output-dir "$T/i5"
nine=()
for i in 1 2 3 4 5 6 7 8 9; do nine+=(--sinr "$T/sinr3.h5"); done
expect 2 "$B" plot --input "$T/scene.h5" "${nine[@]}" --output-dir "$T/i5"
grep -q "at most 8 times" "$T/err" || fail "nine --sinr: $(cat "$T/err")"
[ ! -e "$T/i5" ] || fail "a usage error left pictures"
expect 0 "$B" plot --help
grep -q -- "--sinr FILE\]\.\.\." "$T/out" && grep -q "adapted_response.png" "$T/out" ||
    fail "plot --help lacks the repeatable --sinr or the new picture"

# --- a recording's CPI (issue 33): --cpi, the beam of the strongest detection, vectors ------
# 4 CPIs, a target drifting 8 cells a CPI; the run's output kept for the map
expect 0 "$B" gen --preset ward --channels 6 --pulses 16 --range-gates 200 --cpis 4 --seed 5 \
    --target 61:0:75:15 --target-drift 0:8 -o "$T/rec.h5"
expect 0 "$B" run --input "$T/rec.h5" -o "$T/rec_run.h5" --doppler-order 3 --training 120 \
    --beams 5 --backend cpu --keep-output --quiet
expect 0 "$B" plot --input "$T/rec.h5" --result "$T/rec_run.h5" --cpi 2 --output-dir "$T/rc2" --json "$T/rc2.json"
expect 0 "$B" plot --input "$T/rec.h5" --result "$T/rec_run.h5" --cpi 0 --output-dir "$T/rc0"
expect 0 "$B" plot --input "$T/rec.h5" --result "$T/rec_run.h5" --cpi 2 --output-dir "$T/rc2b"
for p in angle_doppler sinr_loss range_doppler adapted_response; do
    png_ok "$T/rc2/$p.png" || fail "--cpi 2: $p.png is missing or not a complete PNG"
done
w=$(od -An -tu1 -j16 -N4 "$T/rc2/range_doppler.png" | awk '{print $1*16777216+$2*65536+$3*256+$4}')
h=$(od -An -tu1 -j20 -N4 "$T/rc2/range_doppler.png" | awk '{print $1*16777216+$2*65536+$3*256+$4}')
[ "$w" = 980 ] && [ "$h" = 660 ] || fail "range_doppler.png is ${w}x$h, not 980x660"
# the CPI drawn is the one asked for: CPI 0's map differs, CPI 2's drawn again is the same
! cmp -s "$T/rc0/range_doppler.png" "$T/rc2/range_doppler.png" || fail "--cpi 0 and --cpi 2 drew the same map"
cmp -s "$T/rc2/range_doppler.png" "$T/rc2b/range_doppler.png" || fail "--cpi 2 twice: different maps"
# the beam is the strongest detection's of CPI 2 (the result's /detections, read with h5py)
py=""
for p in /usr/bin/python3 python3; do "$p" -c "import h5py" 2>/dev/null && { py=$p; break; }; done
if [ -n "$py" ]; then
    "$py" -c "
import json, sys, h5py
d = json.load(open(sys.argv[1]))
t = h5py.File(sys.argv[2], 'r')['/detections'][...]
t = t[t['cpi'] == 2]
want = int(t['beam'][t['snr_db'].argmax()])
ok = d['cpi'] == 2 and d['beam'] == want and d['beam_from'] == 'the strongest detection'
sys.exit(0 if ok else 1)" "$T/rc2.json" "$T/rec_run.h5" || fail "--cpi 2: not the strongest detection's beam: $(tr -d '\n' < "$T/rc2.json" | head -c 400)"
elif [ "${RTSTAP_REQUIRE_READERS:-0}" = 1 ]; then
    fail "python3-h5py is missing"
fi
# SVG and PDF from the same drawing; limits
expect 0 "$B" plot --input "$T/rec.h5" --result "$T/rec_run.h5" --cpi 1 --format svg --output-dir "$T/svg" \
    --xlim -100,100 --ylim -30,5
expect 0 "$B" plot --input "$T/rec.h5" --result "$T/rec_run.h5" --cpi 1 --format PDF --output-dir "$T/pdf"
for p in angle_doppler sinr_loss range_doppler adapted_response; do
    head -c 200 "$T/svg/$p.svg" | grep -q "<svg" && grep -q "</svg>" "$T/svg/$p.svg" || fail "$p.svg is not a complete SVG"
    [ "$(head -c 5 "$T/pdf/$p.pdf")" = "%PDF-" ] && tail -c 8 "$T/pdf/$p.pdf" | grep -q "%%EOF" || fail "$p.pdf is not a complete PDF"
done
expect 2 "$B" plot --input "$T/rec.h5" --cpi 4 --output-dir "$T/bad"
grep -q -- "--cpi 4" "$T/err" || fail "--cpi past the recording: $(cat "$T/err")"
expect 2 "$B" plot --input "$T/rec.h5" --xlim 5,1 --output-dir "$T/bad"
expect 2 "$B" plot --input "$T/rec.h5" --format jpeg --output-dir "$T/bad"
expect 1 "$B" plot --input "$T/rec.h5" --result "$T/run3.h5" --output-dir "$T/bad"

if [ "$fails" -gt 0 ]; then
    echo "cli_pictures: $fails failure(s) (seed $SEED)" >&2
    exit 1
fi
echo "cli_pictures: all passed" >&2
exit 0
