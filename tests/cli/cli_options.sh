#!/usr/bin/env bash
# cli_options: the command-line layer shared by every command (app/cli_opts.c) —
# -h/--help everywhere (help from the option table, lines within 90 columns), the usage
# errors (exit 2), the old spellings kept as aliases; -f/--force (without it an existing
# output is refused and kept; with it the output is replaced; a run that fails with it
# — before or after its result file was begun — leaves the old file as it was, and no
# temporary); --json FILE|- valid JSON (python3 -m json.tool, strict UTF-8) with hostile
# paths (quotes, backslash, newline, bytes that are not UTF-8) and NaN/infinite values
# (null); --device; --version's GPU line in plain words.
# env: RTSTAP_BIN, RTSTAP_TOOLS_DIR (mkcube), RTSTAP_SOURCE_DIR (the PERFECT small input).
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
mkcube=${RTSTAP_TOOLS_DIR:-$(dirname "$bin")/tests}/mkcube
data="${RTSTAP_SOURCE_DIR:-}/datasets/perfect"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
# strict JSON: python3's parser on the file read as UTF-8 (an invalid byte is an error)
json_ok() { python3 -c 'import json,sys; json.loads(open(sys.argv[1],"rb").read().decode("utf-8"))' "$1" 2>/dev/null; }
# a JSON field by a Python expression on the document d
json_get() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1],encoding="utf-8")); print(eval(sys.argv[2]))' "$1" "$2"; }
no_tmp() { [ -z "$(find "$tmp" -name '.*.tmp.*' | head -1)" ]; }
have_python=1
python3 -c 'import json' 2>/dev/null || have_python=0

# ---- help and usage errors, every command ------------------------------------------------
for cmd in run stream bench bench-qr perfect import-perfect gen sinr plot; do
    "$bin" $cmd -h > "$tmp/h1" 2>&1
    check "$cmd -h: exit 0 and a usage" '[ $? -eq 0 ] && head -1 "$tmp/h1" | grep -q "^usage: rtstap $cmd "'
    "$bin" $cmd --help > "$tmp/h2" 2>&1
    check "$cmd --help = -h" 'cmp -s "$tmp/h1" "$tmp/h2"'
    check "$cmd --help: lines within 90 columns" '[ "$(awk "length > 90" "$tmp/h1" | wc -l)" -eq 0 ]'
    check "$cmd --help lists -h" 'grep -q "^  -h, --help  *this text" "$tmp/h1"'
    "$bin" $cmd --no-such-option 2> "$tmp/e"
    check "$cmd: unknown option, exit 2" '[ $? -eq 2 ] && grep -q "^rtstap: error: unknown option '"'"'--no-such-option'"'"' (see rtstap $cmd --help)" "$tmp/e"'
    # (plot takes one FILE as its argument, as --input: a second one is the stray)
    first=; [ $cmd = plot ] && first=scene.h5
    "$bin" $cmd $first stray -h 2> "$tmp/e" > /dev/null
    check "$cmd: a stray argument, exit 2" '[ $? -eq 2 ] && grep -q "unexpected argument '"'"'stray'"'"'" "$tmp/e"'
done
for cmd in run perfect import-perfect gen sinr; do
    "$bin" $cmd -h > "$tmp/h"
    check "$cmd has -o, --output and -f, --force" 'grep -q "^  -o, --output FILE" "$tmp/h" && grep -q "^  -f, --force" "$tmp/h"'
done
for cmd in run stream bench bench-qr perfect sinr; do
    check "$cmd has --json FILE|-" '"$bin" $cmd -h | grep -q "^      --json FILE|-"'
done
for cmd in run stream bench bench-qr perfect; do
    check "$cmd has --device N" '"$bin" $cmd -h | grep -q "^      --device N"'
done
"$bin" run -o 2> "$tmp/e"
check "-o without a value: exit 2" '[ $? -eq 2 ] && grep -q "error: -o needs a value" "$tmp/e"'
"$bin" run --output 2> "$tmp/e"
check "--output without a value: exit 2" '[ $? -eq 2 ] && grep -q "error: --output needs a value" "$tmp/e"'
"$bin" run -o "$tmp/x.h5" --quiet=yes 2> "$tmp/e"
check "a flag with a value: exit 2" '[ $? -eq 2 ] && grep -q "error: --quiet takes no value" "$tmp/e"'
"$bin" run -o "$tmp/x.h5" --s 3 2> "$tmp/e"
check "an ambiguous abbreviation: exit 2 naming the candidates" '[ $? -eq 2 ] && grep -q "ambiguous: --scale, --segments, --sector, --sub-cpi, --strict" "$tmp/e"'
"$bin" run --preset easy 2> "$tmp/e"
check "run without -o: exit 2" '[ $? -eq 2 ] && grep -q "error: run needs --output FILE" "$tmp/e"'
"$bin" perfect 2> "$tmp/e"
check "every missing required option named" '[ $? -eq 2 ] && grep -q "perfect needs --size SIZE, --input-dir DIR and --output FILE" "$tmp/e"'
"$bin" run -o "$tmp/x.h5" --segments=0 2> "$tmp/e"
check "--name=value checked like --name value" '[ $? -eq 2 ] && grep -q "\-\-segments expects an integer between 1 and" "$tmp/e"'
"$bin" bench-qr --seed -3 2> "$tmp/e"
check "--seed -3: exit 2" '[ $? -eq 2 ] && grep -q "\-\-seed expects a non-negative integer" "$tmp/e"'
check "nothing written by usage errors" '[ ! -e "$tmp/x.h5" ]'

# ---- -f/--force ---------------------------------------------------------------------------
small=(--preset ward --channels 4 --pulses 8 --range-gates 60 --no-clutter --quiet)
"$bin" gen "${small[@]}" --seed 1 -o "$tmp/g.h5"
check "gen -o: exit 0" '[ $? -eq 0 ] && [ -s "$tmp/g.h5" ]'
cp "$tmp/g.h5" "$tmp/g1.h5"
"$bin" gen "${small[@]}" --seed 2 -o "$tmp/g.h5" 2> "$tmp/e"
check "gen over an existing file without -f: exit 1, kept" '[ $? -eq 1 ] && grep -q "already exists; refusing to overwrite" "$tmp/e" && cmp -s "$tmp/g.h5" "$tmp/g1.h5"'
"$bin" gen "${small[@]}" --seed 2 -o "$tmp/g.h5" -f
check "gen -f: replaced" '[ $? -eq 0 ] && ! cmp -s "$tmp/g.h5" "$tmp/g1.h5"'
cp "$tmp/g.h5" "$tmp/g2.h5"
"$bin" gen "${small[@]}" --seed 1 --out "$tmp/g.h5" --force
check "gen --out (old spelling) --force: replaced again" '[ $? -eq 0 ] && ! cmp -s "$tmp/g.h5" "$tmp/g2.h5"'
cp "$tmp/g.h5" "$tmp/g1.h5"
"$bin" gen "${small[@]}" --seed 1 --cpis 2 --target 10:0:0:10 --target-drift 0:100 -fo "$tmp/g.h5" 2> /dev/null
check "gen -f failing (a target drifts out): exit 2, the old file kept" '[ $? -eq 2 ] && cmp -s "$tmp/g.h5" "$tmp/g1.h5"'

rp=(--preset easy --segments 1 --training 24 --doppler-order 1 --beams 4 --backend cpu --quiet)
"$mkcube" noise "$tmp/noise.h5" 3 && "$mkcube" overflow-rec "$tmp/rec.h5" 3 ||
    { echo "FAIL: mkcube"; exit 1; }
"$bin" run --input "$tmp/noise.h5" -o "$tmp/r.h5" "${rp[@]}"
check "run -o: exit 0" '[ $? -eq 0 ]'
cp "$tmp/r.h5" "$tmp/r0.h5"
"$bin" run --input "$tmp/noise.h5" -o "$tmp/r.h5" "${rp[@]}" --loading 1e-3 2> "$tmp/e"
check "run over an existing file without -f: exit 1, kept" '[ $? -eq 1 ] && grep -q "already exists" "$tmp/e" && cmp -s "$tmp/r.h5" "$tmp/r0.h5"'
"$bin" run --input "$tmp/noise.h5" -o "$tmp/r.h5" "${rp[@]}" --loading 1e-3 -f
check "run -f: replaced" '[ $? -eq 0 ] && ! cmp -s "$tmp/r.h5" "$tmp/r0.h5"'
cp "$tmp/r.h5" "$tmp/r1.h5"
"$bin" run --input "$tmp/missing.h5" -o "$tmp/r.h5" "${rp[@]}" -f 2> /dev/null
check "run -f failing to read its input: exit 1, the old file kept" '[ $? -eq 1 ] && cmp -s "$tmp/r.h5" "$tmp/r1.h5"'
# a recording whose CPI 1 overflows: the result file was begun (CPI 0 written) when it fails
"$bin" run --input "$tmp/rec.h5" -o "$tmp/r.h5" "${rp[@]}" --check -f 2> "$tmp/e"
check "run -f failing half-way through a recording: exit 1, the old file kept, no temporary" \
    '[ $? -eq 1 ] && grep -q "CPI 1" "$tmp/e" && cmp -s "$tmp/r.h5" "$tmp/r1.h5" && no_tmp'
"$bin" run --input "$tmp/rec.h5" -o "$tmp/r.h5" "${rp[@]}" -f
check "run -f over a recording: replaced" '[ $? -eq 0 ] && ! cmp -s "$tmp/r.h5" "$tmp/r1.h5"'
mkdir "$tmp/adir"
"$bin" run --input "$tmp/noise.h5" -o "$tmp/adir" "${rp[@]}" -f 2> "$tmp/e"
check "-f does not replace a directory" '[ $? -eq 1 ] && grep -q "is a directory" "$tmp/e" && [ -d "$tmp/adir" ]'
echo keep > "$tmp/j.json"
"$bin" run --input "$tmp/noise.h5" -o "$tmp/r2.h5" "${rp[@]}" --json "$tmp/j.json" 2> "$tmp/e"
check "an existing --json file without -f: exit 1 before any work" '[ $? -eq 1 ] && [ ! -e "$tmp/r2.h5" ] && [ "$(cat "$tmp/j.json")" = keep ]'
"$bin" run --input "$tmp/noise.h5" -o "$tmp/r2.h5" "${rp[@]}" --json "$tmp/j.json" -f
check "--json with -f: replaced" '[ $? -eq 0 ] && [ "$(cat "$tmp/j.json")" != keep ]'
"$bin" gen "${small[@]}" -o "$tmp/scene.h5"
"$bin" run --input "$tmp/scene.h5" -o "$tmp/sr.h5" --doppler-order 1 --segments 1 --training 2 \
    --loading 1e-2 --backend cpu --cfar none --quiet
"$bin" sinr --input "$tmp/scene.h5" --result "$tmp/sr.h5" -o "$tmp/s.h5" --quiet
cp "$tmp/s.h5" "$tmp/s0.h5"
"$bin" sinr --input "$tmp/scene.h5" --result "$tmp/sr.h5" -o "$tmp/s.h5" --quiet 2> /dev/null
check "sinr without -f: exit 1" '[ $? -eq 1 ] && cmp -s "$tmp/s.h5" "$tmp/s0.h5"'
"$bin" sinr --input "$tmp/scene.h5" --result "$tmp/sr.h5" --output "$tmp/s.h5" --quiet -f
check "sinr --output -f: exit 0" '[ $? -eq 0 ]'
"$bin" plot --input "$tmp/scene.h5" --output-dir "$tmp/img" > /dev/null 2>&1
check "plot --output-dir: exit 0" '[ $? -eq 0 ] && [ -s "$tmp/img/angle_doppler.png" ]'
"$bin" plot --input "$tmp/scene.h5" --out-dir "$tmp/img" > /dev/null 2> "$tmp/e"
check "plot again (--out-dir, the old spelling) without -f: exit 1" '[ $? -eq 1 ] && grep -q "already exists" "$tmp/e"'
"$bin" plot --input "$tmp/scene.h5" --output-dir "$tmp/img" -f > /dev/null 2>&1
check "plot -f: exit 0" '[ $? -eq 0 ]'
echo keep > "$tmp/tl.csv"
"$bin" stream --preset easy --backend cpu --threads 1 --cpis 4 --slots 1 --ring 1 --quiet \
    --timeline "$tmp/tl.csv" 2> "$tmp/e"
check "stream --timeline over an existing file without -f: exit 1, kept" '[ $? -eq 1 ] && [ "$(cat "$tmp/tl.csv")" = keep ]'
"$bin" stream --preset easy --backend cpu --threads 1 --cpis 4 --slots 1 --ring 1 --quiet \
    --timeline "$tmp/tl.csv" -f
check "stream --timeline -f: replaced (header + 4 CPIs)" '[ $? -eq 0 ] && [ "$(wc -l < "$tmp/tl.csv")" -eq 5 ]'
check "no temporary left by the -f runs" 'no_tmp'

# ---- --json FILE|-: valid JSON with hostile strings and non-finite values ----------------
if [ $have_python -eq 1 ]; then
    weird="$tmp/we\"ird\\ na"$'\n'"me "$'\xff\xfe'"é.h5"
    cp "$tmp/noise.h5" "$weird"
    "$bin" run --input "$weird" -o "$tmp/w.h5" "${rp[@]}" --json "$tmp/w.json"
    check "run --json with a hostile input path: exit 0, strict JSON" '[ $? -eq 0 ] && json_ok "$tmp/w.json"'
    check "  the path: quote, backslash, newline kept; each byte not UTF-8 a U+FFFD" \
        'python3 -c "import json,os,sys; d=json.load(open(sys.argv[1],encoding=\"utf-8\")); sys.exit(d[\"input\"] != os.fsencode(sys.argv[2]).decode(\"utf-8\", \"replace\"))" "$tmp/w.json" "$weird"'
    check "  the run's fields" '[ "$(json_get "$tmp/w.json" "(d[\"command\"], d[\"config\"][\"beams\"], \"qr\" in d[\"stage_ms\"])")" = "('"'"'run'"'"', 4, True)" ]'
    "$bin" run --input "$weird" -o "$tmp/w2.h5" "${rp[@]}" --json - > "$tmp/w2.json"
    check "run --json -: stdout is the JSON only" '[ $? -eq 0 ] && json_ok "$tmp/w2.json"'
    "$bin" run --input "$tmp/rec.h5" -o "$tmp/w3.h5" "${rp[@]}" --json - > "$tmp/w3.json"
    check "run --json - over a recording: its rates" '[ $? -eq 0 ] && json_ok "$tmp/w3.json" && [ "$(json_get "$tmp/w3.json" "d[\"cpis_run\"]")" = 3 ]'
    # K = 2 < N - 1 = 3: the RMB law is undefined, its mean NaN
    "$bin" sinr --input "$tmp/scene.h5" --result "$tmp/sr.h5" -o "$tmp/s2.h5" --json - > "$tmp/s.json" 2> "$tmp/s.txt"
    check "sinr --json - with NaN (RMB undefined): strict JSON, null, the text on stderr" \
        '[ $? -eq 0 ] && json_ok "$tmp/s.json" && [ "$(json_get "$tmp/s.json" "d[\"summary\"][\"rmb_mean\"]")" = None ] && grep -q "RMB law undefined" "$tmp/s.txt"'
    # a stream over a path with multi-byte characters (the workload name is cut at 31 bytes)
    long="$tmp/ééééééééééééééééééééééééé.h5"
    "$bin" gen --preset easy --no-clutter --cpis 2 --quiet -o "$long"
    "$bin" stream --input "$long" --preset easy --backend cpu --threads 1 --cpis 2 --slots 1 \
        --quiet --json "$tmp/st.json" 2> /dev/null
    check "stream --json: strict JSON whatever the path" 'json_ok "$tmp/st.json"'
    "$bin" bench-qr --sizes 8x4x4 --backends cpu --repeat 2 --seed 1 --json - > "$tmp/bq.json" 2> /dev/null
    check "bench-qr --json -: stdout is the JSON only" 'json_ok "$tmp/bq.json"'
    # --model times every gpu kernel variant beside the model: with a GPU, a table and a
    # "model" array in the JSON; without one (or without CUDA), exit 1 saying why
    "$bin" bench-qr --sizes 16x4x8 --backends cpu --repeat 2 --seed 1 --model --json "$tmp/bm.json" \
        > "$tmp/bm.txt" 2> "$tmp/bm.err"
    rc=$?
    if [ $rc -eq 0 ]; then
        check "bench-qr --model: variants beside the model" \
            'grep -q "model_us" "$tmp/bm.txt" && [ "$(json_get "$tmp/bm.json" "sum(1 for r in d[\"model\"] if r[\"choice\"])")" = 1 ]'
    else
        check "bench-qr --model without a GPU: exit 1 with the reason" \
            '[ $rc -eq 1 ] && grep -Eiq "cuda|gpu|device" "$tmp/bm.err"'
    fi
    "$bin" bench --workloads easy --backends cpu --cpu-cpis 1 --threads 1 --json - > "$tmp/b.json" 2> /dev/null
    check "bench --json -: stdout is the JSON only" 'json_ok "$tmp/b.json"'
    if [ -f "$data/small_app_input.bin" ]; then
        "$bin" perfect --size small --input-dir "$data" -o "$tmp/p.bin" --backend cpu --quiet
        # the same output as its gold (a copy: an output may not be an input): an infinite
        # SNR, written as null
        cp "$tmp/p.bin" "$tmp/gold.bin"
        "$bin" perfect --size small --input-dir "$data" -o "$tmp/p.bin" -f --backend cpu --quiet \
            --gold "$tmp/gold.bin" --json "$tmp/p.json" > /dev/null
        check "perfect --json, infinite SNR: strict JSON, null, pass" \
            '[ $? -eq 0 ] && json_ok "$tmp/p.json" && [ "$(json_get "$tmp/p.json" "(d[\"gold\"][\"snr_db\"], d[\"gold\"][\"pass\"])")" = "(None, True)" ]'
    fi
else
    echo "note: no python3: JSON checks skipped"
fi

# ---- --device and --version ---------------------------------------------------------------
"$bin" --version > "$tmp/v"
check "--version: the GPU line in plain words" \
    'grep -Eq "^GPU backend: (available|not available: (no CUDA driver|no CUDA device|CUDA driver too old|CUDA not usable|rtstap was built without CUDA support))" "$tmp/v"'
"$bin" run -o "$tmp/d.h5" --device -1 2> "$tmp/e"
check "--device -1: exit 2" '[ $? -eq 2 ] && grep -q "\-\-device expects an integer between 0 and" "$tmp/e"'
"$bin" run -o "$tmp/d.h5" --preset easy --backend cpu --quiet --device 1000 2> "$tmp/e"
rc=$?
if grep -q "^GPU backend: available" "$tmp/v"; then
    check "--device 1000 on this machine: exit 2, no such device ($rc)" '[ $rc -eq 2 ] && grep -q "GPU device 1000 does not exist: CUDA sees" "$tmp/e"'
else
    check "--device 1000 without a usable GPU: exit 1 saying why ($rc)" '[ $rc -eq 1 ] && grep -q "^rtstap: error: --device 1000: " "$tmp/e"'
fi
check "--device failing: no output" '[ ! -e "$tmp/d.h5" ]'

# ---- habits (issue 33): did-you-mean, help CMD, -V, names in any case
"$bin" run --trainig 40 -o "$tmp/dym.h5" 2> "$tmp/e"
check "--trainig: exit 2, did you mean --training?" '[ $? -eq 2 ] && grep -q "unknown option .--trainig.; did you mean --training?" "$tmp/e"'
"$bin" strem 2> "$tmp/e"
check "strem: exit 2, did you mean stream?" '[ $? -eq 2 ] && grep -q "unknown command .strem.; did you mean stream?" "$tmp/e"'
"$bin" run --zzzzzz 1 -o "$tmp/dym.h5" 2> "$tmp/e"
check "--zzzzzz: no guess" '[ $? -eq 2 ] && grep -q "unknown option .--zzzzzz. (see" "$tmp/e"'
"$bin" help stream > "$tmp/h" 2>&1
check "help stream: the stream usage" '[ $? -eq 0 ] && grep -q "^usage: rtstap stream" "$tmp/h"'
check "-V: the version" '[ "$("$bin" -V | head -1)" = "$("$bin" --version | head -1)" ]'
"$bin" run --preset EASY --backend CPU --algorithm JDL --cfar CA --window Hann --training 40 --beams 4 \
    -o "$tmp/case.h5" --quiet
check "names in any case (EASY, CPU, JDL, CA, Hann): exit 0" '[ $? -eq 0 ] && [ -s "$tmp/case.h5" ]'

# ---- --json on gen and the imports (issue 33): the file written, as JSON alone on stdout with -
"$bin" gen --preset ward --channels 6 --pulses 32 --range-gates 128 --cpis 2 -o "$tmp/gj.h5" --quiet --json - > "$tmp/gj.json"
check "gen --json -: the JSON alone on stdout, the file and its scene" \
    'json_ok "$tmp/gj.json" && grep -q "\"command\":[[:space:]]*\"gen\"" "$tmp/gj.json" &&
     grep -q "\"cpis\":[[:space:]]*2" "$tmp/gj.json" && grep -q "\"targets\"" "$tmp/gj.json"'
head -c $((4 * 8 * 48 * 4)) /dev/zero > "$tmp/ij.bin"
"$bin" import-raw --input "$tmp/ij.bin" --shape 4,8,48 --type ci16_le -o "$tmp/ij.h5" --json - > "$tmp/ij.json" 2> "$tmp/ij.err"
check "import-raw --json -: the JSON on stdout, the line on stderr" \
    '[ $? -eq 0 ] && json_ok "$tmp/ij.json" && grep -q "\"type\":[[:space:]]*\"ci16_le\"" "$tmp/ij.json" &&
     grep -q "^wrote $tmp/ij.h5" "$tmp/ij.err"'
"$bin" import-perfect --size small --input-dir "$RTSTAP_SOURCE_DIR/datasets/perfect" -o "$tmp/pj.h5" --json "$tmp/pj.json" > /dev/null
check "import-perfect --json FILE: the file and the run it needs" \
    '[ $? -eq 0 ] && json_ok "$tmp/pj.json" && grep -q "\"size\":[[:space:]]*\"small\"" "$tmp/pj.json" && grep -q "\"training\"" "$tmp/pj.json"'

# ---- the preset fitted to a file's shape (issue 33): what it cannot hold is lowered and said;
# what was typed is never changed
"$bin" gen --preset ward --channels 6 --pulses 32 --range-gates 128 --no-clutter -o "$tmp/g128.h5" --quiet
"$bin" run --input "$tmp/g128.h5" -o "$tmp/g128r.h5" --backend cpu 2> "$tmp/e" >/dev/null
check "a 128-gate file with the hard preset: runs, K = 128 said" \
    '[ $? -eq 0 ] && grep -q "note: .*g128.h5: from its shape: --training 128 (the preset.s 240 is more than a segment.s 128 cells)" "$tmp/e"'
"$bin" run --input "$tmp/g128.h5" -o "$tmp/g128t.h5" --backend cpu --training 240 --quiet 2> "$tmp/e"
check "--training 240 typed on 128 gates: still refused by its flag" '[ $? -eq 1 ] && grep -q "\-\-training 240 must be between 1 and the 128" "$tmp/e"'
"$bin" gen --preset ward --channels 16 --pulses 128 --range-gates 400 --no-clutter -o "$tmp/g400.h5" --quiet
"$bin" run --input "$tmp/g400.h5" -o "$tmp/g400r.h5" --backend cpu --preset easy 2> "$tmp/e" >/dev/null
check "--preset easy on 400 gates: S = 2 (the preset's 3 does not divide 400), said" \
    '[ $? -eq 0 ] && grep -q "\-\-segments 2 (the preset.s 3 does not divide the 400 range gates)" "$tmp/e"'

# ---- one table of processing options (issue 33): stream takes run's
"$bin" stream --preset easy --cpis 4 --slots 2 --backend cpu --beams 8 --segments 2 --loading 0.01 \
    --window hann --doppler-bins 256 --training 40 --doppler-order 3 --json "$tmp/sp.json" 2> "$tmp/e"
check "stream --beams --segments --loading --window --doppler-bins --training: exit 0, applied" \
    '[ $? -eq 0 ] && python3 -c "
import json, sys
c = json.load(open(sys.argv[1]))[\"config\"]
want = dict(beams=8, segments=2, loading=0.01, doppler_bins=256, training=40, doppler_order=3)
sys.exit(0 if all(c[k] == v for k, v in want.items()) else 1)" "$tmp/sp.json"'
diff <("$bin" run --help | grep -E "^ +--(doppler-bins|doppler-order|segments|training|beams|loading|window) ") \
     <("$bin" stream --help | grep -E "^ +--(doppler-bins|doppler-order|segments|training|beams|loading|window) ") > "$tmp/d"
check "run and stream document the processing options alike (one table)" '[ ! -s "$tmp/d" ]'

# ---- stream --devices (issue 32): one engine per GPU; without a GPU, auto runs one CPU engine
"$bin" stream --preset easy --cpis 4 --slots 2 --devices all --json "$tmp/dev.json" 2> "$tmp/e"
rc=$?
if grep -q "^GPU backend: available" "$tmp/v"; then
    check "--devices all: exit 0, a rate per device and in all ($rc)" '[ $rc -eq 0 ] && grep -q "\"devices\"" "$tmp/dev.json" && grep -q "all: 4 CPIs" "$tmp/e"'
else
    check "--devices all without a GPU: one CPU engine, said once ($rc)" \
        '[ $rc -eq 0 ] && [ "$(grep -c "warning: --devices all: no GPU" "$tmp/e")" = 1 ] && grep -q "\"backend\":[[:space:]]*\"cpu\"" "$tmp/dev.json"'
    "$bin" stream --preset easy --cpis 4 --devices 0,1 2> "$tmp/e"
    check "--devices 0,1 without a GPU: exit 1 saying why" '[ $? -eq 1 ] && grep -q "^rtstap: error: --devices 0,1: no GPU: " "$tmp/e"'
    "$bin" stream --preset easy --cpis 4 --devices all --backend gpu 2> "$tmp/e"
    check "--devices all --backend gpu without a GPU: exit 1" '[ $? -eq 1 ] && grep -q "^rtstap: error: --devices all: no GPU" "$tmp/e"'
fi
for bad in "--devices 0,x" "--devices all --input $tmp/none.h5" "--devices all --device 0" "--devices all --timeline $tmp/t.csv"; do
    "$bin" stream --preset easy --cpis 4 $bad 2> "$tmp/e"
    check "stream $bad: exit 2" '[ $? -eq 2 ] && grep -q "^rtstap: error: --devices" "$tmp/e"'
done
# an empty list, an empty item, a number past an int (issue 43: '' was exit 1, "no GPU"; with
# RTSTAP_TEST_DEVICES_CPU=1 a run of no engine); run and stream parse the list alike
for bad in "" "0," "0,,1" ",1" "4294967296"; do
    rm -f "$tmp/nodev.h5"
    RTSTAP_TEST_DEVICES_CPU=1 "$bin" stream --preset easy --cpis 4 --devices "$bad" 2> "$tmp/e"
    check "stream --devices '$bad': exit 2 naming it" \
        '[ $? -eq 2 ] && grep -q "^rtstap: error: --devices: .$bad. is not a list of device numbers or all" "$tmp/e"'
    RTSTAP_TEST_DEVICES_CPU=1 "$bin" run --input "$tmp/g.h5" --output "$tmp/nodev.h5" --devices "$bad" 2> "$tmp/e"
    check "run --devices '$bad': exit 2 naming it, nothing written" \
        '[ $? -eq 2 ] && grep -q "^rtstap: error: --devices: .$bad. is not a list of device numbers or all" "$tmp/e" && [ ! -e "$tmp/nodev.h5" ]'
done
exit $fail
