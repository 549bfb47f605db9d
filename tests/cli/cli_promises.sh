#!/usr/bin/env bash
# cli_promises: a radar engineer's first hour (issue 42, rows 3 and 4) — the command line
# keeps its promises. `info FILE` and `plot FILE` take the file as their argument (both it
# and --input, or two arguments, are a usage error); `info` describes a result of `run`
# (what was run on what, its CPIs and detections, whether it stopped; --json too) and gives
# an unlabelled transposed cube the words `run` refuses it with; a mistyped command gets its
# closest name (rnu: run) in one line, an option its last word's (--pfa: --cfar-pfa); a
# SigMF, raw or PERFECT file given to `run` names the import command that reads it.
# env: RTSTAP_BIN, RTSTAP_TOOLS_DIR (relayout, h5shape), RTSTAP_SOURCE_DIR (PERFECT input).
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
tools=${RTSTAP_TOOLS_DIR:-$(dirname "$bin")/tests}
for t in "$tools/relayout" "$tools/h5shape"; do
    [ -x "$t" ] || { echo "cli_promises: $t not built"; exit 77; }
done
src=${RTSTAP_SOURCE_DIR:-$(dirname "$0")/../..}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
# fields of a JSON document d by a Python expression, printed separated by blanks
json_get() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1],encoding="utf-8")); v=eval(sys.argv[2]); print(*(v if isinstance(v, tuple) else (v,)))' "$1" "$2"; }

# ---- row 3: info FILE, plot FILE ------------------------------------------------------------
"$bin" gen --preset ward --channels 6 --pulses 32 --range-gates 240 --target 151:0:50:-5 --seed 3 \
    -o "$tmp/cpi.h5" --quiet
opts=(--backend cpu --doppler-order 3 --training 60 --segments 2 --beams 3 --loading 0.01 --quiet)
"$bin" run --input "$tmp/cpi.h5" -o "$tmp/r.h5" "${opts[@]}" --cfar-pfa 1e-3
check "run: exit 0" '[ $? -eq 0 ]'
"$bin" info "$tmp/cpi.h5" > "$tmp/i1" 2> "$tmp/e1"
check "info FILE: exit 0" '[ $? -eq 0 ] && grep -q "shape: 6 channels x 32 pulses x 240 range gates" "$tmp/i1"'
"$bin" info --input "$tmp/cpi.h5" > "$tmp/i2" 2> /dev/null
check "info FILE = info --input FILE" 'cmp -s "$tmp/i1" "$tmp/i2"'
"$bin" info "$tmp/cpi.h5" --input "$tmp/cpi.h5" > /dev/null 2> "$tmp/e"
check "info FILE --input FILE: exit 2, given twice" '[ $? -eq 2 ] && grep -q "^rtstap: error: FILE given twice" "$tmp/e"'
"$bin" info "$tmp/cpi.h5" "$tmp/r.h5" > /dev/null 2> "$tmp/e"
check "info A B: exit 2, one FILE" '[ $? -eq 2 ] && grep -q "unexpected argument .*: info takes one FILE" "$tmp/e"'
"$bin" info > /dev/null 2> "$tmp/e"
check "info alone: exit 2 naming FILE" '[ $? -eq 2 ] && grep -q "info needs FILE (or --input FILE)" "$tmp/e"'
"$bin" info -- "$tmp/cpi.h5" > "$tmp/i3" 2> /dev/null
check "info -- FILE: the argument after --" '[ $? -eq 0 ] && cmp -s "$tmp/i1" "$tmp/i3"'

# a result: what was run on what, its CPIs, detections, not stopped
ndet=$("$tools/h5shape" "$tmp/r.h5" --detections | wc -l)
"$bin" info "$tmp/r.h5" > "$tmp/ir" 2> "$tmp/e"
rc=$?
check "info RESULT: exit 0 ($rc), a result of run" '[ $rc -eq 0 ] && grep -q "^$tmp/r.h5: a result of .rtstap run." "$tmp/ir"'
check "  its input and what was run" 'grep -q "^  input: $tmp/cpi.h5" "$tmp/ir" &&
     grep -q "^  run: C=6 P=32 R=240  D=32 Q=3 S=2 K=60 B=3  post-doppler, segment training, window none, loading 0.01" "$tmp/ir"'
check "  one CPI, $ndet detections (> 0), not stopped" '[ "$ndet" -gt 0 ] && grep -q "^  CPIs: one" "$tmp/ir" &&
     grep -q "^  detections: $ndet by ca pfa=0.001" "$tmp/ir" && grep -q "^  stopped: no" "$tmp/ir"'
"$bin" info "$tmp/r.h5" --json - > "$tmp/ir.json" 2> /dev/null
check "info RESULT --json -: kind, cpis, detections, stopped" \
    '[ "$(json_get "$tmp/ir.json" "d[\"kind\"], d[\"cpis\"], d[\"detections\"], d[\"stopped\"], d[\"config\"][\"training\"]")" = "result 1 $ndet False 60" ]'
"$bin" info "$tmp/r.h5" --layout P,C,R > /dev/null 2> "$tmp/e"
check "info RESULT --layout: exit 2 (an input's option)" '[ $? -eq 2 ] && grep -q "is a result of" "$tmp/e"'

# a recording's result stopped by SIGTERM (the reader stalled before CPI 2): stopped, 2 CPIs
"$bin" gen --preset ward --channels 6 --pulses 32 --range-gates 240 --cpis 6 --seed 4 -o "$tmp/rec.h5" --quiet
mkdir -p "$tmp/sig"
RTSTAP_TEST_READER_STALL=2:8000 "$bin" run --input "$tmp/rec.h5" -o "$tmp/sig/o.h5" "${opts[@]}" 2> /dev/null &
pid=$!
for _ in $(seq 300); do ls -A "$tmp/sig" | grep -q tmp && break; sleep 0.1; done
sleep 2
kill -TERM $pid
wait $pid
rc=$?
"$bin" info "$tmp/sig/o.h5" > "$tmp/is" 2> /dev/null
check "info on a run stopped by SIGTERM ($rc): 2 CPIs, stopped" '[ $rc -eq 143 ] &&
     grep -q "^  CPIs: 2 run (a recording)" "$tmp/is" && ! grep -q "^  CPIs: one" "$tmp/is" && grep -q "^  stopped: yes, early: .*SIGTERM" "$tmp/is"'
"$bin" info "$tmp/sig/o.h5" --json "$tmp/is.json" > /dev/null 2>&1
check "  --json: stopped true, cpis 2" '[ "$(json_get "$tmp/is.json" "d[\"stopped\"], d[\"cpis\"], d[\"recording\"]")" = "True 2 True" ]'

# an unlabelled cube written (R, P, C): info warns in run's words, and says run refuses it
"$tools/relayout" "$tmp/cpi.h5" "$tmp/rpc.h5" R,P,C
"$bin" run --input "$tmp/rpc.h5" -o "$tmp/rpc_out.h5" "${opts[@]}" 2> "$tmp/run.err"
check "run on the (R, P, C) cube: refused" '[ $? -eq 1 ] && grep -q "look transposed" "$tmp/run.err"'
"$bin" info "$tmp/rpc.h5" > "$tmp/irpc" 2> "$tmp/info.err"
check "info on it: exit 0, the axes said to look transposed" '[ $? -eq 0 ] && grep -q "^  shape: 240 channels x 32 pulses x 6 range gates" "$tmp/irpc" &&
     grep -q "they look transposed: run refuses the file" "$tmp/irpc"'
check "  the warning is the message of run, word for word" \
    '[ "$(sed "s/^rtstap: error: //" "$tmp/run.err")" = "$(sed -n "s/^rtstap: warning: \(.*\) (run refuses it)$/\1/p" "$tmp/info.err")" ]'

# plot FILE: the input; plot RESULT: the result over the input its /config names
"$bin" plot "$tmp/cpi.h5" --output-dir "$tmp/p1" > /dev/null 2> "$tmp/e"
check "plot FILE: exit 0, the input's spectrum" '[ $? -eq 0 ] && [ -s "$tmp/p1/angle_doppler.png" ] && [ ! -e "$tmp/p1/range_doppler.png" ]'
"$bin" plot "$tmp/r.h5" --output-dir "$tmp/p2" > /dev/null 2> "$tmp/e"
check "plot RESULT: exit 0, its range-Doppler map over its input" '[ $? -eq 0 ] && [ -s "$tmp/p2/range_doppler.png" ] &&
     grep -q "drawn over its input $tmp/cpi.h5" "$tmp/e"'
"$bin" plot "$tmp/cpi.h5" "$tmp/r.h5" --output-dir "$tmp/p3" -h > /dev/null 2> "$tmp/e"
check "plot A B: exit 2" '[ $? -eq 2 ] && [ ! -e "$tmp/p3" ]'
"$bin" run -o "$tmp/syn.h5" --preset easy --backend cpu --quiet
"$bin" plot "$tmp/syn.h5" --output-dir "$tmp/p4" > /dev/null 2> "$tmp/e"
check "plot on the result of a synthetic run: exit 2, asks for the cube" '[ $? -eq 2 ] && grep -q "synthetic:easy: plot it with the cube it ran on" "$tmp/e"'

# ---- row 4: suggestions ----------------------------------------------------------------------
"$bin" rnu > "$tmp/o" 2> "$tmp/e"
check "rnu: exit 2, did you mean run?, one line" '[ $? -eq 2 ] && [ "$(cat "$tmp/e")" = "rtstap: error: unknown command '"'"'rnu'"'"'; did you mean run? (see rtstap --help)" ] && [ ! -s "$tmp/o" ]'
"$bin" ifno > /dev/null 2> "$tmp/e"
check "ifno: did you mean info?" '[ $? -eq 2 ] && grep -q "did you mean info?" "$tmp/e"'
"$bin" sigmf > /dev/null 2> "$tmp/e"
check "sigmf: its last word, import-sigmf" '[ $? -eq 2 ] && grep -q "did you mean import-sigmf?" "$tmp/e"'
"$bin" zzzzzz > /dev/null 2> "$tmp/e"
check "zzzzzz: no guess, the commands named in one line" '[ $? -eq 2 ] && [ "$(wc -l < "$tmp/e")" -eq 1 ] && grep -q "the commands are run, info, stream" "$tmp/e"'
"$bin" run --pfa 1e-3 -o "$tmp/x.h5" 2> "$tmp/e"
check "--pfa: did you mean --cfar-pfa?" '[ $? -eq 2 ] && grep -q "unknown option .--pfa.; did you mean --cfar-pfa?" "$tmp/e"'
"$bin" stream --train-doppler 2 2> "$tmp/e"
check "--train-doppler: its last words, --cfar-train-doppler" '[ $? -eq 2 ] && grep -q "did you mean --cfar-train-doppler?" "$tmp/e"'
"$bin" run --ebams 4 -o "$tmp/x.h5" 2> "$tmp/e"
check "--ebams (two letters swapped: one edit): did you mean --beams?" '[ $? -eq 2 ] && grep -q "did you mean --beams?" "$tmp/e"'

# ---- row 4: a file of another format given to run names its import command -----------------
printf '{"global": {"core:datatype": "ci16_le", "core:version": "1.0.0"}, "captures": [], "annotations": []}\n' > "$tmp/rec.sigmf-meta"
head -c 4096 /dev/zero > "$tmp/rec.sigmf-data"
cp "$tmp/rec.sigmf-meta" "$tmp/meta.json"
head -c 4096 /dev/zero > "$tmp/samples.bin"
for f in rec.sigmf-meta rec.sigmf-data meta.json; do
    "$bin" run --input "$tmp/$f" -o "$tmp/x.h5" 2> "$tmp/e"
    check "run --input $f: exit 1 naming import-sigmf" '[ $? -eq 1 ] && grep -q "is a SigMF recording, not an HDF5 file: convert it with .rtstap import-sigmf --meta " "$tmp/e"'
done
"$bin" run --input "$tmp/rec.sigmf-data" -o "$tmp/x.h5" 2> "$tmp/e"
check "  .sigmf-data: its .sigmf-meta named" 'grep -q -- "--meta $tmp/rec.sigmf-meta " "$tmp/e"'
"$bin" run --input "$tmp/samples.bin" -o "$tmp/x.h5" 2> "$tmp/e"
check "run --input a raw file: exit 1 naming import-raw" '[ $? -eq 1 ] && grep -q "is not an HDF5 file: raw interleaved samples convert with .rtstap import-raw --input $tmp/samples.bin" "$tmp/e"'
"$bin" run --input "$src/datasets/perfect/small_app_input.bin" -o "$tmp/x.h5" 2> "$tmp/e"
check "run --input a PERFECT input: exit 1 naming import-perfect" '[ $? -eq 1 ] && grep -q "is an input of the PERFECT suite.*rtstap import-perfect --size small --input-dir " "$tmp/e"'
"$bin" info "$tmp/rec.sigmf-meta" > /dev/null 2> "$tmp/e"
check "info on a SigMF file: names import-sigmf too" '[ $? -eq 1 ] && grep -q "import-sigmf" "$tmp/e"'
"$bin" run --input "$tmp/none.h5" -o "$tmp/x.h5" 2> "$tmp/e"
check "a missing file: the system's words, no import named" '[ $? -eq 1 ] && grep -q "No such file" "$tmp/e" && ! grep -q import "$tmp/e"'
check "no output written by the refusals" '[ ! -e "$tmp/x.h5" ]'
exit $fail
